/**
 * The old side of a changed transaction. The scope of a batch is built from what it writes, so a
 * transaction re-sent with another customer, type or date would leave the customer and the
 * customer-day it used to count for untouched: a deposit moved to another customer paid CPA to
 * both, a bonus moved to another day kept its deduction on the old day. Before the batch's
 * upsert overwrites them, the load transaction reads the stored versions of its transaction ids
 * once for every job (the batch's change set), and the old customer, old bonus day and former fee join the scope.
 */
import type { SpecRecord } from '../types.js';
import { fromStoreTimestamp } from '../store/values.js';
import { utcDay } from '../kernel/dates.js';
import { addDay, type Scope } from './scope.js';
import { FEE_TYPES } from './rules/challenge-cpa.js';

/** The stored columns of a replaced transaction this reads (the load transaction reads them once for every job). */
export const PRIOR_TRANSACTION_COLUMNS = ['customer_id', 'transaction_type', 'transaction_date'] as const;

/** Adds to `scope` the stored customer (and bonus day) of each written record whose stored version differed in customer, type or day. */
export function addPriorVersions(scope: Scope, written: readonly SpecRecord[], stored: ReadonlyMap<string, Record<string, unknown>>): void {
  if (stored.size === 0) return;
  for (const next of written) {
    const old = stored.get(String(next.transaction_id)) as { transaction_id: string; customer_id: string; transaction_type: string; transaction_date: unknown } | undefined;
    if (!old) continue;
    const oldDay = (fromStoreTimestamp(old.transaction_date) as string).slice(0, 10);
    const sameCustomer = String(next.customer_id) === String(old.customer_id);
    if (sameCustomer && String(next.transaction_type) === old.transaction_type && utcDay(String(next.transaction_date)) === oldDay) continue;
    scope.customers.add(String(old.customer_id));
    // Only a bonus counts in a customer-day (NGR); its old day loses it.
    if (old.transaction_type === 'bonus') addDay(scope, String(old.customer_id), oldDay);
    // A fee's key is its transaction: if it stops being a fee, nothing else would evaluate that key.
    if ((FEE_TYPES as readonly string[]).includes(old.transaction_type)) scope.formerFees.set(String(old.transaction_id), String(old.customer_id));
  }
}
