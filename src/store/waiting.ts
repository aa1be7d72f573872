/**
 * Waiting records: valid transactions and activity whose customer_id is not (yet) a customer of
 * that partner in the store. The spec requires the reference to exist; partners often send a
 * deposit seconds before the registration. Such a record is parked here (one row per record key,
 * so a re-sent version replaces the parked one) and loaded, inside the same transaction, by the
 * batch that brings its customer. A newer version of the same record that loads directly drops
 * the parked one, so an old version can never overwrite a newer one later.
 */
import type { Knex } from 'knex';
import type { Entity, SpecRecord } from '../types.js';
import { storableJson } from './nul-escape.js';
import { setMeta, versionOf } from './record-meta.js';
import { dialectOf } from './dialect/index.js';

export interface ParkedRecord {
  entity: Entity;
  key: string;
  customerId: string;
  record: SpecRecord;
}

/** Keys per query: well inside every backend's bind-variable limit. */
const CHUNK_SIZE = 1000;

/** Which of these customer ids are customers of the partner in the store. */
export async function knownCustomers(trx: Knex.Transaction, partner: string, ids: readonly string[]): Promise<Set<string>> {
  const known = new Set<string>();
  for (const part of dialectOf(trx).chunks(ids, CHUNK_SIZE)) {
    const rows: { customer_id: string }[] = await trx('customers')
      .where('partner_id', partner)
      .whereIn('customer_id', part)
      .select('customer_id');
    for (const r of rows) known.add(r.customer_id);
  }
  return known;
}

export async function park(trx: Knex.Transaction, partner: string, runId: string, now: string, records: readonly ParkedRecord[]): Promise<void> {
  const rows = records.map((r) => ({
    partner_id: partner,
    entity: r.entity,
    record_key: r.key,
    customer_id: r.customerId,
    record: storableJson(r.record),
    // Kept beside the record (a transaction's updated_at is not a spec field): checked when it is released.
    version: versionOf(r.record) ?? null,
    run_id: runId,
    first_seen_at: now,
    last_seen_at: now,
  }));
  for (const part of dialectOf(trx).insertChunks(rows)) {
    await trx('waiting_records')
      .insert(part)
      .onConflict(['partner_id', 'entity', 'record_key'])
      .merge(['customer_id', 'record', 'version', 'run_id', 'last_seen_at']);
  }
}

/** Whether anything of this partner and entity is parked. */
export async function anyParked(trx: Knex.Transaction, partner: string, entity: Entity): Promise<boolean> {
  return (await trx('waiting_records').where({ partner_id: partner, entity }).first('record_key')) !== undefined;
}

/**
 * Drops parked versions of records that have just loaded directly (keys computed only if any are
 * parked). Resolves false when nothing of this partner and entity was parked at all.
 */
export async function dropParked(trx: Knex.Transaction, partner: string, entity: Entity, keys: () => string[]): Promise<boolean> {
  const any = await trx('waiting_records').where({ partner_id: partner, entity }).first('record_key');
  if (!any) return false;
  for (const part of dialectOf(trx).chunks(keys(), CHUNK_SIZE)) {
    await trx('waiting_records').where({ partner_id: partner, entity }).whereIn('record_key', part).delete();
  }
  return true;
}

/** Removes and returns the records parked for these customers (the caller loads them). */
export async function unpark(trx: Knex.Transaction, partner: string, customerIds: readonly string[]): Promise<ParkedRecord[]> {
  const any = await trx('waiting_records').where({ partner_id: partner }).first('record_key');
  if (!any) return [];
  const out: ParkedRecord[] = [];
  for (const part of dialectOf(trx).chunks(customerIds, CHUNK_SIZE)) {
    const rows: { entity: Entity; record_key: string; customer_id: string; record: unknown; version: string | null }[] = await trx('waiting_records')
      .where('partner_id', partner)
      .whereIn('customer_id', part)
      .select('entity', 'record_key', 'customer_id', 'record', 'version');
    if (rows.length === 0) continue;
    await trx('waiting_records').where('partner_id', partner).whereIn('customer_id', part).delete();
    for (const r of rows) {
      const record = (typeof r.record === 'string' ? JSON.parse(r.record) : r.record) as SpecRecord;
      if (r.version !== null) setMeta(record, { position: 0, version: r.version });
      out.push({ entity: r.entity, key: r.record_key, customerId: r.customer_id, record });
    }
  }
  return out;
}

export interface WaitingSummary {
  partner_id: string;
  entity: string;
  count: number;
  oldest: string | null;
}

export async function waitingSummary(knex: Knex, partner?: string): Promise<WaitingSummary[]> {
  const q = knex('waiting_records')
    .select('partner_id', 'entity')
    .count({ count: '*' })
    .min({ oldest: 'first_seen_at' })
    .groupBy('partner_id', 'entity')
    .orderBy(['partner_id', 'entity']);
  if (partner) q.where('partner_id', partner);
  const rows = (await q) as { partner_id: string; entity: string; count: number | string; oldest: string | null }[];
  return rows.map((r) => ({ ...r, count: Number(r.count) }));
}

/** Drops parked activity of these days (their day is being replaced whole). */
export async function dropParkedDays(trx: Knex.Transaction, partner: string, dates: readonly string[]): Promise<void> {
  // Activity record keys are JSON arrays that start with the date: ["2026-11-01", ...].
  for (const date of dates) {
    await trx('waiting_records').where({ partner_id: partner, entity: 'activity' }).where('record_key', 'like', `["${date}",%`).delete();
  }
}
