/**
 * The old side of a changed transaction. The scope of a batch is built from what it writes, so a
 * transaction re-sent with another customer, type or date would leave the customer and the
 * customer-day it used to count for untouched: a deposit moved to another customer paid CPA to
 * both, a bonus moved to another day kept its deduction on the old day. Before the batch's
 * upsert overwrites them, the stored versions of its transaction ids are read (shared with the
 * report facts: src/store/stored-transactions.ts) and the old customer, old bonus day and former fee join the scope.
 */
import type { Knex } from 'knex';
import type { SpecRecord } from '../types.js';
import { fromStoreTimestamp } from '../store/values.js';
import { utcDay } from '../kernel/dates.js';
import { addDay, type Scope } from './scope.js';
import { FEE_TYPES } from './rules/challenge-cpa.js';
import { storedTransactions } from '../store/stored-transactions.js';

/** Adds to `scope` the stored customer (and bonus day) of each record whose stored version differs in customer, type or day. */
export async function addPriorVersions(trx: Knex.Transaction, scope: Scope, records: readonly SpecRecord[]): Promise<void> {
  const incoming = new Map<string, SpecRecord>();
  for (const r of records) incoming.set(String(r.transaction_id), r);
  // Read once per batch with the report facts (src/store/stored-transactions.ts).
  const rows = (await storedTransactions(trx, scope.partner, records)) as { transaction_id: string; customer_id: string; transaction_type: string; transaction_date: unknown }[];
  for (const old of rows) {
    const next = incoming.get(String(old.transaction_id));
    if (!next) continue;
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
