/**
 * cpa_ftd, hand-computed (docs/commissions.md, CPA on first deposits). Customers sign up on
 * 2026-10-01 09:30 UTC (day 1 of every window); amounts are USD unless a test says otherwise.
 */
import assert from 'node:assert/strict';
import { STORES } from '../support/stores.js';
import { brief, harness, igCustomer, play, tx, type Harness } from './harness.js';

const PLANS = `
plans:
  - id: cpa
    kind: cpa_ftd
    partner: casino
    affiliates: all
    effective: { from: 2026-01-01 }
    qualification: { window_days: 30, min_first_deposit_usd: 20 }
    amount_usd: { default: 100, by_country: { DE: 150 } }
    clawback: { window_days: 90 }
  - id: cpa-cumulative
    kind: cpa_ftd
    partner: casino-cum
    affiliates: [aff-1]
    effective: { from: 2026-01-01 }
    qualification: { min_first_deposit_usd: 10, cumulative_deposits: { min_usd: 100, within_days: 7 } }
    amount_usd: { default: 80 }
  - id: cpa-wagering
    kind: cpa_ftd
    partner: casino-wag
    affiliates: all
    effective: { from: 2026-01-01 }
    qualification: { wagering: { min_usd: 500, within_days: 30 } }
    amount_usd: { default: 60 }
`;

for (const backend of STORES) {
  describe(`commission cpa_ftd on ${backend.name}`, () => {
    let h: Harness;
    beforeEach(async () => { h = await harness(backend, PLANS); });
    afterEach(async () => h.drop());

    it('FTD below the baseline pays nothing, and a later bigger deposit does not make it qualify', async () => {
      await h.load('customers', [igCustomer('c1')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 19.99)]);
      await h.load('transactions', [tx('t2', 'c1', 'deposit', 500, { transaction_date: '2026-10-03T00:00:00Z' })]);
      assert.deepEqual(await h.lines(), []);
      await h.agrees();
    });

    it('FTD at or above the baseline pays the country amount once, naming the deposit', async () => {
      await h.load('customers', [igCustomer('c1'), igCustomer('c2', { country_code: 'DE' }), igCustomer('c3', { country_code: undefined })]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 20), tx('t2', 'c2', 'deposit', 25), tx('t3', 'c3', 'deposit', 1000)]);
      const lines = await h.lines();
      assert.deepEqual(lines.map((l) => [l.customer_id, l.reason, l.amount_usd, l.period, l.ref_id]), [
        ['c1', 'cpa_ftd', '100.00', '2026-10', 't1'],
        ['c2', 'cpa_ftd', '150.00', '2026-10', 't2'],
        ['c3', 'cpa_ftd', '100.00', '2026-10', 't3'],
      ]);
      assert.deepEqual(lines[0]?.sources, ['transactions:t1']);
      assert.equal(lines[0]?.basis.ftd_usd, '20');
      // A second deposit, a rerun of both batches: no new line.
      await h.load('transactions', [tx('t4', 'c1', 'deposit', 300, { transaction_date: '2026-10-04T00:00:00Z' })]);
      await h.load('customers', [igCustomer('c1'), igCustomer('c2', { country_code: 'DE' }), igCustomer('c3', { country_code: undefined })]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 20), tx('t2', 'c2', 'deposit', 25), tx('t3', 'c3', 'deposit', 1000)]);
      assert.equal((await h.lines()).length, 3);
      await h.agrees();
    });

    it('an FTD after the qualification window does not qualify; a declined first attempt is not the FTD', async () => {
      await h.load('customers', [igCustomer('late'), igCustomer('retry')]);
      // Window of 30 days from 2026-10-01: days before 2026-10-31.
      await h.load('transactions', [tx('t1', 'late', 'deposit', 50, { transaction_date: '2026-10-31T00:00:00Z' })]);
      await h.load('transactions', [
        tx('t2', 'retry', 'deposit', 50, { status: 'declined' }),
        tx('t3', 'retry', 'deposit', 50, { transaction_date: '2026-10-02T12:05:00Z' }),
      ]);
      assert.deepEqual((await h.lines()).map((l) => [l.customer_id, l.ref_id, l.amount_usd]), [['retry', 't3', '100.00']]);
      await h.agrees();
    });

    it('cumulative baseline reached inside the window pays on the day it is reached; outside the window it does not', async () => {
      const cum = { partner: 'casino-cum' };
      await h.load('customers', [igCustomer('in'), igCustomer('out')], cum);
      // Window of 7 days from 2026-10-01: deposits before 2026-10-08 count. 30 + 70 = 100 reaches the minimum.
      await h.load('transactions', [tx('a1', 'in', 'deposit', 30), tx('b1', 'out', 'deposit', 30)], cum);
      assert.deepEqual(await h.lines(), []);
      await h.load('transactions', [
        tx('a2', 'in', 'deposit', 70, { transaction_date: '2026-10-07T23:59:59Z' }),
        tx('b2', 'out', 'deposit', 70, { transaction_date: '2026-10-08T00:00:00Z' }),
      ], cum);
      const lines = await h.lines();
      assert.deepEqual(brief(lines), [['cpa_ftd', '80.00']]);
      assert.equal(lines[0]?.customer_id, 'in');
      assert.equal(lines[0]?.basis.qualified_on, '2026-10-07');
      assert.equal(lines[0]?.basis.cumulative_usd, '100');
      assert.deepEqual(lines[0]?.sources, ['transactions:a1', 'transactions:a2']);
      await h.agrees();
    });

    it('minimum wagering from activity within N days of signup', async () => {
      const wag = { partner: 'casino-wag' };
      await h.load('customers', [igCustomer('c1')], wag);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 10)], wag);
      await h.load('activity', [play('2026-10-02', 'c1', { total_bets: 300, wins: 250 }), play('2026-10-31', 'c1', { total_bets: 250, wins: 0 })], wag);
      assert.deepEqual(await h.lines(), [], '300 within the window, 250 on day 31 does not count');
      await h.load('activity', [play('2026-10-30', 'c1', { total_bets: 200, wins: 0, game_type: 'poker' })], wag);
      const lines = await h.lines();
      assert.deepEqual(brief(lines), [['cpa_ftd', '60.00']]);
      assert.equal(lines[0]?.basis.wagering_usd, '500');
      assert.equal(lines[0]?.period, '2026-10');
      await h.agrees();
    });

    it('FTD reversed after payment: a negative line naming it, and no second CPA on a later deposit', async () => {
      await h.load('customers', [igCustomer('c1')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50)]);
      h.clock.set('2026-12-01T10:00:00.000Z');
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50, { status: 'reversed' })]);
      await h.load('transactions', [tx('t2', 'c1', 'deposit', 500, { transaction_date: '2026-10-05T00:00:00Z' })]);
      const lines = await h.lines();
      assert.deepEqual(lines.map((l) => [l.reason, l.amount_usd, l.total_usd, l.ref_id, l.period]), [
        ['cpa_ftd', '100.00', '100.00', 't1', '2026-10'],
        ['cpa_clawback_reversed', '-100.00', '0.00', 't1', '2026-12'],
      ]);
      // The deposit approved again (the reversal was a mistake): paid again, once.
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50)]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50)]);
      assert.deepEqual(brief((await h.lines()).slice(2)), [['cpa_ftd', '100.00']]);
      await h.agrees();
    });

    it('a first deposit that arrives already reversed never pays', async () => {
      await h.load('customers', [igCustomer('c1')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50, { status: 'reversed' }), tx('t2', 'c1', 'deposit', 50, { transaction_date: '2026-10-03T00:00:00Z' })]);
      assert.deepEqual(await h.lines(), []);
      await h.agrees();
    });

    it('a chargeback (an adjustment marked as such) within the window claws back; one naming another deposit does not', async () => {
      await h.load('customers', [igCustomer('c1'), igCustomer('c2')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50), tx('u1', 'c2', 'deposit', 50), tx('u2', 'c2', 'deposit', 70, { transaction_date: '2026-10-03T00:00:00Z' })]);
      await h.load('transactions', [
        tx('cb1', 'c1', 'adjustment', -50, { transaction_subtype: 'chargeback', note: 'chargeback of t1', transaction_date: '2026-11-10T08:00:00Z' }),
        tx('cb2', 'c2', 'adjustment', -70, { transaction_subtype: 'chargeback', note: 'chargeback of u2', transaction_date: '2026-11-10T08:00:00Z' }),
        tx('gw', 'c2', 'adjustment', 10, { transaction_subtype: 'manual_correction' }),
      ]);
      const lines = await h.lines();
      assert.deepEqual(lines.map((l) => [l.customer_id, l.reason, l.amount_usd, l.period]), [
        ['c1', 'cpa_ftd', '100.00', '2026-10'],
        ['c2', 'cpa_ftd', '100.00', '2026-10'],
        ['c1', 'cpa_clawback_chargeback', '-100.00', '2026-11'],
      ]);
      assert.deepEqual(lines[2]?.sources, ['transactions:t1', 'transactions:cb1']);
      await h.agrees();
    });

    it('a reversal learned after the clawback window leaves the CPA paid', async () => {
      await h.load('customers', [igCustomer('c1')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50)]); // paid 2026-11-22 10:00
      h.clock.set('2027-02-20T10:00:00.000Z'); // 90 days later exactly: still inside
      await h.load('customers', [igCustomer('c2')]);
      await h.load('transactions', [tx('t2', 'c2', 'deposit', 50)]);
      h.clock.set('2027-02-20T10:00:00.001Z');
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50, { status: 'reversed' })]);
      assert.deepEqual((await h.lines()).map((l) => [l.customer_id, l.reason, l.amount_usd]), [['c1', 'cpa_ftd', '100.00'], ['c2', 'cpa_ftd', '100.00']]);
      await h.agrees();
    });

    it('a paid deposit declined later is clawed back', async () => {
      await h.load('customers', [igCustomer('c1')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50)]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50, { status: 'declined' })]);
      assert.deepEqual(brief(await h.lines()), [['cpa_ftd', '100.00'], ['cpa_clawback_reversed', '-100.00']]);
      await h.agrees();
    });

    it('a customer moved to another affiliate takes the CPA along: one line out, one line in', async () => {
      await h.load('customers', [igCustomer('c1')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50)]);
      await h.load('customers', [igCustomer('c1', { affiliate_id: 'aff-2' })]);
      assert.deepEqual((await h.lines()).map((l) => [l.affiliate_id, l.reason, l.amount_usd]), [
        ['aff-1', 'cpa_ftd', '100.00'], ['aff-2', 'cpa_ftd', '100.00'], ['aff-1', 'reattributed', '-100.00'],
      ]);
      await h.agrees();
    });

    it('a deposit in EUR without amount_usd waits for the rate (held), then pays when it arrives', async () => {
      await h.load('customers', [igCustomer('c1')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 18, { currency: 'EUR' })]);
      assert.deepEqual(await h.lines(), []);
      const holds = await h.holds();
      assert.deepEqual(holds.map((x) => [x.plan_id, x.customer_id, x.missing]), [['cpa', 'c1', ['EUR 2026-10-02']]]);
      await h.agrees();
      await h.rates('date,currency,rate\n2026-10-01,EUR,2\n');
      assert.equal((await h.holds()).length, 1, 'the rate of another day is not used');
      await h.rates('date,currency,rate\n2026-10-02,EUR,1.12\n'); // 18 × 1.12 = 20.16 ≥ 20
      assert.deepEqual(brief(await h.lines()), [['cpa_ftd', '100.00']]);
      assert.deepEqual(await h.holds(), []);
      assert.equal((await h.lines())[0]?.basis.ftd_rate, '1.12');
      // A corrected rate that puts the FTD under the baseline: a correction line.
      await h.rates('date,currency,rate\n2026-10-02,EUR,1.1\n'); // 19.80 < 20
      assert.deepEqual(brief(await h.lines()), [['cpa_ftd', '100.00'], ['cpa_correction', '-100.00']]);
      await h.agrees();
    });
  });
}
