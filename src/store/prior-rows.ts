/**
 * The stored versions of a batch's records, read once by the load transaction just before its
 * upsert replaces them (src/pipeline/load-transaction.ts), with the columns the after-load jobs
 * declared: every job reads the batch's priors from its change set, none reads them again.
 */
import type { Knex } from 'knex';
import type { SpecRecord } from '../types.js';
import { dialectOf } from './dialect/index.js';
import { batchKey } from './rows.js';
import type { EntityTable } from './tables.js';

/** A row's key as batchKey gives it for a record: dates as their day, whatever the driver returns (`dates`: the table's date columns). */
function storedKey(table: EntityTable, dates: ReadonlySet<string>, row: Record<string, unknown>): string {
  const values: Record<string, unknown> = {};
  for (const k of table.key) values[k] = dates.has(k) ? String(row[k]).slice(0, 10) : row[k];
  return batchKey(table, values);
}

/**
 * Adds to `into` the stored rows of the records' keys that it does not hold yet (the first read of
 * a key wins: the version stored before the transaction's batches), with `columns` and the key.
 */
export async function readPriorRows(trx: Knex.Transaction, table: EntityTable, partner: string, records: readonly SpecRecord[], columns: readonly string[], into: Map<string, Record<string, unknown>>): Promise<void> {
  const wanted = new Set<string>();
  for (const r of records) {
    const key = batchKey(table, r);
    if (!into.has(key)) wanted.add(key);
  }
  if (wanted.size === 0) return;
  const select = [...new Set([...table.key, ...columns])];
  const dialect = dialectOf(trx);
  const dates = new Set(table.columns.filter((c) => c.kind === 'date').map((c) => c.name));
  const add = (rows: Record<string, unknown>[]) => {
    for (const row of rows) {
      const key = storedKey(table, dates, row);
      if (wanted.has(key) && !into.has(key)) into.set(key, row);
    }
  };
  if (table.key.length === 1) {
    const column = table.key[0] as string;
    for (const part of dialect.chunks([...wanted], { form: 'inList' })) add(await trx(table.name).where('partner_id', partner).modify(dialect.inList(column, part)).select(...select));
    return;
  }
  // An activity key (date, customer, ...): the records' customers on the records' days, the rest compared here.
  const customers = [...new Set(records.map((r) => String(r.customer_id)))];
  const days = [...new Set(records.map((r) => String(r.date).slice(0, 10)))];
  for (const part of dialect.chunks(customers, { form: 'inList', otherValues: days.length + 1 })) {
    add(await trx(table.name).where('partner_id', partner).modify(dialect.inList('customer_id', part)).whereIn('date', days).select(...select));
  }
}
