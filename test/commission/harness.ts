/**
 * A store, a Loader wired to the commission job, and helpers to read the ledger back: what every
 * commission test builds on. Plans are written as YAML, exactly as in config/commissions.yaml
 * (the shared ones in ../support/plans.ts).
 */
import assert from 'node:assert/strict';
import { commissionJob } from '../../jobs/commission.js';
import { recompute } from '../../src/commission/recompute.js';
import { saveRates, parseRatesCsv } from '../../src/store/fx-rates.js';
import { listHolds, toLedgerLine, type LedgerLine } from '../../src/commission/ledger.js';
import type { Plan } from '../../src/commission/plans.js';
import { money } from '../../src/kernel/money.js';
import { silentLogger } from '../../src/log.js';
import type { Loader } from '../../src/pipeline/load.js';
import type { Entity, SpecRecord, Variant } from '../../src/types.js';
import { loaderWith } from '../support/loader.js';
import { plansFrom } from '../support/plans.js';
import { raw } from '../support/records.js';
import { fixedClock, type StoreBackend, type TestStore } from '../support/stores.js';
import { reevaluateForRates } from '../../jobs/commission.js';

export interface Harness {
  t: TestStore;
  loader: Loader;
  clock: ReturnType<typeof fixedClock>;
  plans: Plan[];
  load(entity: Entity, records: SpecRecord[], options?: { partner?: string; variant?: Variant }): Promise<void>;
  rates(csv: string): Promise<void>;
  lines(filter?: { key?: string; plan?: string }): Promise<LedgerLine[]>;
  /** Net per key and affiliate, as `key affiliate` → cents text (zero totals left out). */
  net(): Promise<Map<string, string>>;
  holds(): ReturnType<typeof listHolds>;
  /** Recompute agrees with the ledger: no difference for any partner. */
  agrees(): Promise<void>;
  drop(): Promise<void>;
}

export async function harness(backend: StoreBackend, plansYaml: string, clockAt = '2026-11-22T10:00:00.000Z'): Promise<Harness> {
  const clock = fixedClock(clockAt);
  const t = await backend.create(clock);
  const plans = plansFrom(plansYaml);
  const loader = loaderWith(t.store, [commissionJob(t.store, plans, silentLogger())]);
  let run = 0;
  const h: Harness = {
    t, loader, clock, plans,
    async load(entity, records, options = {}) {
      const result = await loader.load({ partner: options.partner ?? 'casino', variant: options.variant ?? 'igaming', entity, runId: `run-${++run}`, records: raw(records) });
      assert.equal(result.rejected, 0, `test records must be valid: ${JSON.stringify(result.rejects)}`);
    },
    async rates(csv) {
      const { rates, problems } = parseRatesCsv(csv);
      assert.deepEqual(problems, []);
      const saved = await t.store.transaction((trx) => saveRates(trx, rates, 'test.csv', t.store.now()));
      await reevaluateForRates(t.store, plans, saved, 'fx-test', silentLogger());
    },
    async lines(filter = {}) {
      const q = t.store.knex('commission_ledger').select('*').orderBy('id');
      if (filter.key) q.where('line_key', filter.key);
      if (filter.plan) q.where('plan_id', filter.plan);
      return ((await q) as Record<string, unknown>[]).map(toLedgerLine);
    },
    async net() {
      const totals = new Map<string, ReturnType<typeof money>>();
      for (const l of await h.lines()) {
        const k = `${l.line_key} ${l.affiliate_id}`;
        totals.set(k, (totals.get(k) ?? money(0)).plus(money(l.amount_usd)));
      }
      return new Map([...totals].filter(([, v]) => !v.isZero()).map(([k, v]): [string, string] => [k, v.toFixed(2)]).sort());
    },
    holds: () => listHolds(t.store.knex),
    async agrees() {
      const results = await recompute(t.store, plans, { runId: 'check' });
      const differences = results.flatMap((r) => r.differences);
      assert.deepEqual(differences, [], 'recompute must agree with the incremental ledger');
      for (const r of results) assert.deepEqual(r.derived, { customer_days: 0, affiliate_months: 0, attributions: 0 }, `derived state of ${r.partner} must match a rebuild`);
    },
    drop: () => t.drop(),
  };
  return h;
}

/** [reason, amount] of lines, for compact assertions. */
export const brief = (lines: readonly LedgerLine[]): [string, string][] => lines.map((l) => [l.reason, l.amount_usd]);

export const igCustomer = (id: string, extra: SpecRecord = {}): SpecRecord => ({
  customer_id: id, signup_date: '2026-10-01T09:30:00Z', affiliate_id: 'aff-1', country_code: 'GB', ...extra,
});

export const tx = (id: string, customerId: string, type: string, amountUsd: number, extra: SpecRecord = {}): SpecRecord => ({
  transaction_id: id, customer_id: customerId, transaction_type: type, amount_currency: amountUsd, currency: 'USD',
  transaction_date: '2026-10-02T12:00:00Z', status: 'approved', ...extra,
});

export const play = (date: string, customerId: string, extra: SpecRecord = {}): SpecRecord => ({
  date, customer_id: customerId, game_type: 'slots', currency: 'USD', ...extra,
});

export const trader = (id: string, extra: SpecRecord = {}): SpecRecord => ({
  customer_id: id, signup_date: '2026-10-01T09:30:00Z', affiliate_id: 'aff-1', challenge_type: 'standard', account_size: 50000, phase: 'phase_1', ...extra,
});

export const prop = { partner: 'firm', variant: 'prop-trading' as const };
