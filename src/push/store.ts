/**
 * The push side's own rows (migration 006): idempotency records and per-stream push bookkeeping.
 * Both are written inside the load transaction of the records they describe, so an answer is
 * remembered exactly when its records are committed, and a pushed stream's last delivery time is
 * exactly what is in the store.
 */
import type { Knex } from 'knex';
import type { Entity } from '../types.js';
import { fromStoreDate, fromStoreTimestamp } from '../store/values.js';

/** How long an Idempotency-Key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

export interface StoredAnswer {
  requestHash: string;
  status: number;
  body: Record<string, unknown>;
}

const plusMs = (iso: string, ms: number): string => new Date(Date.parse(iso) + ms).toISOString().replace('Z', '000Z');

/** The answer remembered for (client, key), unless it has expired. */
export async function findAnswer(knex: Knex, clientId: string, key: string, now: string): Promise<StoredAnswer | undefined> {
  const row = (await knex('push_idempotency')
    .where({ client_id: clientId, idempotency_key: key })
    .andWhere('expires_at', '>', now)
    .first('request_hash', 'status', 'body')) as { request_hash: string; status: number; body: string } | undefined;
  if (!row) return undefined;
  return { requestHash: row.request_hash, status: Number(row.status), body: JSON.parse(row.body) as Record<string, unknown> };
}

/** Remembers an answer (in the transaction of its records). An expired row of the same key is replaced. */
export async function saveAnswer(trx: Knex.Transaction, clientId: string, key: string, answer: StoredAnswer, now: string): Promise<void> {
  await trx('push_idempotency').where({ client_id: clientId, idempotency_key: key }).andWhere('expires_at', '<=', now).delete();
  await trx('push_idempotency').insert({
    client_id: clientId,
    idempotency_key: key,
    request_hash: answer.requestHash,
    status: answer.status,
    body: JSON.stringify(answer.body),
    created_at: now,
    expires_at: plusMs(now, IDEMPOTENCY_TTL_MS),
  });
}

/** Deletes expired idempotency records; returns how many. */
export async function purgeExpiredAnswers(knex: Knex, now: string): Promise<number> {
  return Number(await knex('push_idempotency').where('expires_at', '<=', now).delete());
}

/**
 * Records that a push delivered `records` records of a stream now (and, for activity, up to which
 * day): one statement, an insert that adds to the stream's row when it exists.
 */
export async function touchPushStream(trx: Knex.Transaction, partner: string, entity: Entity, records: number, now: string, lastDay?: string): Promise<void> {
  await trx('push_streams')
    .insert({ partner_id: partner, entity, first_received_at: now, last_received_at: now, records, last_day: lastDay ?? null })
    .onConflict(['partner_id', 'entity'])
    .merge({
      last_received_at: trx.raw('excluded.last_received_at'),
      records: trx.raw('push_streams.records + excluded.records'),
      last_day: trx.raw(
        'CASE WHEN excluded.last_day IS NOT NULL AND (push_streams.last_day IS NULL OR excluded.last_day > push_streams.last_day) THEN excluded.last_day ELSE push_streams.last_day END',
      ),
    });
}

export interface PushStream {
  partner: string;
  entity: Entity;
  firstReceivedAt: string;
  lastReceivedAt: string;
  records: number;
  lastDay: string | null;
}

/** Every pushed stream, keyed `partner/entity`. */
export async function pushStreams(knex: Knex): Promise<Map<string, PushStream>> {
  const rows = (await knex('push_streams').select('*')) as { partner_id: string; entity: Entity; first_received_at: unknown; last_received_at: unknown; records: number | string; last_day: unknown }[];
  const out = new Map<string, PushStream>();
  for (const r of rows) {
    out.set(`${r.partner_id}/${r.entity}`, {
      partner: r.partner_id,
      entity: r.entity,
      firstReceivedAt: fromStoreTimestamp(r.first_received_at) ?? '',
      lastReceivedAt: fromStoreTimestamp(r.last_received_at) ?? '',
      records: Number(r.records),
      lastDay: fromStoreDate(r.last_day),
    });
  }
  return out;
}
