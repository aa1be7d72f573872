/**
 * The mass-delete guard's tables (migration 030): deletes held instead of applied, what an
 * operator decided about them, and the counts the guard judges by. The guard itself (which share
 * of what) is src/pipeline/delete-guard.ts; this module owns the SQL.
 */
import type { Knex } from 'knex';
import type { Variant } from '../types.js';
import { dialectOf } from './dialect/index.js';
import { entityTable } from './tables.js';
import { fromStoreTimestamp } from './values.js';
import type { LearnedVia } from './tombstones.js';

export type HoldState = 'held' | 'applied' | 'discarded';

export interface DeleteHold {
  id: number;
  partner: string;
  variant: Variant;
  entity: 'customers' | 'transactions';
  learnedVia: LearnedVia;
  /** What the guard counted over: a run id, or `push:YYYY-MM-DD` for the pushed deletes of a UTC day. */
  scope: string;
  runId: string | null;
  heldAt: string;
  reason: string;
  ids: string[];
  state: HoldState;
  decidedAt: string | null;
  decidedBy: string | null;
  /** What applying did (deleted, came back since, already deleted, unknown), once applied. */
  outcome: Record<string, unknown> | null;
  alertedAt: string | null;
}

const json = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

function toHold(row: Record<string, unknown>): DeleteHold {
  return {
    id: Number(row.id), partner: String(row.partner_id), variant: row.variant as Variant, entity: row.entity as DeleteHold['entity'],
    learnedVia: row.learned_via as LearnedVia, scope: String(row.scope), runId: row.run_id === null ? null : String(row.run_id),
    heldAt: fromStoreTimestamp(row.held_at) ?? '', reason: String(row.reason), ids: json(row.ids) as string[], state: row.state as HoldState,
    decidedAt: fromStoreTimestamp(row.decided_at), decidedBy: row.decided_by === null ? null : String(row.decided_by),
    outcome: row.outcome === null ? null : (json(row.outcome) as Record<string, unknown>), alertedAt: fromStoreTimestamp(row.alerted_at),
  };
}

/** The hold still open for this scope of the partner's entity, if any. */
export async function openHold(trx: Knex.Transaction, partner: string, entity: string, scope: string): Promise<DeleteHold | undefined> {
  const row = (await trx('delete_holds').where({ partner_id: partner, entity, scope, state: 'held' }).orderBy('id').first()) as Record<string, unknown> | undefined;
  return row ? toHold(row) : undefined;
}

export interface NewHold {
  partner: string;
  variant: Variant;
  entity: 'customers' | 'transactions';
  learnedVia: LearnedVia;
  scope: string;
  runId: string;
  reason: string;
  ids: readonly string[];
  now: string;
}

/** Holds these ids: a new hold, or more ids for the scope's open one. Returns the hold's id. */
export async function holdDeletes(trx: Knex.Transaction, h: NewHold): Promise<number> {
  const open = await openHold(trx, h.partner, h.entity, h.scope);
  if (open) {
    const ids = [...new Set([...open.ids, ...h.ids])];
    await trx('delete_holds').where('id', open.id).update({ ids: JSON.stringify(ids), count: ids.length });
    return open.id;
  }
  const ids = [...new Set(h.ids)];
  const [row] = (await trx('delete_holds').insert({
    partner_id: h.partner, variant: h.variant, entity: h.entity, learned_via: h.learnedVia, scope: h.scope, run_id: h.runId, held_at: h.now,
    reason: h.reason, ids: JSON.stringify(ids), count: ids.length, state: 'held',
  }).returning('id')) as { id: unknown }[];
  return Number(row?.id);
}

/** Holds of a partner (or of every partner), newest first; by state when asked. */
export async function listHolds(knex: Knex, filter: { partner?: string; state?: HoldState; id?: number } = {}): Promise<DeleteHold[]> {
  const q = knex('delete_holds').orderBy('id', 'desc').select('*');
  if (filter.partner) q.where('partner_id', filter.partner);
  if (filter.state) q.where('state', filter.state);
  if (filter.id !== undefined) q.where('id', filter.id);
  return ((await q) as Record<string, unknown>[]).map(toHold);
}

/** Closes a held hold as applied or discarded; false when it was not held any more (decided by someone else). */
export async function decideHold(trx: Knex.Transaction, id: number, d: { state: Exclude<HoldState, 'held'>; by: string; now: string; outcome?: Record<string, unknown> }): Promise<boolean> {
  const n = await trx('delete_holds').where({ id, state: 'held' }).update({ state: d.state, decided_by: d.by, decided_at: d.now, outcome: d.outcome === undefined ? null : JSON.stringify(d.outcome) });
  return Number(n) > 0;
}

/** Open holds no alert has gone out for yet; marks them alerted in the same statement's transaction. */
export async function takeUnalerted(knex: Knex, now: string): Promise<DeleteHold[]> {
  return knex.transaction(async (trx) => {
    const rows = ((await trx('delete_holds').where('state', 'held').whereNull('alerted_at').orderBy('id').select('*')) as Record<string, unknown>[]).map(toHold);
    if (rows.length > 0) await trx('delete_holds').whereIn('id', rows.map((r) => r.id)).update({ alerted_at: now });
    return rows;
  });
}

/** Per partner and entity: records held (open holds) and tombstones written (not those that went with a customer). */
export async function deleteFigures(knex: Knex, partner?: string): Promise<{ partner: string; entity: string; applied: number; held: number; holds: number; discarded: number }[]> {
  const tomb = knex('tombstones').whereNull('cascade_of').groupBy('partner_id', 'entity').select('partner_id', 'entity').count({ n: '*' });
  const holds = knex('delete_holds').groupBy('partner_id', 'entity', 'state').select('partner_id', 'entity', 'state').count({ n: '*' }).sum({ records: 'count' });
  if (partner) {
    tomb.where('partner_id', partner);
    holds.where('partner_id', partner);
  }
  const out = new Map<string, { partner: string; entity: string; applied: number; held: number; holds: number; discarded: number }>();
  const at = (p: string, e: string) => {
    const key = `${p}\u0000${e}`;
    let v = out.get(key);
    if (!v) out.set(key, (v = { partner: p, entity: e, applied: 0, held: 0, holds: 0, discarded: 0 }));
    return v;
  };
  for (const r of (await tomb) as { partner_id: string; entity: string; n: unknown }[]) at(r.partner_id, r.entity).applied = Number(r.n);
  for (const r of (await holds) as { partner_id: string; entity: string; state: string; n: unknown; records: unknown }[]) {
    const v = at(r.partner_id, r.entity);
    if (r.state === 'held') {
      v.held += Number(r.records);
      v.holds += Number(r.n);
    } else if (r.state === 'discarded') v.discarded += Number(r.records);
  }
  return [...out.values()].sort((a, b) => a.partner.localeCompare(b.partner) || a.entity.localeCompare(b.entity));
}

/** The business day of each live record of these ids (a customer's signup day, a transaction's day). */
export async function liveDays(trx: Knex.Transaction, partner: string, variant: Variant, entity: 'customers' | 'transactions', ids: readonly string[]): Promise<Map<string, string>> {
  const table = entityTable(variant, entity);
  const [idColumn, dayColumn] = entity === 'customers' ? ['customer_id', 'signup_date'] : ['transaction_id', 'transaction_date'];
  const out = new Map<string, string>();
  for (const part of dialectOf(trx).chunks([...new Set(ids)], 500)) {
    const rows = (await trx(table.name).where('partner_id', partner).whereIn(idColumn as string, part).select(idColumn as string, dayColumn as string)) as Record<string, unknown>[];
    for (const r of rows) out.set(String(r[idColumn as string]), (fromStoreTimestamp(r[dayColumn as string]) ?? '').slice(0, 10));
  }
  return out;
}

/** Where the guard's scope is: a run's own tombstones, or the pushed ones of a UTC day. */
function inScope(q: Knex.QueryBuilder, scope: string): Knex.QueryBuilder {
  if (scope.startsWith('push:')) {
    const day = scope.slice(5);
    return q.where('learned_via', 'push').where('learned_at', '>=', `${day}T00:00:00.000000Z`).where('learned_at', '<=', `${day}T23:59:59.999999Z`);
  }
  return q.where('run_id', scope);
}

/** The partner's live customers, and those the scope deleted already. */
export async function customerBase(trx: Knex.Transaction, partner: string, variant: Variant, scope: string): Promise<{ live: number; deleted: number }> {
  const live = (await trx(entityTable(variant, 'customers').name).where('partner_id', partner).count({ n: '*' }).first()) as { n: unknown };
  const deleted = (await inScope(trx('tombstones').where({ partner_id: partner, entity: 'customers' }).whereNull('cascade_of'), scope).count({ n: '*' }).first()) as { n: unknown };
  return { live: Number(live.n), deleted: Number(deleted.n) };
}

/** Per day asked: the partner's live transactions of the day, and those of the day the scope deleted already. */
export async function transactionBase(trx: Knex.Transaction, partner: string, variant: Variant, scope: string, days: readonly string[]): Promise<Map<string, { live: number; deleted: number }>> {
  const out = new Map<string, { live: number; deleted: number }>();
  const table = entityTable(variant, 'transactions').name;
  for (const day of days) {
    const live = (await trx(table).where('partner_id', partner).where('transaction_date', '>=', `${day}T00:00:00.000000Z`).where('transaction_date', '<=', `${day}T23:59:59.999999Z`).count({ n: '*' }).first()) as { n: unknown };
    out.set(day, { live: Number(live.n), deleted: 0 });
  }
  for (const part of dialectOf(trx).chunks(days, 500)) {
    const rows = (await inScope(trx('tombstones').where({ partner_id: partner, entity: 'transactions' }).whereNull('cascade_of').whereIn('record_day', part), scope).groupBy('record_day').select('record_day').count({ n: '*' })) as { record_day: string; n: unknown }[];
    for (const r of rows) {
      const v = out.get(r.record_day);
      if (v) v.deleted = Number(r.n);
    }
  }
  return out;
}

export interface DeleteCandidate {
  id: string;
  day: string;
  firstSeenAt: string;
  scans: number;
}

/** The entity's keys an earlier reconcile scan found missing at the source, of the days from..to. */
export async function candidatesOf(trx: Knex.Transaction, partner: string, entity: string, from: string, to: string): Promise<Map<string, DeleteCandidate>> {
  const rows = (await trx('delete_candidates').where({ partner_id: partner, entity }).where('day', '>=', from).where('day', '<=', to).select('*')) as Record<string, unknown>[];
  return new Map(rows.map((r) => [String(r.record_id), { id: String(r.record_id), day: String(r.day), firstSeenAt: fromStoreTimestamp(r.first_seen_at) ?? '', scans: Number(r.scans) }]));
}

/** Replaces the entity's candidates of the days from..to with these (ids the scan found missing, and how many scans in a row have). */
export async function replaceCandidates(trx: Knex.Transaction, partner: string, entity: string, from: string, to: string, next: readonly DeleteCandidate[]): Promise<void> {
  await trx('delete_candidates').where({ partner_id: partner, entity }).where('day', '>=', from).where('day', '<=', to).delete();
  const rows = next.map((c) => ({ partner_id: partner, entity, record_id: c.id, day: c.day, first_seen_at: c.firstSeenAt, scans: c.scans }));
  for (const part of dialectOf(trx).insertChunks(rows)) await trx('delete_candidates').insert(part);
}
