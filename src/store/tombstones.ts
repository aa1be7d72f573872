/**
 * Tombstones (migration 029): what a delete learned at the source leaves. Deleting moves the live
 * row into `tombstones`, in the caller's load transaction, so the row leaves every list, report
 * cell, funnel and export without their queries knowing of deletes, and is kept whole for the
 * audit. A customer takes its transactions and activity with it (their tombstones name the
 * customer's in `cascade_of`), because what hangs from it earns nothing without it. A record sent
 * again is a new version in the live table; its tombstones stay as history.
 */
import type { Knex } from 'knex';
import type { Entity, SpecRecord, Variant } from '../types.js';
import { rawRows } from './dialects.js';
import { dialectOf } from './dialect/index.js';
import { recordKey, storedToRecord } from './rows.js';
import { entityTable, VERSION_COLUMN, type EntityTable } from './tables.js';
import { setMeta } from './record-meta.js';
import { fromStoreDate, fromStoreTimestamp } from './values.js';

/** How a delete was learned. */
export type LearnedVia = 'push' | 'soft_delete' | 'rest_flag' | 'deleted_list' | 'reconcile';

/** One tombstone written: which row it holds and what it went with. */
export interface TombstoneRef {
  id: number;
  entity: Entity;
  /** recordKey of the row (src/store/rows.ts). */
  key: string;
  customerId: string;
  /** The deleted customer's tombstone this row went with. */
  cascadeOf: number | null;
}

export interface Removal {
  partner: string;
  variant: Variant;
  entity: 'customers' | 'transactions';
  /** Ids of the entity (customer ids, transaction ids). */
  ids: readonly string[];
  learnedVia: LearnedVia;
  runId: string;
  now: string;
}

export interface Removed {
  /** The live rows moved out, per entity, as the store held them. */
  rows: Record<Entity, Record<string, unknown>[]>;
  tombstones: TombstoneRef[];
  /** Ids asked for that have no live row but a tombstone (deleted before). */
  alreadyDeleted: string[];
  /** Ids asked for that the store never held (nothing live, deleted or waiting). */
  unknown: string[];
  /**
   * Records waiting for their customer that the delete discarded: a deleted transaction still
   * waiting, or what waited for a deleted customer (it would otherwise load when the customer does).
   */
  waiting: number;
}

/** A row's business day as the guard counts it (tombstones.record_day). */
export function rowDay(entity: string, row: Record<string, unknown>): string | null {
  if (entity === 'activity') return fromStoreDate(row.date);
  const value = entity === 'customers' ? row.signup_date : row.transaction_date;
  return fromStoreTimestamp(value)?.slice(0, 10) ?? null;
}

/** The row as JSON: its spec fields (as a record reads) and its lineage. */
function rowJson(table: EntityTable, row: Record<string, unknown>): string {
  return JSON.stringify({ ...storedToRecord(table, row), ...(row[VERSION_COLUMN] !== null && row[VERSION_COLUMN] !== undefined ? { [VERSION_COLUMN]: String(row[VERSION_COLUMN]) } : {}), run_id: row.run_id ?? null, loaded_at: fromStoreTimestamp(row.loaded_at) });
}

async function insertTombstone(trx: Knex.Transaction, r: Removal, table: EntityTable, row: Record<string, unknown>, cascadeOf: number | null): Promise<TombstoneRef> {
  const key = recordKey(table, storedToRecord(table, row));
  const customerId = String(row.customer_id);
  const [inserted] = rawRows<{ id: unknown }>(await trx.raw(
    `INSERT INTO tombstones (partner_id, variant, entity, record_key, customer_id, learned_via, learned_at, run_id, cascade_of, row, record_day) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    [r.partner, r.variant, table.entity, key, customerId, r.learnedVia, r.now, r.runId, cascadeOf, rowJson(table, row), rowDay(table.entity, row)]));
  return { id: Number(inserted?.id), entity: table.entity, key, customerId, cascadeOf };
}

/** Moves the rows of `where` out of `table` into tombstones (each one naming `cascadeOf`). */
async function moveRows(trx: Knex.Transaction, r: Removal, table: EntityTable, rows: readonly Record<string, unknown>[], cascadeOf: (row: Record<string, unknown>) => number | null, out: Removed): Promise<void> {
  for (const row of rows) {
    out.tombstones.push(await insertTombstone(trx, r, table, row, cascadeOf(row)));
    out.rows[table.entity].push(row);
  }
  const dialect = dialectOf(trx);
  const key = table.key;
  for (const part of dialect.chunks(rows, 200)) {
    // One DELETE per part, by the table key.
    const where = part.map(() => `(${key.map((k) => `${k} = ?`).join(' AND ')})`).join(' OR ');
    await trx.raw(`DELETE FROM ${table.name} WHERE partner_id = ? AND (${where})`, [r.partner, ...part.flatMap((row) => key.map((k) => row[k] as Knex.Value))]);
  }
}

/**
 * Deletes these customers or transactions of the partner: their live rows go to tombstones; a
 * customer's transactions and activity go with it. Ids without a live row are told apart: deleted
 * before (a tombstone holds them) or never stored.
 */
export async function removeRecords(trx: Knex.Transaction, r: Removal): Promise<Removed> {
  const out: Removed = { rows: { customers: [], transactions: [], activity: [] }, tombstones: [], alreadyDeleted: [], unknown: [], waiting: 0 };
  const table = entityTable(r.variant, r.entity);
  const idColumn = table.key[0] as string;
  const live: Record<string, unknown>[] = [];
  for (const part of dialectOf(trx).chunks([...new Set(r.ids)], 500)) live.push(...(await trx(table.name).where('partner_id', r.partner).whereIn(idColumn, part).select('*')) as Record<string, unknown>[]);
  const found = new Set(live.map((row) => String(row[idColumn])));
  const parked = await dropWaiting(trx, r);
  out.waiting = parked.count;
  const missing = r.ids.filter((id) => !found.has(id) && !parked.ids.has(id));
  const before = await deletedBefore(trx, r.partner, r.entity, missing);
  for (const id of missing) (before.has(id) ? out.alreadyDeleted : out.unknown).push(id);
  if (live.length === 0) return out;
  await moveRows(trx, r, table, live, () => null, out);
  if (r.entity !== 'customers') return out;
  // What hangs from the customers goes with them, each naming its customer's tombstone.
  const customerTombstone = new Map(out.tombstones.map((t) => [t.customerId, t.id]));
  const ids = [...customerTombstone.keys()];
  for (const entity of ['transactions', 'activity'] as const) {
    const t = entityTable(r.variant, entity);
    const rows: Record<string, unknown>[] = [];
    for (const part of dialectOf(trx).chunks(ids, 500)) rows.push(...(await trx(t.name).where('partner_id', r.partner).whereIn('customer_id', part).select('*')) as Record<string, unknown>[]);
    await moveRows(trx, r, t, rows, (row) => customerTombstone.get(String(row.customer_id)) ?? null, out);
  }
  return out;
}

/** Drops the waiting records the removal names: transactions by key, or whatever waits for the customers. */
async function dropWaiting(trx: Knex.Transaction, r: Removal): Promise<{ count: number; ids: Set<string> }> {
  const ids = new Set<string>();
  let count = 0;
  const column = r.entity === 'customers' ? 'customer_id' : 'record_key';
  for (const part of dialectOf(trx).chunks([...new Set(r.ids)], 500)) {
    const q = trx('waiting_records').where('partner_id', r.partner).whereIn(column, part);
    if (r.entity === 'transactions') q.where('entity', 'transactions');
    const rows = (await q.clone().select(column)) as Record<string, string>[];
    if (rows.length === 0) continue;
    for (const row of rows) ids.add(String(row[column]));
    count += rows.length;
    await q.delete();
  }
  return { count, ids };
}

/** Which of these ids of the entity a tombstone holds. */
async function deletedBefore(trx: Knex.Transaction, partner: string, entity: Entity, ids: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const part of dialectOf(trx).chunks(ids, 500)) {
    const rows = (await trx('tombstones').where({ partner_id: partner, entity }).whereIn('record_key', part).distinct('record_key')) as { record_key: string }[];
    for (const row of rows) out.add(row.record_key);
  }
  return out;
}

/**
 * A deleted customer sent again comes back whole: the transactions and activity rows that went
 * with it (its tombstones' `cascade_of`) are handed back to be written with it, at the version
 * they had, unless written again since (the caller's versions decide). Their tombstones, and the
 * customer's, are marked restored (they stay as history). One probe per call while the partner
 * has no customer tombstone not restored.
 */
export async function takeCascade(trx: Knex.Transaction, partner: string, variant: Variant, customerIds: readonly string[], now: string): Promise<{ transactions: SpecRecord[]; activity: SpecRecord[] }> {
  const out: { transactions: SpecRecord[]; activity: SpecRecord[] } = { transactions: [], activity: [] };
  if (customerIds.length === 0) return out;
  const any = await trx('tombstones').where({ partner_id: partner, entity: 'customers' }).whereNull('restored_at').first('id');
  if (!any) return out;
  for (const part of dialectOf(trx).chunks([...new Set(customerIds)], 500)) {
    const customers = (await trx('tombstones').where({ partner_id: partner, entity: 'customers' }).whereNull('restored_at').whereIn('record_key', part).select('id')) as { id: unknown }[];
    if (customers.length === 0) continue;
    const ids = customers.map((c) => Number(c.id));
    const rows = (await trx('tombstones').whereIn('cascade_of', ids).whereNull('restored_at').orderBy('id').select('id', 'entity', 'row')) as { id: unknown; entity: Entity; row: unknown }[];
    for (const r of rows) {
      if (r.entity !== 'transactions' && r.entity !== 'activity') continue;
      const stored = (typeof r.row === 'string' ? JSON.parse(r.row) : r.row) as Record<string, unknown>;
      const version = stored[VERSION_COLUMN];
      const record = Object.fromEntries(Object.entries(stored).filter(([k]) => k !== 'run_id' && k !== 'loaded_at' && k !== VERSION_COLUMN)) as SpecRecord;
      if (typeof version === 'string') setMeta(record, { position: 0, version });
      out[r.entity].push(record);
    }
    const restored = [...ids, ...rows.map((r) => Number(r.id))];
    for (const chunk of dialectOf(trx).chunks(restored, 500)) await trx('tombstones').whereIn('id', chunk).update({ restored_at: now });
  }
  return out;
}

export interface Tombstone {
  id: number;
  partner: string;
  variant: Variant;
  entity: Entity;
  recordKey: string;
  customerId: string;
  learnedVia: string;
  learnedAt: string;
  runId: string | null;
  cascadeOf: number | null;
  row: Record<string, unknown>;
}

/** A partner's tombstones, oldest first (optionally of one customer). */
export async function listTombstones(knex: Knex, partner: string, filter: { customer?: string } = {}): Promise<Tombstone[]> {
  const q = knex('tombstones').where('partner_id', partner).orderBy('id').select('*');
  if (filter.customer) q.where('customer_id', filter.customer);
  const rows = (await q) as Record<string, unknown>[];
  return rows.map((row) => ({
    id: Number(row.id), partner: String(row.partner_id), variant: row.variant as Variant, entity: row.entity as Entity, recordKey: String(row.record_key),
    customerId: String(row.customer_id), learnedVia: String(row.learned_via), learnedAt: fromStoreTimestamp(row.learned_at) ?? '',
    runId: row.run_id === null ? null : String(row.run_id), cascadeOf: row.cascade_of === null ? null : Number(row.cascade_of),
    row: (typeof row.row === 'string' ? JSON.parse(row.row) : row.row) as Record<string, unknown>,
  }));
}
