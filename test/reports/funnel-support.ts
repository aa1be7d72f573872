/**
 * A store and a Loader built from the one composition of after-load jobs (jobs/load-hooks.ts),
 * for the funnel tests; and the funnel recomputed with plain SQL from the customer rows and the
 * phase history, to compare every cell of `funnelReport` with.
 */
import assert from 'node:assert/strict';
import { Loader } from '../../src/pipeline/load.js';
import { MEDIAN_STEPS, ratio, roundDays, type FunnelGroup, type FunnelRow } from '../../src/reports/funnel.js';
import { daysBetween } from '../../src/reports/phase-history.js';
import { fromStoreTimestamp } from '../../src/store/values.js';
import type { SpecRecord } from '../../src/types.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { raw } from '../support/records.js';
import { fixedClock, type StoreBackend, type TestStore } from '../support/stores.js';

export interface FunnelHarness {
  t: TestStore;
  loader: Loader;
  clock: ReturnType<typeof fixedClock>;
  /** Loads prop-trading customers in one batch; returns how many the store did not apply (stale). */
  load(records: SpecRecord[], partner?: string): Promise<number>;
  drop(): Promise<void>;
}

export async function funnelHarness(backend: StoreBackend, clockAt = '2026-10-01T00:00:00.000Z'): Promise<FunnelHarness> {
  const clock = fixedClock(clockAt);
  const t = await backend.create(clock);
  const loader = loaderWithEveryJob(t.store);
  let run = 0;
  return {
    t, loader, clock,
    async load(records, partner = 'firm') {
      const result = await loader.load({ partner, variant: 'prop-trading', entity: 'customers', runId: `run-${++run}`, records: raw(records) });
      assert.equal(result.rejected, 0, `test records must be valid: ${JSON.stringify(result.rejects)}`);
      return result.stale;
    },
    drop: () => t.drop(),
  };
}

export const trader = (id: string, signup: string, extra: SpecRecord = {}): SpecRecord => ({
  customer_id: id,
  signup_date: signup,
  affiliate_id: 'aff-1',
  challenge_type: 'standard',
  account_size: 50000,
  ...extra,
});

/** One customer's facts, read with plain SQL from `customers` and `phase_history` (not from `funnel_customers`). */
interface Fact {
  affiliate_id: string;
  challenge_type: string | null;
  account_size: string | null;
  signup: string;
  reached: Record<'phase_1' | 'phase_2' | 'funded', boolean>;
  at: Record<'phase_1' | 'phase_2' | 'funded', string | null>;
  failed: string | null;
}

const STAGES = ['phase_1', 'phase_2', 'funded'] as const;

export async function factsBySql(t: TestStore, partner?: string): Promise<Fact[]> {
  const same = 'h.partner_id = c.partner_id AND h.customer_id = c.customer_id';
  const per = STAGES.map((s) => `
      (SELECT COUNT(*) FROM phase_history h WHERE ${same} AND h.phase = '${s}') AS n_${s},
      (SELECT h.observed_at FROM phase_history h WHERE ${same} AND h.phase = '${s}' ORDER BY h.seq LIMIT 1) AS at_${s}`).join(',');
  const sql = `
    SELECT c.customer_id, c.affiliate_id, c.challenge_type, c.account_size, c.signup_date, ${per},
      (SELECT CASE WHEN h.phase = 'failed' THEN COALESCE(h.failed_from, 'unknown') END
         FROM phase_history h WHERE ${same} ORDER BY h.seq DESC LIMIT 1) AS failed
    FROM customers c JOIN partners p ON p.partner_id = c.partner_id AND p.variant = 'prop-trading'
    ${partner ? 'WHERE c.partner_id = ?' : ''}`;
  const result = (await t.store.knex.raw(sql, partner ? [partner] : [])) as { rows?: Record<string, unknown>[] } | Record<string, unknown>[];
  const rows = Array.isArray(result) ? result : (result.rows ?? []);
  return rows.map((r) => ({
    affiliate_id: String(r.affiliate_id),
    challenge_type: (r.challenge_type as string | null) ?? null,
    account_size: r.account_size === null ? null : String(Number(r.account_size)),
    signup: fromStoreTimestamp(r.signup_date) as string,
    reached: { phase_1: Number(r.n_phase_1) > 0, phase_2: Number(r.n_phase_2) > 0, funded: Number(r.n_funded) > 0 },
    at: { phase_1: (r.at_phase_1 as string | null) ?? null, phase_2: (r.at_phase_2 as string | null) ?? null, funded: (r.at_funded as string | null) ?? null },
    failed: (r.failed as string | null) ?? null,
  }));
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const groupOf = (by: FunnelGroup | undefined, f: Fact): string | null =>
  by === 'affiliate' ? f.affiliate_id : by === 'challenge_type' ? f.challenge_type : by === 'account_size' ? f.account_size : by === 'cohort' ? f.signup.slice(0, 7) : 'all';

/** The funnel computed from the facts, in the report's shape (groups in the report's order). */
export function expectedFunnel(facts: Fact[], by?: FunnelGroup, filter: { from?: string; to?: string; affiliate?: string } = {}): FunnelRow[] {
  const kept = facts.filter((f) => (!filter.from || f.signup.slice(0, 10) >= filter.from) && (!filter.to || f.signup.slice(0, 10) <= filter.to)
    && (!filter.affiliate || f.affiliate_id === filter.affiliate));
  const groups = new Map<string | null, Fact[]>();
  for (const f of kept) {
    const g = groupOf(by, f);
    groups.set(g, [...(groups.get(g) ?? []), f]);
  }
  const rows: FunnelRow[] = [];
  for (const [group, list] of groups) {
    const count = (p: (f: Fact) => boolean) => list.filter(p).length;
    const signups = list.length;
    const p1 = count((f) => f.reached.phase_1);
    const p2 = count((f) => f.reached.phase_2);
    const funded = count((f) => f.reached.funded);
    const steps: Record<string, number[]> = {
      signup_phase_1: list.flatMap((f) => { const d = daysBetween(f.signup, f.at.phase_1); return d === null ? [] : [d]; }),
      phase_1_phase_2: list.flatMap((f) => { const d = daysBetween(f.at.phase_1, f.at.phase_2); return d === null ? [] : [d]; }),
      phase_2_funded: list.flatMap((f) => { const d = daysBetween(f.at.phase_2, f.at.funded); return d === null ? [] : [d]; }),
    };
    const med = (s: string) => roundDays(median(steps[s] ?? []));
    rows.push({
      ...(by ? { group } : {}),
      signups, phase_1: p1, phase_2: p2, funded,
      failed: { phase_1: count((f) => f.failed === 'phase_1'), phase_2: count((f) => f.failed === 'phase_2'), funded: count((f) => f.failed === 'funded'), unknown: count((f) => f.failed === 'unknown') },
      conversion: { signup_phase_1: ratio(p1, signups), phase_1_phase_2: ratio(p2, p1), phase_2_funded: ratio(funded, p2), overall: ratio(funded, signups) },
      median_days: { signup_phase_1: med('signup_phase_1'), phase_1_phase_2: med('phase_1_phase_2'), phase_2_funded: med('phase_2_funded') },
      median_of: Object.fromEntries(MEDIAN_STEPS.map(([s]) => [s, steps[s]?.length ?? 0])) as FunnelRow['median_of'],
    });
  }
  return rows.sort((a, b) => {
    const x = a.group ?? null;
    const y = b.group ?? null;
    if (x === y) return 0;
    if (x === null) return 1;
    if (y === null) return -1;
    return by === 'account_size' ? Number(x) - Number(y) : x < y ? -1 : 1;
  });
}
