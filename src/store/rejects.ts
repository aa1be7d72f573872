/**
 * Rejects: records that failed the spec's validation, kept with the raw payload, the violations
 * and the run that saw them, so nothing is silently dropped. The same raw payload seen again (a
 * rerun, a re-pull of an overlap window) is one reject, refreshed, not a second one. How a reject
 * is closed (a later valid version, a replay, a deliberate discard) is in reject-lifecycle.ts.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Entity, Variant, Violation } from '../types.js';
import { escapeNul, storableJson } from './nul-escape.js';
import { entityTable } from './tables.js';
import { isOlder, storedVersions } from './versions.js';
import { dialectOf } from './dialect/index.js';

export interface NewReject {
  position: number;
  /** The raw payload as received (a parsed value, or the raw text of an unparseable line). */
  payload: unknown;
  /** `spec`: the payload is a spec record (import, push); `source`: the partner's record, re-mapped on replay. */
  origin: RejectOrigin;
  errors: Violation[];
  /** The record's upsert key, when the record could be read far enough (reject-lifecycle.ts). */
  key?: string;
  /** The record's version (versions.ts), when it has one. */
  version?: string;
}

export type RejectOrigin = 'spec' | 'source';

export interface StoredReject {
  id: number;
  partner_id: string;
  variant: Variant;
  entity: Entity;
  payload: string;
  errors: Violation[];
  position: number | null;
  origin: RejectOrigin;
  run_id: string | null;
  status: RejectStatus;
  first_seen_at: string;
  last_seen_at: string;
  record_key: string | null;
  version: string | null;
  resolution: Resolution | null;
  resolved_at: string | null;
  resolved_run_id: string | null;
  resolved_by: string | null;
  resolution_reason: string | null;
}

export type RejectStatus = 'open' | 'resolved';
/**
 * How a reject was closed: `loaded` (a valid version of its record, or its same raw payload,
 * loaded later), `replayed` (`rejects --replay` loaded it), `superseded` (a newer version of its
 * record was already stored), `discarded` (closed deliberately, with who and why).
 */
export type Resolution = 'loaded' | 'replayed' | 'superseded' | 'discarded';

export function payloadText(payload: unknown): string {
  return typeof payload === 'string' ? payload : JSON.stringify(payload);
}

export const payloadHash = (payload: unknown): string => createHash('sha256').update(payloadText(payload)).digest('hex');

export async function quarantine(
  trx: Knex.Transaction,
  scope: { partner: string; variant: Variant; entity: Entity; runId: string; now: string },
  rejects: readonly NewReject[],
): Promise<void> {
  // A reject older than the stored version of its record needs no one's attention: closed at once.
  const keyed = rejects.filter((r) => r.key !== undefined && r.version !== undefined).map((r) => r.key as string);
  const stored = keyed.length > 0 ? await storedVersions(trx, entityTable(scope.variant, scope.entity), scope.partner, keyed) : new Map<string, string>();
  const rows = rejects.map((r) => {
    const payload = escapeNul(payloadText(r.payload));
    const superseded = r.key !== undefined && isOlder(r.version, stored.get(r.key));
    return {
      partner_id: scope.partner,
      variant: scope.variant,
      entity: scope.entity,
      payload_hash: payloadHash(payload),
      payload,
      origin: r.origin,
      errors: storableJson(r.errors),
      position: r.position,
      run_id: scope.runId,
      status: superseded ? 'resolved' : 'open',
      first_seen_at: scope.now,
      last_seen_at: scope.now,
      resolved_at: superseded ? scope.now : null,
      record_key: r.key ?? null,
      version: r.version ?? null,
      resolution: superseded ? 'superseded' : null,
      resolved_run_id: superseded ? scope.runId : null,
      resolved_by: null,
      resolution_reason: null,
    };
  });
  // The same payload twice in one statement would make PostgreSQL's ON CONFLICT fail.
  const unique = [...new Map(rows.map((r) => [r.payload_hash, r])).values()];
  // Seen again, a reject reopens (the fix it was closed by did not hold), unless it was
  // discarded: that decision was about this very payload, and stays with its audit fields.
  const unlessDiscarded = (column: string) => trx.raw(`CASE WHEN rejects.resolution = 'discarded' THEN rejects.${column} ELSE excluded.${column} END`);
  for (const part of dialectOf(trx).insertChunks(unique)) {
    await trx('rejects')
      .insert(part)
      .onConflict(['partner_id', 'entity', 'payload_hash'])
      .merge({
        errors: trx.raw('excluded.errors'),
        position: trx.raw('excluded.position'),
        origin: trx.raw('excluded.origin'),
        run_id: trx.raw('excluded.run_id'),
        last_seen_at: trx.raw('excluded.last_seen_at'),
        record_key: trx.raw('excluded.record_key'),
        version: trx.raw('excluded.version'),
        ...Object.fromEntries(['status', 'resolution', 'resolved_at', 'resolved_run_id', 'resolved_by', 'resolution_reason'].map((c) => [c, unlessDiscarded(c)])),
      });
  }
}

export async function listRejects(
  knex: Knex,
  filter: { partner?: string; status?: RejectStatus; entity?: Entity; limit?: number } = {},
): Promise<StoredReject[]> {
  const q = knex('rejects').select('*').orderBy('id');
  if (filter.partner) q.where('partner_id', filter.partner);
  if (filter.status) q.where('status', filter.status);
  if (filter.entity) q.where('entity', filter.entity);
  if (filter.limit) q.limit(filter.limit);
  const rows = (await q) as (Omit<StoredReject, 'errors'> & { errors: unknown })[];
  return rows.map((r) => ({ ...r, errors: (typeof r.errors === 'string' ? JSON.parse(r.errors) : r.errors) as Violation[] }));
}

export async function countOpenRejects(knex: Knex): Promise<Map<string, number>> {
  const rows = (await knex('rejects').where('status', 'open').select('partner_id', 'entity').count({ count: '*' }).groupBy('partner_id', 'entity')) as {
    partner_id: string;
    entity: string;
    count: number | string;
  }[];
  return new Map(rows.map((r) => [`${r.partner_id}/${r.entity}`, Number(r.count)]));
}
