/**
 * Erasure of one person's personal data (GDPR art. 17; docs/personal-data.md): every value of
 * their personal fields leaves the store, the money stays. In one transaction per customer, under
 * the partner's load lock (so no load of the same customer crosses it):
 *
 * - `customers`: e-mail, first and last name set to NULL; every other field kept;
 * - `rejects`: in the customer's own rejects every value, in any other of the partner's rejects
 *   the values that name this person alone (the e-mail, a hash): each occurrence replaced by
 *   `[erased]` (a first name in another customer's reject is that customer's);
 * - `waiting_records`: the same, for records parked for the customer or holding its e-mail;
 * - `fraud_identities`: the customer's e-mail and name keys (masked forms and digests) deleted;
 * - `fraud_flags`: a duplicate-identity flag that rested on one of those keys keeps its decision
 *   and status; its evidence says the value was erased and its instance key no longer holds it;
 * - `tombstones`: a customer deleted at the source keeps no value in its tombstone's row;
 * - `postback_events`: the customer's events keep no value (a postback added with
 *   `--include-personal` may have put them in its data);
 * - `erasures`: who, when, through which face, rows per table; never the values.
 *
 * Then the backend's files (StoreDialect.reclaimErased). Erasing a customer again, or one already
 * erased, finds nothing more to touch and is recorded again. The ledger, the report facts and the
 * commission lines are not read or written.
 */
import type { Knex } from 'knex';
import { loadLockKey } from '../pipeline/load-transaction.js';
import { PERSONAL_FIELDS } from '../spec/personal-data.js';
import { recordErasure } from '../store/erasures.js';
import type { Store } from '../store/store.js';

export interface ErasureRequest {
  partner: string;
  customers: readonly string[];
  /** Who asked: the OS user, the API client, the console user. */
  by: string;
  via: 'cli' | 'api' | 'console';
}

export interface ErasureResult {
  customerId: string;
  /** Whether the store holds the customer (an unknown one is still recorded, so that a later load drops its fields). */
  found: boolean;
  /** Table → rows touched. */
  tables: Record<string, number>;
}

/** The tables an erasure may touch, reclaimed after it. */
export const ERASED_TABLES = ['customers', 'rejects', 'waiting_records', 'tombstones', 'fraud_identities', 'fraud_flags', 'postback_events'] as const;

const MASK = '[erased]';

export async function eraseCustomers(store: Store, request: ErasureRequest): Promise<ErasureResult[]> {
  const results: ErasureResult[] = [];
  for (const customerId of [...new Set(request.customers)]) {
    results.push(await store.transaction(async (trx) => {
      await store.dialect.transactionLock(trx, loadLockKey(request.partner));
      const result = await eraseOne(trx, request.partner, customerId);
      await recordErasure(trx, { partner: request.partner, customerId, requestedBy: request.by, via: request.via, erasedAt: store.now(), tables: result.tables });
      return result;
    }));
  }
  await store.dialect.reclaimErased(store.knex, ERASED_TABLES);
  return results;
}

async function eraseOne(trx: Knex.Transaction, partner: string, customerId: string): Promise<ErasureResult> {
  const tables: Record<string, number> = {};
  const row = (await trx('customers').where({ partner_id: partner, customer_id: customerId }).first(...PERSONAL_FIELDS)) as Record<string, unknown> | undefined;
  const values = new Set<string>();
  for (const f of PERSONAL_FIELDS) if (typeof row?.[f] === 'string' && row[f] !== '') values.add(row[f] as string);

  // The customer's own rejects name values the stored row may not (a version never loaded).
  const own = (await trx('rejects').where({ partner_id: partner, entity: 'customers', record_key: customerId }).select('id', 'payload')) as { id: number; payload: string }[];
  for (const r of own) for (const v of personalIn(r.payload)) values.add(v);
  // A customer deleted at the source keeps its row in its tombstone (src/store/tombstones.ts).
  const buried = (await trx('tombstones').where({ partner_id: partner, entity: 'customers', record_key: customerId }).pluck('row')) as unknown[];
  for (const row of buried) for (const v of personalIn(typeof row === 'string' ? row : JSON.stringify(row))) values.add(v);
  // Another row is searched for the values that name this person alone (an e-mail, a hash of one); a name is another person's too.
  const wide = new Set([...values].filter((v) => v.includes('@') || v.startsWith('hmac:')));

  if (row) {
    tables.customers = await trx('customers').where({ partner_id: partner, customer_id: customerId }).update({ email: null, first_name: null, last_name: null });
  }
  tables.rejects = await scrubRows(trx, { table: 'rejects', key: ['id'], columns: ['payload', 'errors'] }, partner, { values, wide }, { own: (q) => q.whereIn('id', own.map((r) => r.id)), extra: (row) => ({ payload_hash: `erased:${String(row.id)}` }) });
  tables.waiting_records = await scrubRows(trx, { table: 'waiting_records', key: ['entity', 'record_key'], columns: ['record'] }, partner, { values, wide }, { own: (q) => q.where('customer_id', customerId) });
  tables.postback_events = await scrubRows(trx, { table: 'postback_events', key: ['seq'], columns: ['data', 'last_error'] }, partner, { values, wide }, { own: (q) => q.where('customer_id', customerId) });
  tables.tombstones = await scrubRows(trx, { table: 'tombstones', key: ['id'], columns: ['row'] }, partner, { values, wide }, { own: (q) => q.where('customer_id', customerId) });
  tables.fraud_flags = await eraseFlagEvidence(trx, partner, customerId);
  tables.fraud_identities = await trx('fraud_identities').where({ partner_id: partner, customer_id: customerId }).whereIn('kind', ['email', 'name']).delete();
  return { customerId, found: row !== undefined || buried.length > 0, tables };
}

/** The personal values a customer record's JSON names (spec field names). */
function personalIn(payload: string): string[] {
  try {
    const v = JSON.parse(payload) as Record<string, unknown> | null;
    return PERSONAL_FIELDS.flatMap((f) => (typeof v?.[f] === 'string' && v[f] !== '' ? [v[f] as string] : []));
  } catch {
    return [];
  }
}

const escapeLike = (v: string): string => v.replace(/[\\%_]/g, (c) => `\\${c}`);
const escapeRegExp = (v: string): string => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Scrubbed {
  table: string;
  /** The columns that name one of the partner's rows. */
  key: readonly string[];
  /** The text (or JSON) columns scrubbed. */
  columns: readonly string[];
}

/**
 * Replaces every occurrence of the values with `[erased]`: in the customer's own rows (`own`) all
 * of them, in any other of the partner's rows whose text holds one of the `wide` values those
 * (case-insensitively); resolves with the rows changed. `extra` adds columns to set on a changed row.
 */
async function scrubRows(
  trx: Knex.Transaction, target: Scrubbed, partner: string, found: { values: ReadonlySet<string>; wide: ReadonlySet<string> },
  options: { own: (q: Knex.QueryBuilder) => void; extra?: (row: Record<string, unknown>) => Record<string, unknown> },
): Promise<number> {
  const all = [...found.values].filter((v) => v.length >= 2);
  if (all.length === 0) return 0;
  const wide = [...found.wide];
  const read = (narrow: (q: Knex.QueryBuilder) => void) => trx(target.table).where('partner_id', partner).modify(narrow).select(...target.key, ...target.columns) as Promise<Record<string, unknown>[]>;
  const rows = new Map<string, { row: Record<string, unknown>; own: boolean }>();
  const keyOf = (row: Record<string, unknown>) => JSON.stringify(target.key.map((k) => row[k]));
  for (const row of await read(options.own)) rows.set(keyOf(row), { row, own: true });
  if (wide.length > 0) {
    const others = await read((q) => q.where((w) => {
      // ESCAPE names the backslash on both backends; lower() on both sides: case-insensitive.
      for (const v of wide) for (const c of target.columns) w.orWhereRaw(`lower(CAST(?? AS TEXT)) LIKE ? ESCAPE '\\'`, [c, `%${escapeLike(v.toLowerCase())}%`]);
    }));
    for (const row of others) if (!rows.has(keyOf(row))) rows.set(keyOf(row), { row, own: false });
  }
  const patternOf = (texts: string[]) => new RegExp([...texts].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|'), 'gi');
  const ownPattern = patternOf(all);
  const widePattern = wide.length > 0 ? patternOf(wide) : undefined;
  let changed = 0;
  for (const { row, own } of rows.values()) {
    const pattern = own ? ownPattern : widePattern;
    if (pattern === undefined) continue;
    const update: Record<string, unknown> = {};
    for (const c of target.columns) {
      const text = row[c];
      if (text === null || text === undefined) continue;
      const asText = typeof text === 'string' ? text : JSON.stringify(text);
      const scrubbed = asText.replace(pattern, MASK);
      if (scrubbed !== asText) update[c] = typeof text === 'string' ? scrubbed : JSON.parse(scrubbed);
    }
    if (Object.keys(update).length === 0) continue;
    const where = Object.fromEntries(target.key.map((k) => [k, row[k]])) as Record<string, string | number>;
    await trx(target.table).where('partner_id', partner).where(where).update({ ...update, ...(options.extra ? options.extra(row) : {}) });
    changed += 1;
  }
  return changed;
}

/**
 * The duplicate-identity flags linking the customer: the decision and status stay; the evidence's
 * value (a masked e-mail or name with its digest) becomes `[erased]`, with `evidence_erased: true`,
 * and the instance key names the flag instead of the key, so that no stored flag holds the key.
 */
async function eraseFlagEvidence(trx: Knex.Transaction, partner: string, customerId: string): Promise<number> {
  const keys = (await trx('fraud_identities').where({ partner_id: partner, customer_id: customerId }).whereIn('kind', ['email', 'name']).pluck('value')) as string[];
  const flags = (await trx('fraud_flags as f').join('fraud_flag_customers as fc', 'fc.flag_id', 'f.id')
    .where({ 'fc.partner_id': partner, 'fc.customer_id': customerId, 'f.rule': 'duplicate_identity' })
    .select('f.id', 'f.evidence', 'f.instance_key')) as { id: number | string; evidence: string; instance_key: string }[];
  let changed = 0;
  for (const flag of flags) {
    const evidence = JSON.parse(flag.evidence) as Record<string, unknown>;
    if (typeof evidence.value !== 'string' || !(keys.includes(evidence.value) || evidence.value === MASK)) continue;
    if (evidence.value === MASK && evidence.evidence_erased === true) continue;
    await trx('fraud_flags').where('id', flag.id).update({
      evidence: JSON.stringify({ ...evidence, value: MASK, evidence_erased: true }),
      instance_key: JSON.stringify(['erased', Number(flag.id)]),
    });
    changed += 1;
  }
  return changed;
}
