/**
 * The phase history of prop-trading customers, kept as customers load (docs/reports.md, Funnel).
 *
 * Rules it keeps:
 * - An observed phase is recorded with its time: the record's last_modified_date, else the time it
 *   was loaded. A record whose phase equals the customer's last recorded phase adds nothing (a
 *   re-send, a backfill, a replay); a record without a phase adds nothing.
 * - History is only appended to. The load applies no older version over a newer one
 *   (../store/versions.ts), and only what it applied reaches this code: an older version arriving
 *   late never rewrites history.
 * - The evaluation path is phase_1 → phase_2 → funded. A customer first seen (or next seen) at a
 *   later stage passed the stages before it at an unknown time: they are recorded as `inferred`
 *   entries without a time. The customer counts as having reached them; the days to and from an
 *   unknown time are left out of the medians.
 * - `failed` records the stage it failed at: the customer's last phase before it (NULL when the
 *   customer was first seen at failed: stage unknown).
 * The same transaction keeps `funnel_customers`, one row per customer: what the funnel counts.
 */
import type { Knex } from 'knex';
import type { SpecRecord } from '../types.js';
import { decimalText } from '../store/values.js';
import { toUtcTimestamp } from '../kernel/timestamp.js';
import { dialectOf } from '../store/dialect/index.js';

/** The evaluation path, in order. */
export const STAGES = ['phase_1', 'phase_2', 'funded'] as const;
export type Stage = (typeof STAGES)[number];
/** The phases the spec names (§2.1); other values are not part of the funnel and are not recorded. */
export const PHASES = [...STAGES, 'failed'] as const;
export type Phase = (typeof PHASES)[number];

export type TimeSource = 'last_modified_date' | 'loaded_at' | 'inferred';

export interface PhaseEntry {
  seq: number;
  phase: Phase;
  /** UTC `YYYY-MM-DDTHH:MM:SS.ffffffZ`; null for a stage passed at an unknown time. */
  observed_at: string | null;
  time_source: TimeSource;
  /** For `failed`: the stage it failed at (null: unknown). */
  failed_from: Stage | null;
}

const isPhase = (value: unknown): value is Phase => typeof value === 'string' && (PHASES as readonly string[]).includes(value);
const isStage = (value: unknown): value is Stage => typeof value === 'string' && (STAGES as readonly string[]).includes(value);

/** What the next observation of a customer depends on: its last entry and the stages it reached. */
export interface PhaseState {
  lastSeq: number;
  lastPhase: Phase | null;
  reached: ReadonlySet<Phase>;
}

export const NO_HISTORY: PhaseState = { lastSeq: 0, lastPhase: null, reached: new Set() };

/**
 * The entries an observation adds to a customer's history (empty when it adds nothing).
 * Pure: the rules above, on one customer.
 */
export function observe(state: PhaseState, phase: unknown, at: string, source: TimeSource): PhaseEntry[] {
  if (!isPhase(phase) || state.lastPhase === phase) return [];
  let seq = state.lastSeq;
  const added: PhaseEntry[] = [];
  if (phase === 'failed') {
    added.push({ seq: ++seq, phase, observed_at: at, time_source: source, failed_from: isStage(state.lastPhase) ? state.lastPhase : null });
    return added;
  }
  for (const earlier of STAGES.slice(0, STAGES.indexOf(phase))) {
    if (!state.reached.has(earlier)) added.push({ seq: ++seq, phase: earlier, observed_at: null, time_source: 'inferred', failed_from: null });
  }
  added.push({ seq: ++seq, phase, observed_at: at, time_source: source, failed_from: null });
  return added;
}

/** A `funnel_customers` row. */
export interface FunnelCustomer {
  partner_id: string;
  customer_id: string;
  affiliate_id: string;
  campaign_id: string | null;
  challenge_type: string | null;
  account_size: string | null;
  signup_date: string;
  signup_day: string;
  cohort: string;
  current_phase: string | null;
  last_seq: number;
  reached_phase_1: number;
  reached_phase_2: number;
  reached_funded: number;
  phase_1_at: string | null;
  phase_2_at: string | null;
  funded_at: string | null;
  failed_stage: string | null;
  days_signup_phase_1: number | null;
  days_phase_1_phase_2: number | null;
  days_phase_2_funded: number | null;
  updated_at: string;
}

const DAY_MS = 86_400_000;

/** Days from one stored UTC time to another (fractional); null when either is unknown. */
export function daysBetween(from: string | null, to: string | null): number | null {
  if (from === null || to === null) return null;
  return (Date.parse(to.slice(0, 23) + 'Z') - Date.parse(from.slice(0, 23) + 'Z')) / DAY_MS;
}

const REACHED = { phase_1: 'reached_phase_1', phase_2: 'reached_phase_2', funded: 'reached_funded' } as const;
const FIRST_AT = { phase_1: 'phase_1_at', phase_2: 'phase_2_at', funded: 'funded_at' } as const;

/** The state a customer's funnel row stands for. */
export function stateOfRow(row: FunnelCustomer | undefined): PhaseState {
  if (!row) return NO_HISTORY;
  const reached = new Set<Phase>(STAGES.filter((s) => Number(row[REACHED[s]]) === 1));
  if (row.current_phase === 'failed') reached.add('failed');
  return { lastSeq: Number(row.last_seq), lastPhase: isPhase(row.current_phase) ? row.current_phase : null, reached };
}

/**
 * What the funnel counts for one customer: its last loaded record, its row before this record
 * (undefined for a new customer) and the entries the record added. The time of a stage is that of
 * the customer's first entry at it (null when that entry is inferred).
 */
export function summarize(partner: string, record: SpecRecord, before: FunnelCustomer | undefined, added: readonly PhaseEntry[], now: string): FunnelCustomer {
  const signup = toUtcTimestamp(String(record.signup_date));
  const last = added[added.length - 1];
  const reached = (stage: Stage): boolean => (before !== undefined && Number(before[REACHED[stage]]) === 1) || added.some((e) => e.phase === stage);
  const firstAt = (stage: Stage): string | null =>
    before !== undefined && Number(before[REACHED[stage]]) === 1 ? before[FIRST_AT[stage]] : (added.find((e) => e.phase === stage)?.observed_at ?? null);
  const p1 = firstAt('phase_1');
  const p2 = firstAt('phase_2');
  const funded = firstAt('funded');
  return {
    partner_id: partner,
    customer_id: String(record.customer_id),
    affiliate_id: String(record.affiliate_id),
    campaign_id: typeof record.campaign_id === 'string' ? record.campaign_id : null,
    challenge_type: typeof record.challenge_type === 'string' ? record.challenge_type : null,
    account_size: typeof record.account_size === 'number' ? decimalText(record.account_size) : null,
    signup_date: signup,
    signup_day: signup.slice(0, 10),
    cohort: signup.slice(0, 7),
    current_phase: last ? last.phase : (before?.current_phase ?? null),
    last_seq: last ? last.seq : Number(before?.last_seq ?? 0),
    reached_phase_1: reached('phase_1') ? 1 : 0,
    reached_phase_2: reached('phase_2') ? 1 : 0,
    reached_funded: reached('funded') ? 1 : 0,
    phase_1_at: p1,
    phase_2_at: p2,
    funded_at: funded,
    failed_stage: last ? (last.phase === 'failed' ? (last.failed_from ?? 'unknown') : null) : (before?.failed_stage ?? null),
    days_signup_phase_1: daysBetween(signup, p1),
    days_phase_1_phase_2: daysBetween(p1, p2),
    days_phase_2_funded: daysBetween(p2, funded),
    updated_at: now,
  };
}

/** A customer record as loaded, with the time to use when it carries no last_modified_date. */
export interface LoadedCustomer {
  record: SpecRecord;
  loadedAt: string;
}

const READ_CHUNK = 500;

/** The stored histories of these customers of a partner, each in order. */
export async function readHistories(db: Knex, partner: string, customerIds: readonly string[]): Promise<Map<string, PhaseEntry[]>> {
  const out = new Map<string, PhaseEntry[]>();
  for (const part of dialectOf(db).chunks(customerIds, READ_CHUNK)) {
    const rows = (await db('phase_history').where('partner_id', partner).whereIn('customer_id', part)
      .select('customer_id', 'seq', 'phase', 'observed_at', 'time_source', 'failed_from').orderBy([{ column: 'customer_id' }, { column: 'seq' }])) as (PhaseEntry & { customer_id: string })[];
    for (const { customer_id, ...entry } of rows) {
      let list = out.get(customer_id);
      if (!list) out.set(customer_id, (list = []));
      list.push({ ...entry, seq: Number(entry.seq) });
    }
  }
  return out;
}

const SUMMARY_COLUMNS: readonly (keyof FunnelCustomer)[] = [
  'partner_id', 'customer_id', 'affiliate_id', 'campaign_id', 'challenge_type', 'account_size', 'signup_date', 'signup_day', 'cohort',
  'current_phase', 'last_seq', 'reached_phase_1', 'reached_phase_2', 'reached_funded', 'phase_1_at', 'phase_2_at', 'funded_at', 'failed_stage',
  'days_signup_phase_1', 'days_phase_1_phase_2', 'days_phase_2_funded', 'updated_at',
];

/** The stored funnel rows of these customers of a partner. */
async function readSummaries(db: Knex, partner: string, customerIds: readonly string[]): Promise<Map<string, FunnelCustomer>> {
  const out = new Map<string, FunnelCustomer>();
  const dialect = dialectOf(db);
  if (dialect.batchParameters) {
    // One statement for the batch: the ids as one JSON parameter.
    const result = (await db.raw(`SELECT ${SUMMARY_COLUMNS.join(', ')} FROM funnel_customers WHERE partner_id = ? AND customer_id IN (SELECT json_array_elements_text(?::json))`,
      [partner, JSON.stringify(customerIds)])) as { rows: FunnelCustomer[] };
    for (const row of result.rows) out.set(row.customer_id, row);
    return out;
  }
  for (const part of dialect.chunks(customerIds, READ_CHUNK)) {
    const rows = (await db('funnel_customers').where('partner_id', partner).whereIn('customer_id', part)
      .select(SUMMARY_COLUMNS)) as FunnelCustomer[];
    for (const row of rows) out.set(row.customer_id, row);
  }
  return out;
}

/** A row that would change nothing the funnel shows is not written again. */
function sameRow(a: FunnelCustomer, b: FunnelCustomer): boolean {
  for (const column of SUMMARY_COLUMNS) {
    if (column === 'updated_at') continue;
    const x = a[column];
    const y = b[column];
    if (x === y) continue;
    if (x === null || y === null || Number(x) !== Number(y) || typeof x === 'string' && typeof y === 'string') return false;
  }
  return true;
}

/**
 * Records what a batch of a prop-trading partner's customers (the versions the load applied, one
 * per customer) adds to their phase history, and the funnel rows that change. Runs inside the load
 * transaction. One read of the batch's funnel rows; a batch that changes nothing writes nothing.
 */
export async function recordPhases(db: Knex, partner: string, customers: readonly LoadedCustomer[], runId: string | null, now: string): Promise<number> {
  if (customers.length === 0) return 0;
  const before = await readSummaries(db, partner, customers.map((c) => String(c.record.customer_id)));
  const added: Record<string, unknown>[] = [];
  const changed: FunnelCustomer[] = [];
  for (const { record, loadedAt } of customers) {
    const id = String(record.customer_id);
    const old = before.get(id);
    const modified = typeof record.last_modified_date === 'string' ? toUtcTimestamp(record.last_modified_date) : null;
    const entries = observe(stateOfRow(old), record.phase, modified ?? loadedAt, modified ? 'last_modified_date' : 'loaded_at');
    for (const e of entries) added.push({ partner_id: partner, customer_id: id, ...e, run_id: runId, loaded_at: now });
    const row = summarize(partner, record, old, entries, now);
    if (!old || !sameRow(old, row)) changed.push(row);
  }
  if (dialectOf(db).batchParameters) await writePg(db, added, changed as unknown as Record<string, unknown>[]);
  else {
    await writeSqlite(db, 'phase_history', HISTORY_TYPES, added);
    await writeSqlite(db, 'funnel_customers', SUMMARY_TYPES, changed as unknown as Record<string, unknown>[], SUMMARY_UPSERT);
  }
  return added.length;
}

type SqlType = 'text' | 'integer' | 'double precision';
const HISTORY_TYPES: Record<string, SqlType> = {
  partner_id: 'text', customer_id: 'text', seq: 'integer', phase: 'text', observed_at: 'text', time_source: 'text', failed_from: 'text', run_id: 'text', loaded_at: 'text',
};
const SUMMARY_TYPES: Record<string, SqlType> = Object.fromEntries(SUMMARY_COLUMNS.map((c) => [c,
  c === 'last_seq' || c.startsWith('reached_') ? 'integer' : c.startsWith('days_') ? 'double precision' : 'text'])) as Record<string, SqlType>;
const SUMMARY_UPSERT = ` ON CONFLICT (partner_id, customer_id) DO UPDATE SET ${SUMMARY_COLUMNS.filter((c) => c !== 'partner_id' && c !== 'customer_id').map((c) => `${c} = excluded.${c}`).join(', ')}`;

/** `INSERT … SELECT` of rows given as one JSON parameter (PostgreSQL). */
function insertFromJson(table: string, types: Record<string, SqlType>, tail = ''): string {
  const columns = Object.keys(types);
  const shape = columns.map((c) => `${c} ${types[c] as string}`).join(', ');
  return `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${columns.join(', ')} FROM json_to_recordset(?::json) AS r(${shape})${tail}`;
}

const jsonRows = (types: Record<string, SqlType>, rows: readonly Record<string, unknown>[]): string =>
  JSON.stringify(rows.map((r) => Object.fromEntries(Object.keys(types).map((c) => [c, r[c] ?? null]))));

/**
 * PostgreSQL: the history entries and the funnel rows of a whole batch in one statement, each
 * set as one JSON parameter (a statement with thousands of placeholders costs more to parse than
 * to run, and a round trip per chunk more than the rows). Knex's insert builder is not used:
 * compiling its upsert costs more than the statement.
 */
async function writePg(db: Knex, added: readonly Record<string, unknown>[], changed: readonly Record<string, unknown>[]): Promise<void> {
  const history = insertFromJson('phase_history', HISTORY_TYPES);
  const funnel = insertFromJson('funnel_customers', SUMMARY_TYPES, SUMMARY_UPSERT);
  if (added.length > 0 && changed.length > 0) await db.raw(`WITH h AS (${history}) ${funnel}`, [jsonRows(HISTORY_TYPES, added), jsonRows(SUMMARY_TYPES, changed)]);
  else if (added.length > 0) await db.raw(history, [jsonRows(HISTORY_TYPES, added)]);
  else if (changed.length > 0) await db.raw(funnel, [jsonRows(SUMMARY_TYPES, changed)]);
}

/** SQLite, in process: a multi-row VALUES list per chunk (a VALUES list counts only its variables). */
async function writeSqlite(db: Knex, table: string, types: Record<string, SqlType>, rows: readonly Record<string, unknown>[], tail = ''): Promise<void> {
  const columns = Object.keys(types);
  const one = `(${columns.map(() => '?').join(', ')})`;
  for (const part of dialectOf(db).chunks(rows, { valuesPerRow: columns.length })) {
    const bindings: unknown[] = [];
    for (const r of part) for (const c of columns) bindings.push(r[c] ?? null);
    await db.raw(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${part.map(() => one).join(', ')}${tail}`, bindings as Knex.RawBinding[]);
  }
}

/**
 * Customers deleted at the source leave the funnel: their phase history and funnel rows go (their
 * customer rows, tombstones, keep what they were). Sent again, they start a history anew.
 */
export async function forgetPhases(db: Knex, partner: string, customerIds: readonly string[]): Promise<void> {
  for (const part of dialectOf(db).chunks([...customerIds], 500)) {
    await db('phase_history').where('partner_id', partner).whereIn('customer_id', part).delete();
    await db('funnel_customers').where('partner_id', partner).whereIn('customer_id', part).delete();
  }
}
