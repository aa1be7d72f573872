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
import { entityTable } from '../store/tables.js';
import { storedToRecord } from '../store/rows.js';
import { decimalText, fromStoreTimestamp, toUtcTimestamp } from '../store/values.js';

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

/**
 * The entries an observation adds to a customer's history (empty when it adds nothing).
 * Pure: the rules above, on one customer.
 */
export function observe(history: readonly PhaseEntry[], phase: unknown, at: string, source: TimeSource): PhaseEntry[] {
  if (!isPhase(phase)) return [];
  const last = history[history.length - 1];
  if (last?.phase === phase) return [];
  let seq = last?.seq ?? 0;
  const added: PhaseEntry[] = [];
  if (phase === 'failed') {
    added.push({ seq: ++seq, phase, observed_at: at, time_source: source, failed_from: isStage(last?.phase) ? last.phase : null });
    return added;
  }
  const reached = new Set(history.map((e) => e.phase));
  for (const earlier of STAGES.slice(0, STAGES.indexOf(phase))) {
    if (!reached.has(earlier)) added.push({ seq: ++seq, phase: earlier, observed_at: null, time_source: 'inferred', failed_from: null });
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

/** The time of a customer's first entry at a stage (null when that entry is inferred or absent). */
function firstAt(history: readonly PhaseEntry[], stage: Stage): string | null {
  return history.find((e) => e.phase === stage)?.observed_at ?? null;
}

/** What the funnel counts for one customer: its last loaded record and its whole history. */
export function summarize(partner: string, record: SpecRecord, history: readonly PhaseEntry[], now: string): FunnelCustomer {
  const signup = toUtcTimestamp(String(record.signup_date));
  const reached = new Set(history.map((e) => e.phase));
  const last = history[history.length - 1];
  const p1 = firstAt(history, 'phase_1');
  const p2 = firstAt(history, 'phase_2');
  const funded = firstAt(history, 'funded');
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
    current_phase: last?.phase ?? null,
    reached_phase_1: reached.has('phase_1') ? 1 : 0,
    reached_phase_2: reached.has('phase_2') ? 1 : 0,
    reached_funded: reached.has('funded') ? 1 : 0,
    phase_1_at: p1,
    phase_2_at: p2,
    funded_at: funded,
    failed_stage: last?.phase === 'failed' ? (last.failed_from ?? 'unknown') : null,
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
const HISTORY_CHUNK = 500;
const SUMMARY_CHUNK = 200;

/** The stored histories of these customers of a partner, each in order. */
export async function readHistories(db: Knex, partner: string, customerIds: readonly string[]): Promise<Map<string, PhaseEntry[]>> {
  const out = new Map<string, PhaseEntry[]>();
  for (let i = 0; i < customerIds.length; i += READ_CHUNK) {
    const rows = (await db('phase_history').where('partner_id', partner).whereIn('customer_id', customerIds.slice(i, i + READ_CHUNK))
      .select('customer_id', 'seq', 'phase', 'observed_at', 'time_source', 'failed_from').orderBy([{ column: 'customer_id' }, { column: 'seq' }])) as (PhaseEntry & { customer_id: string })[];
    for (const { customer_id, ...entry } of rows) {
      let list = out.get(customer_id);
      if (!list) out.set(customer_id, (list = []));
      list.push({ ...entry, seq: Number(entry.seq) });
    }
  }
  return out;
}

/**
 * Records what a batch of a prop-trading partner's customers (the versions the load applied, one
 * per customer) adds to their phase history, and rewrites their funnel rows. Runs inside the load
 * transaction.
 */
export async function recordPhases(db: Knex, partner: string, customers: readonly LoadedCustomer[], runId: string | null, now: string): Promise<number> {
  if (customers.length === 0) return 0;
  const histories = await readHistories(db, partner, customers.map((c) => String(c.record.customer_id)));
  const added: Record<string, unknown>[] = [];
  const summaries: FunnelCustomer[] = [];
  for (const { record, loadedAt } of customers) {
    const id = String(record.customer_id);
    const history = histories.get(id) ?? [];
    const modified = typeof record.last_modified_date === 'string' ? toUtcTimestamp(record.last_modified_date) : null;
    const entries = observe(history, record.phase, modified ?? loadedAt, modified ? 'last_modified_date' : 'loaded_at');
    for (const e of entries) added.push({ partner_id: partner, customer_id: id, ...e, run_id: runId, loaded_at: now });
    summaries.push(summarize(partner, record, [...history, ...entries], now));
  }
  for (let i = 0; i < added.length; i += HISTORY_CHUNK) await db('phase_history').insert(added.slice(i, i + HISTORY_CHUNK));
  for (let i = 0; i < summaries.length; i += SUMMARY_CHUNK) {
    await db('funnel_customers').insert(summaries.slice(i, i + SUMMARY_CHUNK)).onConflict(['partner_id', 'customer_id']).merge();
  }
  return added.length;
}

/** Customers stored before the phase history existed: their stored phase, at its time, once. */
export async function seedPhaseHistory(db: Knex): Promise<void> {
  const table = entityTable('prop-trading', 'customers');
  const partners = (await db('partners').where('variant', 'prop-trading').select('partner_id')) as { partner_id: string }[];
  for (const { partner_id: partner } of partners) {
    let after = '';
    for (;;) {
      const rows = (await db('customers').where('partner_id', partner).andWhere('customer_id', '>', after)
        .orderBy('customer_id').limit(READ_CHUNK).select('*')) as Record<string, unknown>[];
      if (rows.length === 0) break;
      after = String(rows[rows.length - 1]?.customer_id);
      const customers = rows.map((row) => ({ record: storedToRecord(table, row), loadedAt: fromStoreTimestamp(row.loaded_at) as string }));
      await recordPhases(db, partner, customers, 'migration-008', new Date().toISOString().replace('Z', '000Z'));
    }
  }
}
