/**
 * The outbox's delivery state, in the store. An event is claimed by one process at a time with a
 * lease: one UPDATE that picks the due events of a postback and stamps them with a lease token
 * and an expiry. PostgreSQL picks them with FOR UPDATE SKIP LOCKED, so processes sharing the
 * store never claim the same row; SQLite has one writer, so the same statement is atomic there.
 * A process killed mid-delivery leaves a lease that expires: the event is claimed again and sent
 * again with the same event id (at least once). Results are written only under the lease that
 * claimed the row. An event is not claimed while an earlier event of its order key (a customer)
 * is still pending or retrying: events of one customer arrive in order.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Store } from '../store/store.js';
import { fromStoreTimestamp } from '../store/values.js';
import { rawRows } from '../store/dialects.js';

export type EventState = 'pending' | 'retrying' | 'delivered' | 'dead';
export const UNSETTLED: readonly EventState[] = ['pending', 'retrying'];

export interface ClaimedEvent {
  seq: number;
  eventId: string;
  postbackId: string;
  kind: string;
  orderKey: string;
  data: Record<string, unknown>;
  attempts: number;
  windowStart: string;
  createdAt: string;
  leaseToken: string;
}

/** A time as the store keeps it (the format of Store.now()). */
export const storeTime = (ms: number): string => new Date(ms).toISOString().replace('Z', '000Z');

/** Due, not leased, and no earlier event of its order key unsettled (`e` is the candidate). */
const CLAIMABLE = `e.state IN ('pending', 'retrying') AND e.next_attempt_at <= ? AND (e.lease_until IS NULL OR e.lease_until < ?)
  AND NOT EXISTS (SELECT 1 FROM postback_events p WHERE p.postback_id = e.postback_id AND p.order_key = e.order_key AND p.seq < e.seq AND p.state IN ('pending', 'retrying'))`;

/** The postbacks with due events not leased now (at most `limit`). */
export async function duePostbacks(knex: Knex, now: string, limit: number): Promise<string[]> {
  // A paused postback (a manager's decision) is not claimed: its events wait, none is lost.
  const rows = (await knex.raw(`SELECT DISTINCT e.postback_id FROM postback_events e WHERE ${CLAIMABLE} AND e.postback_id NOT IN (SELECT id FROM postbacks WHERE paused_at IS NOT NULL) LIMIT ?`, [now, now, limit])) as unknown;
  return rawRows<Record<string, unknown>>(rows).map((r) => String(r.postback_id));
}


/** Leases up to `limit` due events of one postback, the first unsettled one of each order key. */
export async function claim(store: Store, postbackId: string, limit: number, leaseMs: number): Promise<ClaimedEvent[]> {
  const nowMs = store.clock().getTime();
  const now = storeTime(nowMs);
  const token = randomUUID();
  const sql = `UPDATE postback_events SET lease_until = ?, lease_token = ? WHERE seq IN (
    SELECT e.seq FROM postback_events e WHERE e.postback_id = ? AND ${CLAIMABLE}
    ORDER BY e.seq LIMIT ? ${store.dialect.skipLocked}) RETURNING seq, event_id, postback_id, kind, order_key, data, attempts, window_start, created_at`;
  const rows = rawRows<Record<string, unknown>>(await store.knex.raw(sql, [storeTime(nowMs + leaseMs), token, postbackId, now, now, limit]));
  return rows.map((r) => ({
    seq: Number(r.seq), eventId: String(r.event_id), postbackId: String(r.postback_id), kind: String(r.kind), orderKey: String(r.order_key),
    data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>, attempts: Number(r.attempts),
    windowStart: fromStoreTimestamp(r.window_start) ?? now, createdAt: fromStoreTimestamp(r.created_at) ?? now, leaseToken: token,
  })).sort((a, b) => a.seq - b.seq);
}

export interface AttemptOutcome {
  status: number | null;
  error: string | null;
  /** delivered, or the next attempt's time, or dead. */
  next: { state: 'delivered' } | { state: 'retrying'; at: string } | { state: 'dead' };
}

/** Writes an attempt's outcome under the lease that claimed the event; false when the lease was lost. */
export async function settle(store: Store, event: ClaimedEvent, outcome: AttemptOutcome): Promise<boolean> {
  const now = store.now();
  const n = await store.knex('postback_events').where({ seq: event.seq, lease_token: event.leaseToken }).update({
    state: outcome.next.state,
    attempts: event.attempts + 1,
    last_status: outcome.status,
    last_error: outcome.error,
    last_attempt_at: now,
    lease_until: null,
    lease_token: null,
    ...(outcome.next.state === 'delivered' ? { delivered_at: now } : {}),
    ...(outcome.next.state === 'retrying' ? { next_attempt_at: outcome.next.at } : {}),
  });
  return n > 0;
}

/**
 * Writes delivered attempts many at a time (one statement per lease and status, not one per
 * event), each under the lease that claimed it; returns the seqs whose lease held. A process
 * killed before this statement leaves its events leased: they go out again with the same event id.
 */
export async function settleDelivered(store: Store, items: readonly { event: ClaimedEvent; status: number | null }[]): Promise<Set<number>> {
  const now = store.now();
  const groups = new Map<string, { token: string; status: number | null; seqs: number[] }>();
  for (const { event, status } of items) {
    const k = `${event.leaseToken}\u0000${status ?? ''}`;
    const g = groups.get(k) ?? { token: event.leaseToken, status, seqs: [] };
    g.seqs.push(event.seq);
    groups.set(k, g);
  }
  const kept = new Set<number>();
  for (const g of groups.values()) {
    for (const seqs of store.dialect.chunks(g.seqs, 500)) {
      const rows = rawRows<Record<string, unknown>>(await store.knex.raw(`UPDATE postback_events SET state = 'delivered', attempts = attempts + 1, last_status = ?, last_error = NULL,
        last_attempt_at = ?, lease_until = NULL, lease_token = NULL, delivered_at = ? WHERE lease_token = ? AND seq IN (${seqs.map(() => '?').join(', ')}) RETURNING seq`,
      [g.status, now, now, g.token, ...seqs]));
      for (const r of rows) kept.add(Number(r.seq));
    }
  }
  return kept;
}

/** Makes events due again now, with a fresh retry window: the named ones (whatever their state), or a postback's dead ones. */
export async function replay(store: Store, filter: { eventIds?: readonly string[]; postbackId?: string; dead?: boolean }): Promise<number> {
  const now = store.now();
  const q = store.knex('postback_events');
  if (filter.eventIds) q.whereIn('event_id', filter.eventIds);
  if (filter.postbackId) q.where('postback_id', filter.postbackId);
  if (filter.dead) q.where('state', 'dead');
  // A removed postback's events stay settled.
  q.whereIn('postback_id', store.knex('postbacks').whereNull('removed_at').select('id'));
  return q.update({ state: 'pending', next_attempt_at: now, window_start: now, lease_until: null, lease_token: null });
}

export interface EventRow {
  seq: number;
  event_id: string;
  postback_id: string;
  kind: string;
  partner_id: string | null;
  customer_id: string | null;
  affiliate_id: string;
  state: EventState;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

/** The delivery log: newest first, optionally of one postback, state or customer. */
export async function listEvents(knex: Knex, filter: { postbackId?: string; postbackIds?: readonly string[]; state?: string; customer?: string; limit?: number } = {}): Promise<EventRow[]> {
  const q = knex('postback_events').orderBy('seq', 'desc').limit(filter.limit ?? 50)
    .select('seq', 'event_id', 'postback_id', 'kind', 'partner_id', 'customer_id', 'affiliate_id', 'state', 'attempts', 'last_status', 'last_error', 'created_at', 'last_attempt_at', 'next_attempt_at', 'delivered_at');
  if (filter.postbackId) q.where('postback_id', filter.postbackId);
  if (filter.postbackIds) q.whereIn('postback_id', [...filter.postbackIds]);
  if (filter.state) q.where('state', filter.state);
  if (filter.customer) q.where('customer_id', filter.customer);
  const rows = (await q) as Record<string, unknown>[];
  return rows.map((r) => ({
    seq: Number(r.seq), event_id: String(r.event_id), postback_id: String(r.postback_id), kind: String(r.kind),
    partner_id: r.partner_id === null ? null : String(r.partner_id), customer_id: r.customer_id === null ? null : String(r.customer_id),
    affiliate_id: String(r.affiliate_id), state: String(r.state) as EventState, attempts: Number(r.attempts),
    last_status: r.last_status === null ? null : Number(r.last_status), last_error: r.last_error === null ? null : String(r.last_error),
    created_at: fromStoreTimestamp(r.created_at) ?? '', last_attempt_at: fromStoreTimestamp(r.last_attempt_at),
    next_attempt_at: UNSETTLED.includes(String(r.state) as EventState) ? fromStoreTimestamp(r.next_attempt_at) : null, delivered_at: fromStoreTimestamp(r.delivered_at),
  }));
}

/** Counts per state, and the age of the oldest unsettled event (seconds; 0 when none): the lag. */
export async function deliverySummary(store: Store): Promise<{ states: Record<EventState, number>; lagSeconds: number }> {
  const rows = (await store.knex('postback_events').groupBy('state').select('state').count({ n: '*' })) as { state: string; n: number | string }[];
  const states: Record<EventState, number> = { pending: 0, retrying: 0, delivered: 0, dead: 0 };
  for (const r of rows) if (r.state in states) states[r.state as EventState] = Number(r.n);
  const oldest = (await store.knex('postback_events').whereIn('state', UNSETTLED).min({ at: 'created_at' }).first()) as { at: unknown } | undefined;
  const at = fromStoreTimestamp(oldest?.at);
  const lagSeconds = at ? Math.max(0, (store.clock().getTime() - Date.parse(at)) / 1000) : 0;
  return { states, lagSeconds };
}
