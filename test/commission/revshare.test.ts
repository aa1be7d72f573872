/**
 * revshare, hand-computed (docs/commissions.md, RevShare). The clock stands at 2026-11-22:
 * November is open (accruing), October closed on 2026-11-01 06:00 UTC.
 */
import assert from 'node:assert/strict';
import { loaderWith } from '../support/loader.js';
import { raw } from '../support/records.js';
import { STORES } from '../support/stores.js';
import { harness, igCustomer, play, tx, type Harness } from './harness.js';
import type { SpecRecord } from '../../src/types.js';
import { commissionJob } from '../../jobs/commission.js';
import { silentLogger } from '../../src/log.js';

const band = (rate: number) => `{ mode: tiered, bands: [{ from_usd: 0, rate: ${rate} }] }`;
const BANDS = '[{ from_usd: 0, rate: 0.25 }, { from_usd: 10000, rate: 0.30 }, { from_usd: 50000, rate: 0.35 }]';
const plan = (id: string, partner: string, rest: string) => `
  - id: ${id}
    kind: revshare
    partner: ${partner}
    affiliates: all
    effective: { from: 2026-01-01 }
${rest.split('\n').map((l) => `    ${l}`).join('\n')}`;

const PLANS = `plans:${[
  plan('rs-carry', 'casino', `revenue: ggr\ntiers: ${band(0.25)}\nnegative_carryover: true`),
  plan('rs-plain', 'casino-nc', `revenue: ggr\ntiers: ${band(0.25)}\nnegative_carryover: false`),
  plan('rs-tiered', 'casino-t', `revenue: ggr\ntiers: { mode: tiered, bands: ${BANDS} }`),
  plan('rs-ladder', 'casino-l', `revenue: ggr\ntiers: { mode: ladder, bands: ${BANDS} }`),
  plan('rs-ngr', 'casino-n', `revenue: ngr\ntiers: ${band(0.5)}`),
].join('')}\n`;

const monthLines = async (h: Harness, plan: string) =>
  (await h.lines({ plan })).map((l) => [l.affiliate_id, l.period, l.reason, l.amount_usd]);

for (const backend of STORES) {
  describe(`commission revshare on ${backend.name}`, () => {
    let h: Harness;
    beforeEach(async () => { h = await harness(backend, PLANS); });
    afterEach(async () => h.drop());

    for (const [partner, id, november] of [['casino', 'rs-carry', '500.00'], ['casino-nc', 'rs-plain', '750.00']] as const) {
      it(`a negative month then a positive month, ${id === 'rs-carry' ? 'with' : 'without'} carryover`, async () => {
        const p = { partner };
        await h.load('customers', [igCustomer('c1'), igCustomer('c2')], p);
        await h.load('activity', [play('2026-10-10', 'c1', { ggr: -1000 })], p);
        assert.deepEqual(await monthLines(h, id), [], 'a negative month pays nothing and takes nothing back');
        await h.load('activity', [play('2026-11-05', 'c1', { ggr: 2000 }), play('2026-11-06', 'c2', { ggr: 1000 })], p);
        // with: (3000 − 1000) × 25% = 500; without: 3000 × 25% = 750
        assert.deepEqual(await monthLines(h, id), [['aff-1', '2026-11', 'revshare', november]]);
        const lines = await h.lines({ plan: id });
        assert.equal(lines[0]?.basis.carry_in_usd, id === 'rs-carry' ? '-1000' : '0');
        assert.deepEqual([...(lines[0]?.sources ?? [])].sort(), ['activity:c1@2026-11-05', 'activity:c2@2026-11-06']);
        // A late correction of October (−1000 → −200): with carryover November moves by +200 × 25%.
        await h.load('activity', [play('2026-10-10', 'c1', { ggr: -200 })], p);
        const after = await monthLines(h, id);
        if (id === 'rs-carry') assert.deepEqual(after.slice(1), [['aff-1', '2026-11', 'revshare', '200.00']]);
        else assert.equal(after.length, 1);
        await h.agrees();
      });
    }

    it('a line lists the first 100 customer-days that moved its month and counts the rest as more:N', async () => {
      const ids = Array.from({ length: 26 }, (_, i) => `c${i + 1}`);
      await h.load('customers', ids.map((id) => igCustomer(id)));
      // 26 customers x 5 days = 130 customer-days of November, 10 GGR each: 1300 x 25% = 325.00.
      await h.load('activity', ids.flatMap((id) => [1, 2, 3, 4, 5].map((d) => play(`2026-11-0${d}`, id, { ggr: 10 }))));
      const lines = await h.lines({ plan: 'rs-carry' });
      assert.deepEqual(lines.map((l) => [l.period, l.amount_usd]), [['2026-11', '325.00']]);
      const sources = lines[0]?.sources ?? [];
      assert.equal(sources.length, 101);
      assert.equal(new Set(sources.slice(0, 100)).size, 100);
      assert.ok(sources.slice(0, 100).every((s) => /^activity:c\d+@2026-11-0[1-5]$/.test(s)), sources.join(' '));
      assert.equal(sources[100], 'more:30');
      await h.agrees();
    });

    it('carryover: the positive month arriving before the negative one is corrected by a delta line', async () => {
      await h.load('customers', [igCustomer('c1')]);
      await h.load('activity', [play('2026-11-05', 'c1', { ggr: 3000 })]);
      await h.load('activity', [play('2026-10-10', 'c1', { ggr: -1000 })]);
      assert.deepEqual(await monthLines(h, 'rs-carry'), [['aff-1', '2026-11', 'revshare', '750.00'], ['aff-1', '2026-11', 'revshare', '-250.00']]);
      await h.agrees();
    });

    it('carryover larger than the next month carries on until recovered', async () => {
      await h.load('customers', [igCustomer('c1')]);
      await h.load('activity', [play('2026-09-10', 'c1', { ggr: -5000 }), play('2026-10-10', 'c1', { ggr: 3000 }), play('2026-11-10', 'c1', { ggr: 4000 })]);
      // Sep −5000; Oct −5000 + 3000 = −2000 → 0; Nov −2000 + 4000 = 2000 → 500
      const lines = await h.lines({ plan: 'rs-carry' });
      assert.deepEqual(lines.map((l) => [l.period, l.reason, l.amount_usd]), [['2026-11', 'revshare', '500.00']]);
      assert.equal(lines[0]?.basis.carry_in_usd, '-2000');
      await h.agrees();
    });

    it('a closed month\'s first booking is its earning, a correction after it is late; each line rounds half to even to the cent', async () => {
      await h.load('customers', [igCustomer('x', { affiliate_id: 'aff-x' }), igCustomer('y', { affiliate_id: 'aff-y' })]);
      // 0.10 × 25% = 0.025 → 0.02; 0.30 × 25% = 0.075 → 0.08 (half to even)
      await h.load('activity', [play('2026-10-03', 'x', { ggr: 0.1 }), play('2026-11-03', 'y', { ggr: 0.3 })]);
      assert.deepEqual(await monthLines(h, 'rs-carry'), [['aff-x', '2026-10', 'revshare', '0.02'], ['aff-y', '2026-11', 'revshare', '0.08']]);
      // October (closed) corrected after its first booking: 0.30 × 25% = 0.08, +0.06 late.
      await h.load('activity', [play('2026-10-04', 'x', { ggr: 0.2 })]);
      assert.deepEqual((await monthLines(h, 'rs-carry')).slice(2), [['aff-x', '2026-10', 'revshare_late', '0.06']]);
      await h.agrees();
    });

    it('tiered: the band reached sets the rate of the whole month, at the boundaries', async () => {
      const p = { partner: 'casino-t' };
      const amounts = { a: 9999.99, b: 10000, c: 49999.99, d: 50000 };
      await h.load('customers', Object.keys(amounts).map((a) => igCustomer(a, { affiliate_id: `aff-${a}` })), p);
      await h.load('activity', Object.entries(amounts).map(([a, ggr]) => play('2026-11-02', a, { ggr })), p);
      // 9999.99 × .25 = 2499.9975; 10000 × .30 = 3000; 49999.99 × .30 = 14999.997; 50000 × .35 = 17500
      assert.deepEqual((await monthLines(h, 'rs-tiered')).map((l) => [l[0], l[3]]),
        [['aff-a', '2500.00'], ['aff-b', '3000.00'], ['aff-c', '15000.00'], ['aff-d', '17500.00']]);
      await h.agrees();
    });

    it('ladder: each band at its own rate, at the boundaries', async () => {
      const p = { partner: 'casino-l' };
      const amounts = { a: 9999.99, b: 10000, c: 10000.1, d: 50000, e: 60000 };
      await h.load('customers', Object.keys(amounts).map((a) => igCustomer(a, { affiliate_id: `aff-${a}` })), p);
      await h.load('activity', Object.entries(amounts).map(([a, ggr]) => play('2026-11-02', a, { ggr })), p);
      // 2499.9975; 2500; 2500 + 0.1 × .30 = 2500.03; 2500 + 40000 × .30 = 14500; 14500 + 10000 × .35 = 18000
      assert.deepEqual((await monthLines(h, 'rs-ladder')).map((l) => [l[0], l[3]]),
        [['aff-a', '2500.00'], ['aff-b', '2500.00'], ['aff-c', '2500.03'], ['aff-d', '14500.00'], ['aff-e', '18000.00']]);
      const e = (await h.lines({ plan: 'rs-ladder' }))[4];
      assert.deepEqual((e?.basis.bands as { amount_usd: string }[]).map((b) => b.amount_usd), ['2500', '12000', '3500']);
      await h.agrees();
    });

    it('NGR from the record where sent; otherwise GGR (or total_bets − wins) minus the day\'s approved bonuses', async () => {
      const p = { partner: 'casino-n' };
      await h.load('customers', [igCustomer('c1'), igCustomer('c2')], p);
      await h.load('transactions', [
        tx('b1', 'c1', 'bonus', 10, { transaction_date: '2026-11-03T20:00:00Z' }),
        tx('b2', 'c1', 'bonus', 5, { transaction_date: '2026-11-03T21:00:00Z', status: 'declined' }),
        tx('b3', 'c2', 'bonus', 30, { transaction_date: '2026-11-04T10:00:00Z' }),
      ], p);
      await h.load('activity', [
        play('2026-11-03', 'c1', { total_bets: 100, wins: 60 }), // GGR 40, no ngr
        play('2026-11-03', 'c1', { game_type: 'poker', ggr: 20, ngr: 15 }),
        play('2026-11-04', 'c2', { ggr: 100, ngr: 70 }),
      ], p);
      // c1: 40 + 20 − 10 = 50 (not every row of the day carries ngr); c2: 70 (sent); (50 + 70) × 50% = 60
      assert.deepEqual(await monthLines(h, 'rs-ngr'), [['aff-1', '2026-11', 'revshare', '60.00']]);
      // The bonus reversed: c1's NGR is 60, the month 130 × 50% = 65.
      await h.load('transactions', [tx('b1', 'c1', 'bonus', 10, { transaction_date: '2026-11-03T20:00:00Z', status: 'reversed' })], p);
      assert.deepEqual((await monthLines(h, 'rs-ngr')).slice(1), [['aff-1', '2026-11', 'revshare', '5.00']]);
      await h.agrees();
    });

    it('FX missing: the month is held (and with carryover every later month), then released when the rate arrives', async () => {
      await h.load('customers', [igCustomer('c1'), igCustomer('c2', { affiliate_id: 'aff-2' })]);
      await h.load('activity', [play('2026-10-06', 'c1', { ggr: 100, currency: 'EUR' }), play('2026-11-06', 'c1', { ggr: 200 }), play('2026-11-07', 'c2', { ggr: 40 })]);
      assert.deepEqual(await monthLines(h, 'rs-carry'), [['aff-2', '2026-11', 'revshare', '10.00']]);
      const holds = await h.holds();
      assert.deepEqual(holds.map((x) => [x.affiliate_id, x.period, x.missing]), [['aff-1', '2026-10', ['EUR 2026-10-06']], ['aff-1', '2026-11', ['EUR 2026-10-06']]]);
      await h.agrees();
      await h.rates('date,currency,rate\n2026-10-06,EUR,1.1\n');
      // October 110 × 25% = 27.50, November 200 × 25% = 50
      assert.deepEqual((await monthLines(h, 'rs-carry')).slice(1), [['aff-1', '2026-10', 'revshare', '27.50'], ['aff-1', '2026-11', 'revshare', '50.00']]);
      assert.deepEqual(await h.holds(), []);
      await h.agrees();
    });

    it('a replaced activity day without a customer\'s row takes that revenue back', async () => {
      await h.load('customers', [igCustomer('c1'), igCustomer('c2')]);
      await h.load('activity', [play('2026-11-02', 'c1', { ggr: 100 }), play('2026-11-02', 'c2', { ggr: 300 })]);
      await h.loader.transaction(async (tx) => {
        await tx.replaceDays('casino', 'igaming', ['2026-11-02'], 'run-replace');
        await tx.load({ partner: 'casino', variant: 'igaming', entity: 'activity', runId: 'run-replace', records: raw([play('2026-11-02', 'c2', { ggr: 300 })]) });
      });
      assert.deepEqual(await monthLines(h, 'rs-carry'), [['aff-1', '2026-11', 'revshare', '100.00'], ['aff-1', '2026-11', 'revshare', '-25.00']]);
      // A replaced day with nothing in it at all.
      await h.loader.transaction(async (tx) => tx.replaceDays('casino', 'igaming', ['2026-11-02'], 'run-empty'));
      assert.deepEqual((await monthLines(h, 'rs-carry')).slice(2), [['aff-1', '2026-11', 'revshare', '-75.00']]);
      await h.agrees();
    });

    it('a bulk run evaluated take by take: replaced days whose rows are gone take their revenue back, and every day counts once', async () => {
      // Passes of 3 customers and 15 customer-days, so takes of 30 pending customer-days: the 40 below come in two full takes and a rest.
      process.env.PARTNER_SYNC_EVALUATION_CUSTOMERS = '3';
      try {
        const ids = Array.from({ length: 20 }, (_, i) => `c${String(i + 1).padStart(2, '0')}`);
        await h.load('customers', ids.map((id) => igCustomer(id)));
        const bulk = async (runId: string, rows: SpecRecord[]) => {
          h.loader.evaluateRun(runId, 'behind');
          await h.loader.transaction(async (tx) => {
            await tx.replaceDays('casino', 'igaming', ['2026-11-02', '2026-11-03'], runId);
            await tx.load({ partner: 'casino', variant: 'igaming', entity: 'activity', runId, records: raw(rows) });
          });
          await h.loader.endDeferred(runId);
        };
        // 20 customers x 2 days x 10 GGR = 400: 100.00 at 25%.
        await bulk('bulk-1', ids.flatMap((id) => [play('2026-11-02', id, { ggr: 10 }), play('2026-11-03', id, { ggr: 10 })]));
        assert.deepEqual(await monthLines(h, 'rs-carry'), [['aff-1', '2026-11', 'revshare', '100.00']]);
        // Both days again; c11-c20 are gone from 11-02 and c01 has 50 there: 50 + 9 x 10 + 20 x 10 = 340, 85.00 (-15.00).
        await bulk('bulk-2', [
          ...ids.slice(0, 10).map((id) => play('2026-11-02', id, { ggr: id === 'c01' ? 50 : 10 })),
          ...ids.map((id) => play('2026-11-03', id, { ggr: 10 })),
        ]);
        assert.deepEqual((await monthLines(h, 'rs-carry')).slice(1), [['aff-1', '2026-11', 'revshare', '-15.00']]);
        const days = await h.t.store.knex('commission_customer_days').where('partner_id', 'casino').count({ n: '*' }).first();
        assert.equal(Number(days?.n), 30);
        assert.deepEqual(await h.t.store.knex('commission_pending').select('kind'), []);
        await h.agrees();
      } finally {
        delete process.env.PARTNER_SYNC_EVALUATION_CUSTOMERS;
      }
    });

    for (const [label, settleAfterMs, early] of [['have waited the time bound', 0, true], ['are within the time bound', undefined, false]] as const) {
      it(`a bulk run's records that ${label} are evaluated ${early ? 'at the next commit' : 'at its end'}, however few`, async () => {
        await h.load('customers', [igCustomer('c1')]);
        const loader = loaderWith(h.t.store, [commissionJob(h.t.store, h.plans, silentLogger())], settleAfterMs === undefined ? {} : { settleAfterMs });
        loader.evaluateRun('slow-backfill', 'behind');
        const load = (date: string, ggr: number) => loader.load({ partner: 'casino', variant: 'igaming', entity: 'activity', runId: 'slow-backfill', records: raw([play(date, 'c1', { ggr })]) });
        await load('2026-11-02', 400);
        // 400 x 25% = 100.00 once settled; two records are far below SETTLE_EVERY.
        assert.deepEqual(await monthLines(h, 'rs-carry'), early ? [['aff-1', '2026-11', 'revshare', '100.00']] : []);
        await load('2026-11-03', 200);
        assert.deepEqual(await monthLines(h, 'rs-carry'), early ? [['aff-1', '2026-11', 'revshare', '100.00'], ['aff-1', '2026-11', 'revshare', '50.00']] : []);
        await loader.endDeferred('slow-backfill');
        assert.deepEqual((await monthLines(h, 'rs-carry')).map((l) => l[3]), early ? ['100.00', '50.00'] : ['150.00']);
        await h.agrees();
      });
    }

    it('a customer moved to another affiliate moves their revenue', async () => {
      await h.load('customers', [igCustomer('c1'), igCustomer('c2')]);
      await h.load('activity', [play('2026-11-02', 'c1', { ggr: 100 }), play('2026-11-03', 'c2', { ggr: 300 })]);
      await h.load('customers', [igCustomer('c2', { affiliate_id: 'aff-2' })]);
      assert.deepEqual(await monthLines(h, 'rs-carry'), [
        ['aff-1', '2026-11', 'revshare', '100.00'], ['aff-1', '2026-11', 'revshare', '-75.00'], ['aff-2', '2026-11', 'revshare', '75.00'],
      ]);
      await h.agrees();
    });

    it('rerunning every batch adds no line', async () => {
      const batches = async () => {
        await h.load('customers', [igCustomer('c1'), igCustomer('c2')]);
        await h.load('transactions', [tx('b1', 'c1', 'bonus', 10, { transaction_date: '2026-11-03T20:00:00Z' })]);
        await h.load('activity', [play('2026-10-02', 'c1', { ggr: -50 }), play('2026-11-03', 'c1', { ggr: 500 }), play('2026-11-04', 'c2', { total_bets: 90, wins: 10 })]);
      };
      await batches();
      const first = await h.lines();
      assert.ok(first.length > 0);
      await batches();
      await batches();
      assert.deepEqual(await h.lines(), first);
      await h.agrees();
    });
  });
}
