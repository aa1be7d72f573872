/**
 * The old side of a changed transaction. The scope of a batch is built from what it writes, so a
 * transaction re-sent with another customer, type or date would leave the customer and the
 * customer-day it used to count for untouched: a deposit moved to another customer paid CPA to
 * both, a bonus moved to another day kept its deduction on the old day. Before the batch's
 * upsert overwrites them, the stored versions of its transaction ids are read (one indexed query
 * per 500 ids on the primary key; on PostgreSQL one per batch, the ids as an array) and the old customer, old bonus day and former fee join the scope.
 */
import type { Knex } from 'knex';
import type { SpecRecord } from '../types.js';
import { fromStoreTimestamp } from '../store/values.js';
import { utcDay } from '../kernel/dates.js';
import { addDay, type Scope } from './scope.js';
import { FEE_TYPES } from './rules/challenge-cpa.js';

const CHUNK = 500;

/** Adds to `scope` the stored customer (and bonus day) of each record whose stored version differs in customer, type or day. */
export async function addPriorVersions(trx: Knex.Transaction, scope: Scope, records: readonly SpecRecord[]): Promise<void> {
  const incoming = new Map<string, SpecRecord>();
  for (const r of records) incoming.set(String(r.transaction_id), r);
  const ids = [...incoming.keys()];
  // PostgreSQL: the batch's ids as one array parameter (planning 500 placeholders cost as much as the probes).
  const pg = trx.client.config.client === 'pg';
  const chunk = pg ? Math.max(1, ids.length) : CHUNK;
  for (let i = 0; i < ids.length; i += chunk) {
    const part = ids.slice(i, i + chunk);
    const rows: { transaction_id: string; customer_id: string; transaction_type: string; transaction_date: unknown }[] = await trx('transactions')
      .where('partner_id', scope.partner)
      .modify((q) => (pg ? q.whereRaw('transaction_id = ANY(?::text[])', [part]) : q.whereIn('transaction_id', part)))
      .select('transaction_id', 'customer_id', 'transaction_type', 'transaction_date');
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
}
