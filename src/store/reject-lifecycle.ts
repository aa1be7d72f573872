/**
 * The life of a reject after it is quarantined. It stays open until one of these closes it, each
 * recorded with when, by which run, and how (`resolution`):
 * - `loaded`: a valid record with its key loaded later (a newer version, a backfill after a mapping
 *   fix), unless that record is older than the reject's own version; for a reject whose key could
 *   not be read (a mapping that failed, a record without its id), the same raw payload loading
 *   valid later;
 * - `replayed`: `rejects --replay` loaded it; `superseded`: it (or its replay) is older than the
 *   version of its record already stored;
 * - `discarded`: closed deliberately (`rejects --discard --reason`), with who and why, kept for audit.
 * `status` and every open-reject count read open ones only.
 */
import type { Knex } from 'knex';
import type { Entity, SpecRecord } from '../types.js';
import { dialectOf } from './dialect/index.js';
import { metaOf, versionOf } from './record-meta.js';
import { payloadHash, type Resolution } from './rejects.js';
import { recordKey } from './rows.js';
import type { EntityTable } from './tables.js';
import { isOlder } from './versions.js';

const CHUNK = 500;

/** A raw key value that a valid record could also have: a non-empty string, or an integer (ids from numeric columns). */
function keyPart(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

/** The upsert key of a record that failed validation, in `recordKey`'s form, when every key field can be read. */
export function readableKey(table: EntityTable, value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const parts = table.key.map((k) => keyPart((value as Record<string, unknown>)[k]));
  if (parts.some((p) => p === undefined)) return undefined;
  return table.key.length === 1 ? (parts[0] as string) : JSON.stringify(parts);
}

export interface ResolveScope {
  partner: string;
  entity: Entity;
  table: EntityTable;
  runId: string;
  now: string;
}

/** Closes rejects by id with a resolution (the run that closed them, when). */
export async function markResolved(trx: Knex.Transaction, ids: readonly number[], resolution: Resolution, runId: string, now: string): Promise<void> {
  for (const part of dialectOf(trx).chunks(ids, CHUNK)) {
    await trx('rejects').whereIn('id', part)
      .update({ status: 'resolved', resolution, resolved_at: now, resolved_run_id: runId, resolved_by: null, resolution_reason: null });
  }
}

/**
 * Closes the open rejects that records just written make obsolete (resolution `loaded`). One
 * indexed probe when the partner's stream has no open reject, which is the common case. Also tells
 * whether the partner's stream had any open reject at all: a load transaction holding the
 * partner's load lock need not ask again until it quarantines some itself (only a load opens
 * rejects, and only under that lock).
 */
export async function resolveLoadedRejects(trx: Knex.Transaction, scope: ResolveScope, applied: readonly SpecRecord[]): Promise<{ resolved: number; anyOpen: boolean }> {
  if (applied.length === 0) return { resolved: 0, anyOpen: true };
  const open = () => trx('rejects').where({ partner_id: scope.partner, entity: scope.entity, status: 'open' });
  if (!(await open().first('id'))) return { resolved: 0, anyOpen: false };
  const ids: number[] = [];
  const versions = new Map<string, string | undefined>();
  for (const record of applied) versions.set(recordKey(scope.table, record), versionOf(record));
  const keys = [...versions.keys()];
  for (const part of dialectOf(trx).chunks(keys, CHUNK)) {
    const rows = (await open().whereIn('record_key', part).select('id', 'record_key', 'version')) as { id: number; record_key: string; version: string | null }[];
    // A record older than the reject leaves it open: the partner's newer state is still the bad one.
    for (const r of rows) if (!isOlder(versions.get(r.record_key), r.version)) ids.push(r.id);
  }
  if (await open().whereNull('record_key').first('id')) {
    const hashes = [...new Set(applied.flatMap((r) => {
      const source = metaOf(r)?.source;
      return source === undefined ? [] : [payloadHash(source)];
    }))];
    for (const part of dialectOf(trx).chunks(hashes, CHUNK)) {
      const rows = (await open().whereNull('record_key').whereIn('payload_hash', part).select('id')) as { id: number }[];
      for (const r of rows) ids.push(r.id);
    }
  }
  await markResolved(trx, ids, 'loaded', scope.runId, scope.now);
  return { resolved: ids.length, anyOpen: true };
}

export interface DiscardRequest {
  partner: string;
  entity?: Entity;
  /** Only rejects last seen before this instant (store time text). */
  before?: string;
  reason: string;
  /** Who discarded them (the OS user running the command). */
  by: string;
  now: string;
}

/** Closes open rejects deliberately; resolves with how many. */
export async function discardRejects(knex: Knex, request: DiscardRequest): Promise<number> {
  const q = knex('rejects').where({ partner_id: request.partner, status: 'open' });
  if (request.entity) q.where('entity', request.entity);
  if (request.before) q.where('last_seen_at', '<', request.before);
  return q.update({
    status: 'resolved', resolution: 'discarded', resolved_at: request.now, resolved_run_id: null,
    resolved_by: request.by, resolution_reason: request.reason,
  });
}
