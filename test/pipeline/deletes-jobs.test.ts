/**
 * Deletes at the source through each after-load job's own reaction, on every store: a closed
 * RevShare month's late correction, a deleted challenge fee and a deleted trader (the challenge
 * CPA, the funnel), the postbacks' reversal event, a bulk run's delete settled with its group,
 * and deletes mixed with loads in every order with the fraud rules on (recompute and a facts
 * rebuild agree after each step). Amounts by hand; the clock is the test's.
 */
import assert from 'node:assert/strict';
import { recompute } from '../../src/commission/recompute.js';
import { toLedgerLine, type LedgerLine } from '../../src/commission/ledger.js';
import { defaultConfig } from '../../src/fraud/config.js';
import { money } from '../../src/kernel/money.js';
import type { Loader } from '../../src/pipeline/load.js';
import { addPostback } from '../../src/postbacks/definitions.js';
import { affiliateReport } from '../../src/reports/affiliates.js';
import { rebuildFacts } from '../../src/reports/facts.js';
import { funnelReport } from '../../src/reports/funnel.js';
import type { Plan } from '../../src/commission/plans.js';
import type { Entity, SpecRecord, Variant } from '../../src/types.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CHALLENGE_FEES, CPA, plansFrom, plansYaml, REVSHARE } from '../support/plans.js';
import { customer, deposit, gaming, raw } from '../support/records.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

const usd = (extra: SpecRecord = {}): SpecRecord => ({ currency: 'USD', amount_currency: 50, amount_usd: 50, ...extra });
const day = (date: string, c: string, ggr: number): SpecRecord => gaming(date, c, { currency: 'USD', bets_count: 10, total_bets: ggr * 2, wins: ggr, ggr, ngr: ggr });
const trader = (id: string, extra: SpecRecord = {}): SpecRecord => ({
  customer_id: id, signup_date: '2026-11-01T09:30:00Z', affiliate_id: 'aff-1', challenge_type: 'standard', account_size: 50000, phase: 'phase_1', ...extra,
});
const fee = (id: string, c: string, amount: number): SpecRecord => ({
  transaction_id: id, customer_id: c, transaction_type: 'challenge_fee', amount_currency: amount, currency: 'USD', transaction_date: '2026-11-02T12:00:00Z', status: 'approved',
});

for (const backend of STORES) {
  describe(`deletes through each job (${backend.name})`, function () {
    this.timeout(180_000);
    let t: TestStore;
    let loader: Loader;
    let plans: Plan[];
    let run = 0;
    const clock = fixedClock('2026-11-22T10:00:00.000Z');

    const open = async (yaml: string, fraud = false) => {
      t = await backend.create(clock);
      plans = plansFrom(yaml);
      loader = loaderWithEveryJob(t.store, { plans, ...(fraud ? { fraud: defaultConfig() } : {}) });
    };
    afterEach(async () => t?.drop());

    const where = (variant: Variant) => (variant === 'igaming' ? { partner: 'casino', variant } : { partner: 'firm', variant });
    const load = async (entity: Entity, records: SpecRecord[], variant: Variant = 'igaming', runId = `run-${++run}`) => {
      const r = await loader.load({ ...where(variant), entity, runId, records: raw(records) });
      assert.equal(r.rejected, 0, JSON.stringify(r.rejects));
      return r;
    };
    const remove = (entity: 'customers' | 'transactions', ids: string[], variant: Variant = 'igaming', runId = `delete-${++run}`) =>
      loader.remove({ ...where(variant), entity, ids, learnedVia: 'push', runId });
    const lines = async (prefix: string): Promise<LedgerLine[]> =>
      ((await t.store.knex('commission_ledger').where('line_key', 'like', `${prefix}%`).orderBy('id').select('*')) as Record<string, unknown>[]).map(toLedgerLine);
    const net = async (prefix: string) => (await lines(prefix)).reduce((s, l) => s.plus(money(l.amount_usd)), money(0)).toFixed(2);
    const agrees = async (what: string) => {
      const results = await recompute(t.store, plans, { runId: 'check' });
      assert.deepEqual(results.flatMap((r) => r.differences), [], `recompute must agree (${what})`);
      for (const r of results) assert.deepEqual(r.derived, { customer_days: 0, affiliate_months: 0, attributions: 0 }, what);
    };
    const factsAgree = async (partner: string, variant: Variant, what: string) => {
      const before = await affiliateReport(t.store, { partner }, 'day');
      await rebuildFacts(t.store, partner, variant);
      assert.deepEqual((await affiliateReport(t.store, { partner }, 'day')).rows, before.rows, `the facts equal a rebuild (${what})`);
    };

    it("a deleted customer's day in a closed month: the RevShare difference is a late correction", async () => {
      await open(plansYaml(REVSHARE));
      await load('customers', [customer('c1', { signup_date: '2026-10-01T09:30:00Z' }), customer('c2', { signup_date: '2026-10-01T09:30:00Z' })]);
      await load('activity', [day('2026-10-05', 'c1', 100), day('2026-10-05', 'c2', 60)]);
      // By hand: 25% of 160 = 40.00 for October (closed on 2026-11-22).
      assert.equal(await net('revshare|rs|casino|aff-1|2026-10'), '40.00');
      await remove('customers', ['c2']);
      // 25% of 100 = 25.00: a line of -15.00, a late correction of the closed month.
      const last = (await lines('revshare|rs|casino|aff-1|2026-10')).at(-1) as LedgerLine;
      assert.deepEqual([last.amount_usd, last.total_usd, last.reason], ['-15.00', '25.00', 'revshare_late']);
      await agrees('after the delete');
      await factsAgree('casino', 'igaming', 'after the delete');
    });

    it('a deleted challenge fee claws back its challenge CPA; a deleted trader its fees and its funnel row', async () => {
      await open(plansYaml(CHALLENGE_FEES));
      await load('customers', [trader('t1'), trader('t2', { phase: 'phase_2' })], 'prop-trading');
      await load('transactions', [fee('f1', 't1', 500), fee('f2', 't2', 300)], 'prop-trading');
      // By hand: 10% of 500 and of 300.
      assert.equal(await net('challenge_cpa|fees|firm|f1'), '50.00');
      assert.equal(await net('challenge_cpa|fees|firm|f2'), '30.00');
      assert.equal((await funnelReport(t.store.knex, { partner: 'firm' }))[0]?.signups, 2);

      await remove('transactions', ['f1'], 'prop-trading');
      const f1 = (await lines('challenge_cpa|fees|firm|f1')).at(-1) as LedgerLine;
      assert.deepEqual([f1.amount_usd, f1.total_usd, f1.reason, f1.sources[0]], ['-50.00', '0.00', 'challenge_fee_deleted', 'tombstones:1']);
      await remove('customers', ['t2'], 'prop-trading');
      assert.equal(await net('challenge_cpa|fees|firm|f2'), '0.00');
      const f2 = (await lines('challenge_cpa|fees|firm|f2')).at(-1) as LedgerLine;
      assert.equal(f2.sources[0], 'tombstones:2', "the customer's tombstone first");
      assert.equal((await funnelReport(t.store.knex, { partner: 'firm' }))[0]?.signups, 1);
      assert.equal((await t.store.knex('funnel_customers').where({ partner_id: 'firm', customer_id: 't2' })).length, 0);
      assert.equal((await t.store.knex('phase_history').where({ partner_id: 'firm', customer_id: 't2' })).length, 0);
      await agrees('after the deletes');
      await factsAgree('firm', 'prop-trading', 'after the deletes');
    });

    it('a deleted approved deposit sends deposit_reversed, once per tombstone, and its CPA clawback', async () => {
      await open(plansYaml(CPA));
      await addPostback(t.store, { affiliate: 'aff-1', events: 'deposit,deposit_reversed,cpa_qualified,cpa_clawback', url: 'http://127.0.0.1:9/hook', allowPrivate: true }, 'test-postback-key-0123456789abcdef0123456789');
      await load('customers', [customer('c1')]);
      await load('transactions', [deposit('d1', 'c1', usd())]);
      await remove('transactions', ['d1']);
      await load('transactions', [deposit('d1', 'c1', usd())]);
      await remove('transactions', ['d1']);
      const events = ((await t.store.knex('postback_events').orderBy('seq').select('kind', 'fact_key')) as { kind: string; fact_key: string }[]).map((e) => [e.kind, e.fact_key]);
      assert.deepEqual(events.filter(([k]) => k === 'deposit_reversed'), [['deposit_reversed', 'deposit_reversed|casino|d1|tombstones:1'], ['deposit_reversed', 'deposit_reversed|casino|d1|tombstones:2']]);
      assert.deepEqual(events.filter(([k]) => k?.startsWith('cpa_')).map(([k]) => k), ['cpa_qualified', 'cpa_clawback', 'cpa_qualified', 'cpa_clawback']);
    });

    it("a bulk run's deletes wait for its settle, and settle to the same ledger and facts", async () => {
      await open(plansYaml(CPA, REVSHARE));
      await load('customers', [customer('c1'), customer('c2')]);
      await load('transactions', [deposit('d1', 'c1', usd()), deposit('d2', 'c2', usd())]);
      await load('activity', [day('2026-11-03', 'c1', 40), day('2026-11-03', 'c2', 80)]);
      const runId = 'bulk-deletes';
      loader.evaluateRun(runId, 'group');
      await remove('transactions', ['d1'], 'igaming', runId);
      await remove('customers', ['c2'], 'igaming', runId);
      assert.equal(await net('cpa_ftd|cpa|casino|'), '200.00', 'nothing booked before the settle');
      await loader.endDeferred(runId);
      // By hand: both CPAs back; RevShare 25% of 40 = 10.00.
      assert.equal(await net('cpa_ftd|cpa|casino|'), '0.00');
      assert.equal(await net('revshare|rs|casino|aff-1|2026-11'), '10.00');
      await agrees('after the settle');
      await factsAgree('casino', 'igaming', 'after the settle');
    });

    const steps: Record<string, () => Promise<unknown>> = {
      'delete d1': () => remove('transactions', ['d1']),
      'resend d1': () => load('transactions', [deposit('d1', 'c1', usd())]),
      'delete c2': () => remove('customers', ['c2']),
      'c2 plays': () => load('activity', [day('2026-11-06', 'c2', 30)]),
      'c2 deposits': () => load('transactions', [deposit('d2b', 'c2', usd({ transaction_date: '2026-11-06T12:00:00Z' }))]),
      'resend c2': () => load('customers', [customer('c2')]),
    };
    // Each order with the CPA total it ends at, by hand: 100 per customer with a live approved deposit then.
    const orders: [string[], string][] = [
      [['delete d1', 'resend d1', 'delete c2', 'c2 plays', 'c2 deposits', 'resend c2'], '300.00'],
      [['delete c2', 'resend c2', 'c2 deposits', 'delete d1', 'c2 plays', 'resend d1'], '300.00'],
      // d2 and d2b go with c2's delete and come back with its re-send: c2 ends with its deposits.
      [['c2 deposits', 'c2 plays', 'delete c2', 'delete d1', 'resend c2', 'resend d1'], '300.00'],
      // d1 deleted after its re-send: c1 ends without a deposit.
      [['resend d1', 'delete c2', 'c2 plays', 'resend c2', 'delete d1', 'c2 deposits'], '200.00'],
    ];
    for (const [order, cpa] of orders) {
      it(`deletes mixed with loads, fraud rules on: ${order.join(', ')}`, async () => {
        await open(plansYaml(CPA, REVSHARE), true);
        await load('customers', [customer('c1'), customer('c2'), customer('c3')]);
        await load('transactions', [deposit('d1', 'c1', usd()), deposit('d2', 'c2', usd()), deposit('d3', 'c3', usd())]);
        await load('activity', [day('2026-11-03', 'c1', 40), day('2026-11-03', 'c2', 80)]);
        for (const step of order) {
          await steps[step]!();
          await agrees(step);
        }
        await factsAgree('casino', 'igaming', 'at the end');
        assert.equal(await net('cpa_ftd|cpa|casino|'), cpa);
      });
    }
  });
}
