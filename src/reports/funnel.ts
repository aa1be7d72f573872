/**
 * The prop-trading evaluation funnel (docs/reports.md, Funnel): signup → phase_1 → phase_2 →
 * funded, failed at each stage; counts, conversion between consecutive stages and overall, median
 * days between stages; by affiliate, challenge_type, account_size or signup cohort (UTC month of
 * signup_date). It reads `funnel_customers` (one row per customer, kept by the load transaction,
 * ./phase-history.ts), never the raw customer rows: one grouped scan of the rows the filters keep
 * (on SQLite, one more per median step).
 * `funnelExplain` lists the customers behind one cell, with their phase history.
 */
import type { Knex } from 'knex';
import { dialectOf } from '../store/dialect/index.js';
import { readHistories, type FunnelCustomer, type PhaseEntry } from './phase-history.js';

export const FUNNEL_GROUPS = ['affiliate', 'challenge_type', 'account_size', 'cohort'] as const;
export type FunnelGroup = (typeof FUNNEL_GROUPS)[number];

const GROUP_COLUMN: Record<FunnelGroup, string> = {
  affiliate: 'affiliate_id',
  challenge_type: 'challenge_type',
  account_size: 'account_size',
  cohort: 'cohort',
};

/** The cells `--explain` can name: a stage reached, or failed at a stage. */
export const FUNNEL_CELLS = [
  'signup', 'phase_1', 'phase_2', 'funded', 'failed_phase_1', 'failed_phase_2', 'failed_funded', 'failed_unknown',
  // A median: the customers it is taken over, in order of their days.
  'days_signup_phase_1', 'days_phase_1_phase_2', 'days_phase_2_funded',
] as const;
export type FunnelCell = (typeof FUNNEL_CELLS)[number];

/** The group value shown for customers without one (no challenge_type or account_size sent). */
export const NO_VALUE = '(none)';

export interface FunnelFilters {
  partner?: string;
  affiliate?: string;
  /** First signup day, YYYY-MM-DD (UTC), inclusive. */
  from?: string;
  /** Last signup day, YYYY-MM-DD (UTC), inclusive. */
  to?: string;
  by?: FunnelGroup;
}

export interface FunnelRow {
  /** The group's value (null: the group of customers without one); absent without `by`. */
  group?: string | null;
  signups: number;
  phase_1: number;
  phase_2: number;
  funded: number;
  failed: { phase_1: number; phase_2: number; funded: number; unknown: number };
  /** Share of the previous stage that reached the next; overall = funded / signups. Null when the base is 0. */
  conversion: { signup_phase_1: number | null; phase_1_phase_2: number | null; phase_2_funded: number | null; overall: number | null };
  /** Median days between the stages, over the customers whose both times are known; null when none. */
  median_days: { signup_phase_1: number | null; phase_1_phase_2: number | null; phase_2_funded: number | null };
  /** How many customers each median is taken over. */
  median_of: { signup_phase_1: number; phase_1_phase_2: number; phase_2_funded: number };
}

export const MEDIAN_STEPS = [
  ['signup_phase_1', 'days_signup_phase_1'],
  ['phase_1_phase_2', 'days_phase_1_phase_2'],
  ['phase_2_funded', 'days_phase_2_funded'],
] as const;

function filtered(knex: Knex, filters: FunnelFilters): Knex.QueryBuilder {
  const q = knex('funnel_customers');
  if (filters.partner !== undefined) q.where('partner_id', filters.partner);
  if (filters.affiliate !== undefined) q.where('affiliate_id', filters.affiliate);
  if (filters.from !== undefined) q.where('signup_day', '>=', filters.from);
  if (filters.to !== undefined) q.where('signup_day', '<=', filters.to);
  return q;
}

/** Ratios to four places, days to two: what the report shows and what a check recomputes. */
export const ratio = (part: number, whole: number): number | null => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);
export const roundDays = (days: number | null): number | null => (days === null ? null : Math.round(days * 100) / 100);

const n = (value: unknown): number => Number(value ?? 0);
const groupKey = (value: unknown): string => (value === null || value === undefined ? '\u0000' : String(value));

type Medians = Map<string, Map<string, number>>;

/**
 * The median of each step's known day counts per group, where the store has no median aggregate
 * for the counting scan (the dialect's `median`: PostgreSQL's ordered-set aggregate): SQLite ranks
 * the values of each step within the group and averages the middle one or two.
 */
async function rankedMedians(knex: Knex, filters: FunnelFilters, column?: string): Promise<Medians> {
  const medians: Medians = new Map();
  for (const [step, days] of MEDIAN_STEPS) {
    const ranked = filtered(knex, filters).whereNotNull(days).select(
      { days },
      knex.raw(`ROW_NUMBER() OVER (${column ? 'PARTITION BY ?? ' : ''}ORDER BY ??) AS rn`, column ? [column, days] : [days]),
      knex.raw(`COUNT(*) OVER (${column ? 'PARTITION BY ??' : ''}) AS n`, column ? [column] : []),
    );
    if (column) ranked.select({ grp: column });
    const middle = knex.from(ranked.as('ranked')).whereRaw('rn * 2 IN (n, n + 1, n + 2)').select(knex.raw('AVG(days) AS median'));
    if (column) middle.select('grp').groupBy('grp');
    const byGroup = new Map<string, number>();
    for (const r of (await middle) as Record<string, unknown>[]) {
      if (r.median !== null && r.median !== undefined) byGroup.set(groupKey(column ? r.grp : 'all'), Number(r.median));
    }
    medians.set(step, byGroup);
  }
  return medians;
}

/** The funnel, one row per group (one row in all without `by`), groups in their natural order. */
export async function funnelReport(knex: Knex, filters: FunnelFilters = {}): Promise<FunnelRow[]> {
  const column = filters.by ? GROUP_COLUMN[filters.by] : undefined;
  const medianSql = dialectOf(knex).median;
  const counts = filtered(knex, filters).select(
    knex.raw('COUNT(*) AS signups'),
    knex.raw('SUM(reached_phase_1) AS phase_1'),
    knex.raw('SUM(reached_phase_2) AS phase_2'),
    knex.raw('SUM(reached_funded) AS funded'),
    ...(['phase_1', 'phase_2', 'funded', 'unknown'].map((s) => knex.raw(`SUM(CASE WHEN failed_stage = ? THEN 1 ELSE 0 END) AS ??`, [s, `failed_${s}`]))),
    ...MEDIAN_STEPS.map(([step, days]) => knex.raw('COUNT(??) AS ??', [days, `of_${step}`])),
    ...(medianSql ? MEDIAN_STEPS.map(([step, days]) => knex.raw(`${medianSql} AS ??`, [days, `median_${step}`])) : []),
  );
  if (column) counts.select({ grp: column }).groupBy(column);
  const countRows = (await counts) as Record<string, unknown>[];
  const separate: Medians = medianSql ? new Map() : await rankedMedians(knex, filters, column);

  const rows = countRows.filter((r) => n(r.signups) > 0).map((r): FunnelRow => {
    const key = groupKey(column ? r.grp : 'all');
    const median = (step: string): number | null => {
      const value = r[`median_${step}`] ?? separate.get(step)?.get(key);
      return value === null || value === undefined ? null : roundDays(Number(value));
    };
    const signups = n(r.signups);
    const p1 = n(r.phase_1);
    const p2 = n(r.phase_2);
    const funded = n(r.funded);
    return {
      ...(column ? { group: r.grp === null || r.grp === undefined ? null : String(r.grp) } : {}),
      signups, phase_1: p1, phase_2: p2, funded,
      failed: { phase_1: n(r.failed_phase_1), phase_2: n(r.failed_phase_2), funded: n(r.failed_funded), unknown: n(r.failed_unknown) },
      conversion: { signup_phase_1: ratio(p1, signups), phase_1_phase_2: ratio(p2, p1), phase_2_funded: ratio(funded, p2), overall: ratio(funded, signups) },
      median_days: { signup_phase_1: median('signup_phase_1'), phase_1_phase_2: median('phase_1_phase_2'), phase_2_funded: median('phase_2_funded') },
      median_of: { signup_phase_1: n(r.of_signup_phase_1), phase_1_phase_2: n(r.of_phase_1_phase_2), phase_2_funded: n(r.of_phase_2_funded) },
    };
  });
  return rows.sort((a, b) => compareGroups(filters.by, a.group ?? null, b.group ?? null));
}

/** Groups in natural order: account sizes by number, the rest as text; customers without a value last. */
function compareGroups(by: FunnelGroup | undefined, a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (by === 'account_size') return Number(a) - Number(b);
  return a < b ? -1 : 1;
}

export type ExplainedCustomer = Pick<FunnelCustomer, 'partner_id' | 'customer_id' | 'affiliate_id' | 'campaign_id' | 'challenge_type' | 'account_size' | 'signup_date' | 'current_phase'> & {
  /** With a median cell: the customer's days between the step's two stages. */
  days?: number;
  history: PhaseEntry[];
};

/**
 * The customers behind one cell of the funnel (the same filters; with `by`, the group's value,
 * `(none)` for customers without one), each with its phase history, in partner and customer order.
 */
export async function funnelExplain(knex: Knex, filters: FunnelFilters, cell: FunnelCell, group?: string): Promise<ExplainedCustomer[]> {
  const q = filtered(knex, filters);
  if (filters.by) {
    if (group === undefined) throw new Error(`--explain with --by ${filters.by} needs the group's value (--group)`);
    const column = GROUP_COLUMN[filters.by];
    if (group === NO_VALUE) q.whereNull(column);
    else q.where(column, group);
  }
  if (cell === 'phase_1' || cell === 'phase_2' || cell === 'funded') q.where(`reached_${cell}`, 1);
  else if (cell.startsWith('failed_')) q.where('failed_stage', cell.slice('failed_'.length));
  const days = cell.startsWith('days_') ? cell : undefined;
  if (days) q.whereNotNull(days).select({ days }).orderBy(days);
  const rows = (await q.select('partner_id', 'customer_id', 'affiliate_id', 'campaign_id', 'challenge_type', 'account_size', 'signup_date', 'current_phase')
    .orderBy([{ column: 'partner_id' }, { column: 'customer_id' }])) as Omit<ExplainedCustomer, 'history'>[];
  if (days) for (const r of rows) r.days = Number(r.days);
  const out: ExplainedCustomer[] = [];
  const partners = [...new Set(rows.map((r) => r.partner_id))];
  const histories = new Map<string, Map<string, PhaseEntry[]>>();
  for (const p of partners) histories.set(p, await readHistories(knex, p, rows.filter((r) => r.partner_id === p).map((r) => r.customer_id)));
  for (const r of rows) out.push({ ...r, history: histories.get(r.partner_id)?.get(r.customer_id) ?? [] });
  return out;
}
