/**
 * The affiliate report, hand-computed: current when a batch commits, exact under re-sends,
 * reversals, re-attributed customers and replaced days; --explain lists the records behind a cell.
 */
import assert from 'node:assert/strict';
import { affiliateReport, reportCsv, type AffiliateRow } from '../../src/reports/affiliates.js';
import { explainCell } from '../../src/reports/explain.js';
import { STORES } from '../support/stores.js';
import { money, person, reportWorld, type ReportWorld } from './support.js';

const pick = (row: AffiliateRow | undefined, columns: (keyof AffiliateRow)[]) => Object.fromEntries(columns.map((c) => [c, row?.[c]]));

for (const backend of STORES) {
  describe(`report affiliates on ${backend.name}`, () => {
    let w: ReportWorld;
    beforeEach(async () => { w = await reportWorld(backend); });
    afterEach(async () => w.drop());

    it('shows a loaded batch as soon as it commits, and stays exact through a reversal, a re-send and a re-attribution', async () => {
      await w.rates('date,currency,rate\n2026-11-02,EUR,1.1\n');
      await w.load('customers', [person('c1', 'aff-1', { campaign_id: 'camp-a' }), person('c2', 'aff-1'), person('c3', 'aff-2', { campaign_id: 'camp-b', signup_date: '2026-11-02T01:00:00Z' })]);
      await w.load('transactions', [
        money('d1', 'c1', 'deposit', 100.5, { currency: 'EUR' }), // 110.55 USD at 1.1
        money('d2', 'c1', 'deposit', 50, { transaction_date: '2026-11-03T08:00:00Z' }),
        money('d3', 'c2', 'deposit', 20, { status: 'declined' }),
        money('w1', 'c1', 'withdrawal', 30, { transaction_date: '2026-11-03T09:00:00Z' }),
        money('b1', 'c2', 'bonus', 4, { currency: 'EUR', amount_usd: 5 }),
      ]);
      // No refresh, no job: the report reads what the committed batch wrote.
      let report = await affiliateReport(w.t.store, { partner: 'casino' }, 'month');
      const cols: (keyof AffiliateRow)[] = ['registrations', 'ftd_count', 'ftd_usd', 'depositors', 'deposit_count', 'deposits_usd', 'withdrawals_usd', 'bonuses_usd', 'net_deposits_usd',
        'commissions_earned_usd', 'commissions_clawed_back_usd', 'commissions_net_usd', 'commissions_held'];
      assert.deepEqual(report.rows.map((r) => [r.affiliate, r.month]), [['aff-1', '2026-11'], ['aff-2', '2026-11']]);
      assert.deepEqual(pick(report.rows[0], cols), {
        registrations: 2, ftd_count: 1, ftd_usd: '110.55', depositors: 1, deposit_count: 2, deposits_usd: '160.55', withdrawals_usd: '30.00', bonuses_usd: '5.00', net_deposits_usd: '130.55',
        commissions_earned_usd: '100.00', commissions_clawed_back_usd: '0.00', commissions_net_usd: '100.00', commissions_held: 0,
      });
      assert.deepEqual(pick(report.rows[1], ['registrations', 'ftd_count', 'commissions_net_usd']), { registrations: 1, ftd_count: 0, commissions_net_usd: null });

      // d1 reversed: the first approved deposit is now d2; the CPA paid on d1 is clawed back. Sent twice: counted once.
      for (let i = 0; i < 2; i++) await w.load('transactions', [money('d1', 'c1', 'deposit', 100.5, { currency: 'EUR', status: 'reversed' })]);
      report = await affiliateReport(w.t.store, { partner: 'casino', affiliate: 'aff-1' }, 'day');
      assert.deepEqual(report.rows.map((r) => [r.day, r.registrations, r.ftd_count, r.ftd_usd, r.deposits_usd, r.withdrawals_usd, r.bonuses_usd, r.net_deposits_usd]), [
        ['2026-11-01', 2, 0, '0.00', '0.00', '0.00', '0.00', '0.00'],
        ['2026-11-02', 0, 0, '0.00', '0.00', '0.00', '5.00', '0.00'],
        ['2026-11-03', 0, 1, '50.00', '50.00', '30.00', '0.00', '20.00'],
      ]);
      report = await affiliateReport(w.t.store, { partner: 'casino', affiliate: 'aff-1' }, 'month');
      assert.deepEqual(pick(report.rows[0], ['commissions_earned_usd', 'commissions_clawed_back_usd', 'commissions_net_usd']),
        { commissions_earned_usd: '100.00', commissions_clawed_back_usd: '-100.00', commissions_net_usd: '0.00' });

      // c2 moves to aff-2 / camp-b: its registration and bonus move with it.
      await w.load('customers', [person('c2', 'aff-2', { campaign_id: 'camp-b', last_modified_date: '2026-11-05T00:00:00Z' })]);
      report = await affiliateReport(w.t.store, { partner: 'casino' }, 'campaign');
      assert.deepEqual(report.rows.map((r) => [r.affiliate, r.campaign, r.registrations, r.bonuses_usd, r.ftd_count]), [
        ['aff-1', 'camp-a', 1, '0.00', 1],
        ['aff-2', 'camp-b', 2, '5.00', 0],
      ]);

      // The records behind cells.
      const ftd = await explainCell(w.t.store.knex, 'ftd_count', { affiliate: 'aff-1', from: '2026-11-01', to: '2026-11-30' });
      assert.equal(ftd.total, 1);
      assert.deepEqual(ftd.records.map((r) => [r.transaction_id, r.usd]), [['d2', '50.00']]);
      const deposits = await explainCell(w.t.store.knex, 'net_deposits_usd', { affiliate: 'aff-1', campaign: 'camp-a', from: '2026-11-03', to: '2026-11-03' });
      assert.deepEqual([deposits.total, deposits.records.map((r) => r.transaction_id)], ['20.00', ['d2', 'w1']]);
      const lines = await explainCell(w.t.store.knex, 'commissions_clawed_back_usd', { affiliate: 'aff-1', from: '2026-11-01', to: '2026-11-30' });
      assert.deepEqual([lines.total, lines.records.map((r) => [r.reason, r.amount_usd, r.ref_id])], ['-100.00', [['cpa_clawback_reversed', '-100.00', 'd1']]]);
      const regs = await explainCell(w.t.store.knex, 'registrations', { affiliate: 'aff-2', from: '2026-11-01', to: '2026-11-02' });
      assert.deepEqual(regs.records.map((r) => r.customer_id), ['c2', 'c3']);
      assert.ok(!JSON.stringify(regs).includes('example.com') && !JSON.stringify(regs).includes('click-') && !JSON.stringify(regs).includes('Ann'), 'no personal fields');
    });

    it('sums gaming activity in USD, replaces a re-aggregated day whole, and counts amounts without a rate as unconverted', async () => {
      await w.rates('date,currency,rate\n2026-11-02,EUR,1.1\n');
      await w.load('customers', [person('c1', 'aff-1')]);
      await w.load('activity', [
        { date: '2026-11-02', customer_id: 'c1', game_type: 'slots', currency: 'EUR', total_bets: 100, wins: 80, ngr: 15 },
        { date: '2026-11-02', customer_id: 'c1', game_type: 'poker', currency: 'USD', total_bets: 10, ggr: -3, ngr: -4 },
        { date: '2026-11-04', customer_id: 'c1', game_type: 'slots', currency: 'GBP', total_bets: 50, ggr: 5, ngr: 5 },
      ]);
      let rows = (await affiliateReport(w.t.store, {}, 'day')).rows;
      assert.deepEqual(rows.map((r) => [r.day, r.bets_usd, r.ggr_usd, r.ngr_usd, r.unconverted]), [
        ['2026-11-01', '0.00', '0.00', '0.00', 0],
        ['2026-11-02', '120.00', '19.00', '12.50', 0], // 110 + 10; 22 − 3; 16.5 − 4
        ['2026-11-04', '0.00', '0.00', '0.00', 1],
      ]);
      const ggr = await explainCell(w.t.store.knex, 'ggr_usd', { affiliate: 'aff-1', from: '2026-11-02', to: '2026-11-02' });
      assert.deepEqual([ggr.total, ggr.records.map((r) => [r.game_type, r.usd])], ['19.00', [['poker', '-3.00'], ['slots', '22.00']]]);

      // The partner re-aggregates 2026-11-02: only live_casino remains.
      await w.loader.transaction(async (tx) => {
        await tx.replaceDays('casino', 'igaming', ['2026-11-02']);
        await tx.load({ partner: 'casino', variant: 'igaming', entity: 'activity', runId: 'day', records: [{ position: 1, value: { date: '2026-11-02', customer_id: 'c1', game_type: 'live_casino', currency: 'USD', total_bets: 7, ggr: 7, ngr: 6 } }] });
      });
      // The GBP rate arrives: the held amount converts.
      await w.rates('date,currency,rate\n2026-11-04,GBP,1.25\n');
      rows = (await affiliateReport(w.t.store, {}, 'day')).rows;
      assert.deepEqual(rows.map((r) => [r.day, r.bets_usd, r.ggr_usd, r.ngr_usd, r.unconverted]), [
        ['2026-11-01', '0.00', '0.00', '0.00', 0],
        ['2026-11-02', '7.00', '7.00', '6.00', 0],
        ['2026-11-04', '62.50', '6.25', '6.25', 0],
      ]);
    });

    it('counts challenge purchases per product and moves them when the account changes', async () => {
      const firm = { partner: 'firm', variant: 'prop-trading' as const };
      await w.load('customers', [person('p1', 'aff-9', { challenge_type: 'standard', account_size: 10000 }), person('p2', 'aff-9', { challenge_type: 'rapid', account_size: 50000 })], firm);
      await w.load('transactions', [
        money('f1', 'p1', 'challenge_fee', 99), money('r1', 'p1', 'reset_fee', 49), money('f2', 'p2', 'challenge_fee', 299),
        money('x2', 'p2', 'refund', 299), money('o1', 'p1', 'payout', 500), money('f3', 'p1', 'challenge_fee', 99, { status: 'declined' }),
      ], firm);
      let [row] = (await affiliateReport(w.t.store, { partner: 'firm' }, 'month')).rows;
      assert.deepEqual(pick(row, ['registrations', 'challenge_purchases', 'challenge_fees_usd', 'reset_fees_usd', 'refunds_usd', 'payouts_usd', 'challenge_purchases_by_product', 'commissions_earned_usd']), {
        registrations: 2, challenge_purchases: 2, challenge_fees_usd: '398.00', reset_fees_usd: '49.00', refunds_usd: '299.00', payouts_usd: '500.00',
        challenge_purchases_by_product: [{ challenge_type: 'rapid', account_size: '50000', purchases: 1, fees_usd: '299.00' }, { challenge_type: 'standard', account_size: '10000', purchases: 1, fees_usd: '99.00' }],
        commissions_earned_usd: '14.80', // 10% of 99 + 49 (the refunded fee earns nothing)
      });
      await w.load('customers', [person('p1', 'aff-9', { challenge_type: 'standard', account_size: 25000, last_modified_date: '2026-11-05T00:00:00Z' })], firm);
      [row] = (await affiliateReport(w.t.store, { partner: 'firm' }, 'month')).rows;
      assert.deepEqual(row?.challenge_purchases_by_product.map((p) => `${p.challenge_type}/${p.account_size}:${p.purchases}`), ['rapid/50000:1', 'standard/25000:1']);
      const csv = reportCsv(await affiliateReport(w.t.store, { partner: 'firm' }, 'campaign'));
      const [header, line] = csv.trimEnd().split('\n');
      assert.equal(header, 'partner,affiliate,campaign,registrations,ftd_count,ftd_usd,depositors,deposit_count,deposits_usd,withdrawals_usd,bonuses_usd,net_deposits_usd,bets_usd,ggr_usd,ngr_usd,'
        + 'challenge_purchases,challenge_purchases_by_product,challenge_fees_usd,reset_fees_usd,refunds_usd,payouts_usd,unconverted,commissions_earned_usd,commissions_clawed_back_usd,commissions_net_usd,commissions_held');
      assert.equal(line, 'firm,aff-9,,2,0,0.00,0,0,0.00,0.00,0.00,0.00,0.00,0.00,0.00,2,rapid/50000:1 (299.00); standard/25000:1 (99.00),398.00,49.00,299.00,500.00,0,,,,');
    });
  });
}
