/**
 * Record versions: an older version of a record never overwrites a newer one. A customer's version
 * is its `last_modified_date`; a record pulled by a cursor stream whose cursor is a change field
 * (a transaction's `updated_at`) carries the source's cursor value beside it, since that field is
 * not a spec field and the mapped record drops it. Stored rows keep the version they were loaded
 * at (`source_version`), parked records theirs (`waiting_records.version`).
 *
 * The rule: a record whose version is older than the stored one is stale, not applied; equal
 * versions apply (a re-send); a record without a version applies as before and keeps the stored
 * version. Versions are compared as UTC instants at the precision the source wrote: the text form
 * below sorts chronologically as plain text (byte order; PostgreSQL columns use the C collation).
 */
import type { Knex } from 'knex';
import type { Entity, RawRecord, SpecRecord } from '../types.js';
import { VERSION_COLUMN, isVersioned, type EntityTable } from './tables.js';
import { toUtcTimestamp } from '../kernel/timestamp.js';
import { dialectOf } from './dialect/index.js';
import { versionOf } from './record-meta.js';
import { batchKey, recordKey } from './rows.js';
import type { ParkedRecord } from './waiting.js';
/** Keys per query: well inside every backend's bind-variable limit. */
const CHUNK_SIZE = 1000;


const ZULU = /^(\d{4}-\d{2}-\d{2}T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d)(?:\.(\d+))?Z$/;
const VERSION_FORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9,}$/;
const FRACTION = /[Tt ]\d{2}:\d{2}:\d{2}(?:[.,](\d+))?/;

/**
 * A date-time with an offset as `YYYY-MM-DDTHH:MM:SS.fffffffff` in UTC: at least nine fraction
 * digits (more when the source wrote more, trailing zeros past the ninth dropped), no zone suffix,
 * so that text order is time order whatever the precision. Undefined for anything else.
 */
export function versionText(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // The common case, already in UTC, in one match (this runs for every versioned record loaded).
  const zulu = ZULU.exec(value);
  if (zulu) {
    const digits = (zulu[2] ?? '').padEnd(9, '0');
    return `${zulu[1] as string}.${digits.length === 9 ? digits : digits.slice(0, 9) + digits.slice(9).replace(/0+$/, '')}`;
  }
  if (VERSION_FORM.test(value)) return value; // already in this form (a stored reject's version, replayed)
  let utc: string;
  try {
    utc = toUtcTimestamp(value);
  } catch {
    return undefined;
  }
  const digits = (FRACTION.exec(value)?.[1] ?? '').padEnd(9, '0');
  return `${utc.slice(0, 19)}.${digits.slice(0, 9)}${digits.slice(9).replace(/0+$/, '')}`;
}

/** The version of a raw record that validated (or of a reject's payload, when it can be read). */
export function recordVersion(entity: Entity, raw: RawRecord, value: unknown): string | undefined {
  if (entity === 'customers' && value !== null && typeof value === 'object') {
    const own = versionText((value as SpecRecord).last_modified_date);
    if (own !== undefined) return own;
  }
  return entity === 'customers' || entity === 'transactions' ? versionText(raw.version) : undefined;
}

/** True when `version` is older than `than` (a missing version is never older: it applies). */
export const isOlder = (version: string | undefined | null, than: string | undefined | null): boolean =>
  typeof version === 'string' && typeof than === 'string' && version < than;

/** The stored versions of these keys of a partner's versioned table (keys without a version are left out). */
export async function storedVersions(trx: Knex.Transaction, table: EntityTable, partner: string, keys: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!isVersioned(table)) return out;
  const key = table.key[0] as string;
  for (const part of dialectOf(trx).chunks(keys, CHUNK_SIZE)) {
    const rows = (await trx(table.name).where('partner_id', partner).whereIn(key, part).whereNotNull(VERSION_COLUMN)
      .select({ key, version: VERSION_COLUMN })) as { key: string; version: string }[];
    for (const r of rows) out.set(r.key, r.version);
  }
  return out;
}

/** The versions of parked records of these keys. */
export async function parkedVersions(trx: Knex.Transaction, partner: string, entity: Entity, keys: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const part of dialectOf(trx).chunks(keys, CHUNK_SIZE)) {
    const rows = (await trx('waiting_records').where({ partner_id: partner, entity }).whereIn('record_key', part).whereNotNull('version')
      .select('record_key', 'version')) as { record_key: string; version: string }[];
    for (const r of rows) out.set(r.record_key, r.version);
  }
  return out;
}

/**
 * The newest version of each key of a batch, into `latest` (`batchKey` → record), as if the records
 * had been sent one by one: a later record replaces an earlier one unless it is older (equal
 * versions, or either without a version: the later wins). Returns the records dropped as older.
 */
export function newestPerKey(table: EntityTable, records: readonly SpecRecord[], latest: Map<string, SpecRecord>): SpecRecord[] {
  const older: SpecRecord[] = [];
  for (const record of records) {
    const key = batchKey(table, record);
    const kept = latest.get(key);
    if (kept !== undefined && isOlder(versionOf(record), versionOf(kept))) older.push(record);
    else latest.set(key, record);
  }
  return older;
}

/** A batch's records of a versioned table split for writing, and the keys found older. */
export interface VersionedWrite {
  direct: SpecRecord[];
  parked: ParkedRecord[];
  staleKeys: string[];
}

/**
 * Before a batch of records is written: drops records to load directly that are older than a
 * parked version of their key, and records to park that are older than the stored row or the
 * parked version. (The writers themselves keep an older version from overwriting a stored row.)
 * Costs nothing when nothing is parked and every customer is known, the common case.
 */
export async function settleVersions(
  trx: Knex.Transaction,
  scope: { table: EntityTable; partner: string; someParked: boolean },
  direct: SpecRecord[],
  parked: ParkedRecord[],
): Promise<VersionedWrite> {
  const { table, partner } = scope;
  const staleKeys: string[] = [];
  if (!isVersioned(table)) return { direct, parked, staleKeys };
  const keep = (key: string, version: string | undefined, ...newer: (string | undefined)[]): boolean => {
    if (!newer.some((v) => isOlder(version, v))) return true;
    staleKeys.push(key);
    return false;
  };
  if (scope.someParked) {
    const keys = direct.filter((r) => versionOf(r) !== undefined).map((r) => recordKey(table, r));
    const waiting = keys.length > 0 ? await parkedVersions(trx, partner, table.entity, keys) : new Map<string, string>();
    if (waiting.size > 0) direct = direct.filter((r) => keep(recordKey(table, r), versionOf(r), waiting.get(recordKey(table, r))));
  }
  const keys = parked.filter((p) => versionOf(p.record) !== undefined).map((p) => p.key);
  if (keys.length > 0) {
    const stored = await storedVersions(trx, table, partner, keys);
    const waiting = scope.someParked ? await parkedVersions(trx, partner, table.entity, keys) : new Map<string, string>();
    parked = parked.filter((p) => keep(p.key, versionOf(p.record), stored.get(p.key), waiting.get(p.key)));
  }
  return { direct, parked, staleKeys };
}
