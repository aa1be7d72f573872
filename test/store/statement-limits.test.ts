/**
 * Every multi-row statement of the load path and the after-load jobs, at and one past the size a
 * statement may carry: SQLite allows 500 terms in a compound SELECT (knex's multi-row insert) and
 * 32,766 variables, PostgreSQL 65,535 bind parameters. Each case loads through the real Loader
 * with every after-load job (or calls the job's own entry point) and counts the rows stored.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { saveRates } from '../../src/store/fx-rates.js';
import { formatPlanError, parsePlans } from '../../src/commission/load-plans.js';
import { money } from '../../src/kernel/money.js';
import { loadFraudConfig } from '../../src/fraud/config.js';
import { packageRoot } from '../../src/paths.js';
import { rebuildFacts } from '../../src/reports/facts.js';
import { dialectOf } from '../../src/store/dialect/index.js';
import { DIALECTS, rowsPerStatement } from '../../src/store/dialects.js';
import type { Entity, SpecRecord, Variant } from '../../src/types.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { raw } from '../support/records.js';
import { STORES, fixedClock, type TestStore } from '../support/stores.js';

/** SQLite's compound-SELECT terms: the row count of a knex multi-row insert that used to fail one past it. */
const LIMIT = DIALECTS.sqlite.maxInsertRows as number;
const SIZES = [LIMIT, LIMIT + 1];

const pad = (i: number): string => String(i).padStart(5, '0');
const dayAfter = (from: string, days: number): string => new Date(Date.parse(`${from}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

function plansFor(partners: readonly string[]): string {
  return `plans:\n${partners.flatMap((p) => [
    `  - { id: ${p}-cpa, kind: cpa_ftd, partner: ${p}, affiliates: all, effective: { from: 2020-01-01 }, amount_usd: { default: 100 } }`,
    `  - { id: ${p}-rs, kind: revshare, partner: ${p}, affiliates: all, effective: { from: 2020-01-01 }, revenue: ggr, tiers: { mode: tiered, bands: [{ from_usd: 0, rate: 0.25 }] } }`,
  ]).join('\n')}\n`;
}

interface World {
  store: TestStore['store'];
  /** Loads one batch; a rejected record fails the test unless `invalid` says the records are meant to be. */
  load(partner: string, entity: Entity, records: SpecRecord[], variant?: Variant, invalid?: boolean): Promise<{ rejected: number; waiting: number }>;
}

const customer = (id: string, affiliate: string, extra: SpecRecord = {}): SpecRecord => ({ customer_id: id, signup_date: '2026-10-01T09:00:00Z', affiliate_id: affiliate, ...extra });
const deposit = (id: string, customerId: string, extra: SpecRecord = {}): SpecRecord => ({
  transaction_id: id, customer_id: customerId, transaction_type: 'deposit', amount_currency: 50, currency: 'USD', transaction_date: '2026-10-02T12:00:00Z', status: 'approved', ...extra,
});
const activity = (customerId: string, date: string): SpecRecord => ({ date, customer_id: customerId, game_type: 'slots', currency: 'USD', bets_count: 3, total_bets: 100, wins: 90, ggr: 10, ngr: 10 });

async function counts(knex: Knex, partner: string, tables: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of tables) out[table] = Number(((await knex(table).where('partner_id', partner).count({ n: '*' })) as { n: unknown }[])[0]?.n);
  return out;
}

const every = (tables: readonly string[], n: number): Record<string, number> => Object.fromEntries(tables.map((t) => [t, n]));

interface Case {
  name: string;
  /** Runs the statement with n rows for this partner; resolves with rows stored per table, and what each should be. */
  run(w: World, partner: string, n: number): Promise<{ got: Record<string, number>; want: Record<string, number> }>;
}

const CASES: Case[] = [
  {
    name: 'n first deposits of n affiliates in one batch (report facts, FTD, CPA ledger)',
    async run(w, p, n) {
      const ids = Array.from({ length: n }, (_, i) => `c-${pad(i)}`);
      await w.load(p, 'customers', ids.map((id, i) => customer(id, `aff-${pad(i)}`)));
      await w.load(p, 'transactions', ids.map((id) => deposit(`t-${id}`, id)));
      const tables = ['report_ftd', 'report_depositors', 'report_month_cells', 'commission_ledger'];
      // Two cells per affiliate: the signup day's and the deposit day's.
      return { got: await counts(w.store.knex, p, [...tables, 'report_cells']), want: { ...every(tables, n), report_cells: 2 * n } };
    },
  },
  {
    name: 'the same facts rebuilt from the raw tables (rebuildFacts)',
    async run(w, p, n) {
      const ids = Array.from({ length: n }, (_, i) => `c-${pad(i)}`);
      await w.load(p, 'customers', ids.map((id, i) => customer(id, `aff-${pad(i)}`)));
      await w.load(p, 'transactions', ids.map((id) => deposit(`t-${id}`, id)));
      await w.store.knex('report_cells').where('partner_id', p).delete();
      await rebuildFacts(w.store, p, 'igaming');
      const tables = ['report_ftd', 'report_depositors', 'report_month_cells'];
      return { got: await counts(w.store.knex, p, [...tables, 'report_cells']), want: { ...every(tables, n), report_cells: 2 * n } };
    },
  },
  {
    name: 'n FTDs in a currency without rates (commission FX holds)',
    async run(w, p, n) {
      const ids = Array.from({ length: n }, (_, i) => `c-${pad(i)}`);
      await w.load(p, 'customers', ids.map((id) => customer(id, 'aff-1')));
      await w.load(p, 'transactions', ids.map((id) => deposit(`t-${id}`, id, { currency: 'ISK' })));
      const holds = Number(((await w.store.knex('commission_holds').where('partner_id', p).where('plan_kind', 'cpa_ftd').count({ n: '*' })) as { n: unknown }[])[0]?.n);
      return { got: { commission_holds: holds }, want: { commission_holds: n } };
    },
  },
  {
    // An e-mail, not a click id: a click id on more than click_max_accounts customers is a tracker's fault, not one person.
    name: 'n customers sharing an e-mail (one fraud flag of n customers, review holds of their CPA)',
    async run(w, p, n) {
      const ids = Array.from({ length: n }, (_, i) => `c-${pad(i)}`);
      await w.load(p, 'customers', ids.map((id, i) => customer(id, `aff-${pad(i % 7)}`, { email: 'shared.person@mail.example' })));
      await w.load(p, 'transactions', ids.map((id) => deposit(`t-${id}`, id)));
      const flagged = Number(((await w.store.knex('fraud_flag_customers as c').join('fraud_flags as f', 'f.id', 'c.flag_id')
        .where('f.partner_id', p).where('f.rule', 'duplicate_identity').count({ n: '*' })) as { n: unknown }[])[0]?.n);
      const tables = ['fraud_customers', 'commission_review_holds'];
      return { got: { fraud_flag_customers: flagged, ...(await counts(w.store.knex, p, tables)) }, want: { fraud_flag_customers: n, ...every(tables, n) } };
    },
  },
  {
    name: 'one customer\'s activity on n days in one batch (fraud loaded days, commission customer-days)',
    async run(w, p, n) {
      await w.load(p, 'customers', [customer('c-1', 'aff-1', { signup_date: '2024-01-01T09:00:00Z' })]);
      await w.load(p, 'activity', Array.from({ length: n }, (_, i) => activity('c-1', dayAfter('2024-01-01', i))));
      const tables = ['fraud_loaded_days', 'commission_customer_days', 'gaming_activity'];
      return { got: await counts(w.store.knex, p, tables), want: every(tables, n) };
    },
  },
  {
    name: 'a day\'s activity of n customers of n affiliates (affiliate months, report cells)',
    async run(w, p, n) {
      const ids = Array.from({ length: n }, (_, i) => `c-${pad(i)}`);
      await w.load(p, 'customers', ids.map((id, i) => customer(id, `aff-${pad(i)}`)));
      await w.load(p, 'activity', ids.map((id) => activity(id, '2026-10-03')));
      const tables = ['commission_affiliate_months', 'commission_customer_days', 'commission_customers', 'report_month_cells'];
      // Two cells per affiliate: the signup day's and the activity day's.
      return { got: await counts(w.store.knex, p, [...tables, 'report_cells']), want: { ...every(tables, n), report_cells: 2 * n } };
    },
  },
  {
    name: 'n invalid records of one batch (rejects)',
    async run(w, p, n) {
      const r = await w.load(p, 'customers', Array.from({ length: n }, (_, i) => customer(`c-${pad(i)}`, 'aff-1', { signup_date: 'not a date' })), 'igaming', true);
      assert.equal(r.rejected, n);
      return { got: await counts(w.store.knex, p, ['rejects']), want: { rejects: n } };
    },
  },
  {
    name: 'n transactions before their customers (waiting records)',
    async run(w, p, n) {
      const r = await w.load(p, 'transactions', Array.from({ length: n }, (_, i) => deposit(`t-${pad(i)}`, `c-${pad(i)}`)));
      assert.equal(r.waiting, n);
      return { got: await counts(w.store.knex, p, ['waiting_records']), want: { waiting_records: n } };
    },
  },
  {
    name: 'n prop-trading customers of one batch (phase history, funnel)',
    async run(w, p, n) {
      await w.load(p, 'customers', Array.from({ length: n }, (_, i) => customer(`c-${pad(i)}`, 'aff-1', { phase: 'phase_1', challenge_type: 'standard', account_size: 100000 })), 'prop-trading');
      const tables = ['phase_history', 'funnel_customers'];
      return { got: await counts(w.store.knex, p, tables), want: every(tables, n) };
    },
  },
];

for (const backend of STORES) {
  describe(`multi-row statements at their limits (${backend.name})`, function () {
    this.timeout(180_000);
    let t: TestStore;
    let w: World;
    const partnerOf = (c: number, n: number) => `lim-${c}-${n}`;

    before(async () => {
      t = await backend.create(fixedClock('2026-11-22T10:00:00.000Z'));
      const partners = CASES.flatMap((_, c) => SIZES.map((n) => partnerOf(c, n)));
      const { plans, errors } = parsePlans(plansFor(partners), 'limits.yaml');
      assert.deepEqual(errors.map(formatPlanError), []);
      const fraud = (await loadFraudConfig(join(packageRoot(), 'config', 'fraud.yaml'))).config;
      assert.ok(fraud, 'config/fraud.yaml loads');
      const loader = loaderWithEveryJob(t.store, { plans, fraud });
      let run = 0;
      w = {
        store: t.store,
        async load(partner, entity, records, variant = 'igaming', invalid = false) {
          const r = await loader.load({ partner, variant, entity, runId: `run-${++run}`, records: raw(records) });
          if (r.rejected > 0 && !invalid) assert.fail(`test records must be valid: ${JSON.stringify(r.rejects.slice(0, 2))}`);
          return { rejected: r.rejected, waiting: r.waiting };
        },
      };
    });
    after(async () => { await t?.drop(); });

    CASES.forEach((c, i) => {
      for (const n of SIZES) {
        it(`${c.name}: n = ${n}`, async () => {
          const { got, want } = await c.run(w, partnerOf(i, n), n);
          assert.deepEqual(got, want);
        });
      }
    });

    it(`fx rates of one file: ${LIMIT} and ${LIMIT + 1} days`, async () => {
      for (const [currency, n] of [['ISK', LIMIT], ['HUF', LIMIT + 1]] as const) {
        const rates = Array.from({ length: n }, (_, i) => ({ currency, date: dayAfter('2020-01-01', i), rate: money('0.0071') }));
        const r = await t.store.transaction((trx) => saveRates(trx, rates, 'limits.csv', t.store.now()));
        assert.equal(r.added, n);
        const stored = Number(((await t.store.knex('fx_rates').where('currency', currency).count({ n: '*' })) as { n: unknown }[])[0]?.n);
        assert.equal(stored, n);
      }
    });

    it("the store's own limits: a multi-row insert and an IN list at and one past them", async () => {
      const dialect = dialectOf(t.store.knex);
      const perRow = 5;
      const rows = rowsPerStatement(dialect, perRow);
      // SQLite: the 500 compound terms bind first; PostgreSQL: 65,535 parameters / 5 columns.
      assert.equal(rows, backend.name === 'sqlite' ? 500 : 13_107);
      const ids = rowsPerStatement(dialect, 1, 'list');
      assert.equal(ids, backend.name === 'sqlite' ? 32_766 : 65_535);
      for (const n of [rows, rows + 1]) {
        const partner = `lim-insert-${n}`;
        const values = Array.from({ length: n }, (_, i) => ({ partner_id: partner, day: '2026-10-01', customer_id: `c-${pad(i)}`, affiliate_id: 'a', campaign_id: '' }));
        const parts = dialect.insertChunks(values);
        assert.equal(parts.length, n === rows ? 1 : 2);
        await t.store.transaction(async (trx) => { for (const part of parts) await trx('report_depositors').insert(part); });
        assert.deepEqual(await counts(t.store.knex, partner, ['report_depositors']), { report_depositors: n });
      }
      const partner = 'lim-list';
      const many = Array.from({ length: ids + 1 }, (_, i) => ({ partner_id: partner, day: '2026-10-01', customer_id: `k-${String(i).padStart(6, '0')}`, affiliate_id: 'a', campaign_id: '' }));
      await t.store.transaction(async (trx) => { for (const part of dialect.insertChunks(many)) await trx('report_depositors').insert(part); });
      for (const n of [ids, ids + 1]) {
        const keys = many.slice(0, n).map((r) => r.customer_id);
        const parts = dialect.chunks(keys);
        assert.equal(parts.length, n === ids ? 1 : 2);
        let found = 0;
        for (const part of parts) found += ((await t.store.knex('report_depositors').whereIn('customer_id', part).select('customer_id')) as unknown[]).length;
        assert.equal(found, n);
      }
    });
  });
}
