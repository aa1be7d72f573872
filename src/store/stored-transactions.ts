/**
 * The stored versions of a batch's transactions, as they are before the batch's upsert replaces
 * them. Two after-load jobs read them in the Loader's `beforeWrite` (the report facts take out
 * what the old versions counted in; the commission job scopes the customer, bonus day or fee they
 * used to count for): the read is made once per batch and load transaction and shared, since it
 * was about a second of a month's import each.
 */
import type { Knex } from 'knex';
import type { SpecRecord } from '../types.js';
import { dialectOf } from './dialect/index.js';

/** The columns read: what either job needs of a stored transaction. */
export const STORED_TRANSACTION_COLUMNS = ['transaction_id', 'customer_id', 'transaction_date', 'transaction_type', 'status', 'amount_currency', 'currency', 'amount_usd'] as const;

const reads = new WeakMap<Knex.Transaction, WeakMap<readonly SpecRecord[], Promise<Record<string, unknown>[]>>>();

/**
 * The stored rows of the transaction ids of `records` (a batch, as the Loader hands it to every
 * `beforeWrite` hook): read on the first call for this transaction and batch, shared by the next.
 */
export function storedTransactions(trx: Knex.Transaction, partner: string, records: readonly SpecRecord[]): Promise<Record<string, unknown>[]> {
  let byBatch = reads.get(trx);
  if (!byBatch) reads.set(trx, (byBatch = new WeakMap()));
  let read = byBatch.get(records);
  if (!read) byBatch.set(records, (read = readStored(trx, partner, [...new Set(records.map((r) => String(r.transaction_id)))])));
  return read;
}

async function readStored(trx: Knex.Transaction, partner: string, ids: readonly string[]): Promise<Record<string, unknown>[]> {
  const dialect = dialectOf(trx);
  const out: Record<string, unknown>[] = [];
  for (const part of dialect.chunks(ids, { form: 'inList' })) {
    const rows: Record<string, unknown>[] = await trx('transactions').where('partner_id', partner)
      .modify(dialect.inList('transaction_id', part)).select(...STORED_TRANSACTION_COLUMNS);
    for (const r of rows) out.push(r);
  }
  return out;
}
