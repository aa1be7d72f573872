/**
 * A store and a Loader built by the one composition of after-load jobs (jobs/load-hooks.ts), with
 * commission plans: what the report tests load through.
 */
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { reevaluateForRates } from '../../jobs/commission.js';
import { parseRatesCsv, saveRates } from '../../src/store/fx-rates.js';
import { money as dec } from '../../src/kernel/money.js';
import type { Plan } from '../../src/commission/plans.js';
import { silentLogger } from '../../src/log.js';
import { refreshFactsForRates } from '../../src/reports/facts.js';
import { Loader } from '../../src/pipeline/load.js';
import type { Entity, SpecRecord, Variant } from '../../src/types.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CHALLENGE_FEES, CPA, plansFrom, plansYaml, planWith } from '../support/plans.js';
import { raw } from '../support/records.js';
import { fixedClock, type StoreBackend, type TestStore } from '../support/stores.js';

/** The plans the reports are computed with: the CPA and 10% of challenge and reset fees. */
export const PLANS = plansYaml(CPA, planWith(CHALLENGE_FEES, { include_reset_fee: 'true' }));

export interface ReportWorld {
  t: TestStore;
  loader: Loader;
  plans: Plan[];
  clock: ReturnType<typeof fixedClock>;
  load(entity: Entity, records: SpecRecord[], options?: { partner?: string; variant?: Variant }): Promise<void>;
  rates(csv: string): Promise<void>;
  drop(): Promise<void>;
}

export async function reportWorld(backend: StoreBackend, yaml = PLANS): Promise<ReportWorld> {
  const clock = fixedClock('2026-11-22T10:00:00.000Z');
  const t = await backend.create(clock);
  const plans = plansFrom(yaml);
  const loader = loaderWithEveryJob(t.store, { plans });
  let run = 0;
  return {
    t, loader, plans, clock,
    async load(entity, records, options = {}) {
      const result = await loader.load({ partner: options.partner ?? 'casino', variant: options.variant ?? 'igaming', entity, runId: `run-${++run}`, records: raw(records) });
      assert.equal(result.rejected, 0, `test records must be valid: ${JSON.stringify(result.rejects)}`);
    },
    async rates(csv) {
      const { rates, problems } = parseRatesCsv(csv);
      assert.deepEqual(problems, []);
      const saved = await t.store.transaction(async (trx) => {
        const result = await saveRates(trx, rates, 'test.csv', t.store.now());
        await refreshFactsForRates(trx, rates);
        return result;
      });
      await reevaluateForRates(t.store, plans, saved, 'fx-test', silentLogger());
    },
    drop: () => t.drop(),
  };
}

export const person = (id: string, affiliate: string, extra: SpecRecord = {}): SpecRecord => ({
  customer_id: id, signup_date: '2026-11-01T09:30:00Z', affiliate_id: affiliate, first_name: 'Ann', last_name: 'Lee', email: `${id}@example.com`, click_id: `click-${id}`, ...extra,
});

export const money = (id: string, customerId: string, type: string, amount: number, extra: SpecRecord = {}): SpecRecord => ({
  transaction_id: id, customer_id: customerId, transaction_type: type, amount_currency: amount, currency: 'USD',
  transaction_date: '2026-11-02T12:00:00Z', status: 'approved', ...extra,
});

/** Every row of the fact tables, values as canonical text (decimals compared by value), in key order. */
export async function factTables(knex: Knex): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of ['report_ftd', 'report_cells', 'report_month_cells', 'report_purchase_cells', 'report_depositors']) {
    const rows: Record<string, unknown>[] = await knex(table).select('*');
    out[table] = rows.map((r) => Object.keys(r).sort().map((k) => {
      const v = r[k];
      if (v === null || v === undefined) return `${k}=`;
      const text = String(v);
      return `${k}=${/^-?\d+(\.\d+)?$/.test(text) ? dec(text).toFixed() : /^\d{4}-\d\d-\d\d/.test(text) && k !== 'transaction_date' ? text.slice(0, 10) : text}`;
    }).join('|')).sort();
  }
  return out;
}
