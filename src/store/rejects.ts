/**
 * Rejects: records that failed the spec's validation, kept with the raw payload, the violations
 * and the run that saw them, so nothing is silently dropped. The same raw payload seen again (a
 * rerun, a re-pull of an overlap window) is one reject, refreshed, not a second one.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Entity, Variant, Violation } from '../types.js';
import { escapeNul, storableJson } from './nul-escape.js';

export interface NewReject {
  position: number;
  /** The raw payload as received (a parsed value, or the raw text of an unparseable line). */
  payload: unknown;
  /** `spec`: the payload is a spec record (import, push); `source`: the partner's record, re-mapped on replay. */
  origin: RejectOrigin;
  errors: Violation[];
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
  status: 'open' | 'replayed';
  first_seen_at: string;
  last_seen_at: string;
}

export function payloadText(payload: unknown): string {
  return typeof payload === 'string' ? payload : JSON.stringify(payload);
}

export async function quarantine(
  trx: Knex.Transaction,
  scope: { partner: string; variant: Variant; entity: Entity; runId: string; now: string },
  rejects: readonly NewReject[],
): Promise<void> {
  for (let i = 0; i < rejects.length; i += 200) {
    const rows = rejects.slice(i, i + 200).map((r) => {
      const payload = escapeNul(payloadText(r.payload));
      return {
        partner_id: scope.partner,
        variant: scope.variant,
        entity: scope.entity,
        payload_hash: createHash('sha256').update(payload).digest('hex'),
        payload,
        origin: r.origin,
        errors: storableJson(r.errors),
        position: r.position,
        run_id: scope.runId,
        status: 'open',
        first_seen_at: scope.now,
        last_seen_at: scope.now,
        resolved_at: null,
      };
    });
    // The same payload twice in one statement would make PostgreSQL's ON CONFLICT fail.
    const unique = [...new Map(rows.map((r) => [r.payload_hash, r])).values()];
    await trx('rejects')
      .insert(unique)
      .onConflict(['partner_id', 'entity', 'payload_hash'])
      .merge(['errors', 'position', 'origin', 'run_id', 'status', 'last_seen_at', 'resolved_at']);
  }
}

export async function listRejects(
  knex: Knex,
  filter: { partner?: string; status?: 'open' | 'replayed'; entity?: Entity; limit?: number } = {},
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

/** Marks rejects replayed (their records loaded after a fix); a replayed payload seen again reopens. */
export async function markReplayed(trx: Knex.Transaction, ids: readonly number[], now: string): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    await trx('rejects').whereIn('id', ids.slice(i, i + 500)).update({ status: 'replayed', resolved_at: now });
  }
}
