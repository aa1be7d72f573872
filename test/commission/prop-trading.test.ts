/**
 * challenge_cpa and phase_bonus, hand-computed (docs/commissions.md, Challenge CPA, Phase bonus).
 */
import assert from 'node:assert/strict';
import { STORES } from '../support/stores.js';
import { brief, harness, prop, trader, tx, type Harness } from './harness.js';

const PLANS = `
plans:
  - id: fees
    kind: challenge_cpa
    partner: firm
    affiliates: all
    effective: { from: 2026-01-01 }
    rates:
      - { challenge_type: [instant_funding], rate: 0.15 }
      - { account_size: { min_usd: 100000 }, rate: 0.12 }
      - { account_size: { below_usd: 100000 }, rate: 0.10 }
  - id: fees-reset
    kind: challenge_cpa
    partner: firm-r
    affiliates: [aff-1]
    effective: { from: 2026-01-01 }
    include_reset_fee: true
    rates: [{ rate: 0.2 }]
  - id: funded
    kind: phase_bonus
    partner: firm
    affiliates: all
    effective: { from: 2026-01-01 }
    phase: funded
    amount_usd: 50
  - id: phase-2
    kind: phase_bonus
    partner: firm
    affiliates: all
    effective: { from: 2026-01-01 }
    phase: phase_2
    amount_usd: 20
`;

const fee = (id: string, customer: string, amount: number, extra = {}) => tx(id, customer, 'challenge_fee', amount, extra);

for (const backend of STORES) {
  describe(`commission challenge_cpa and phase_bonus on ${backend.name}`, () => {
    let h: Harness;
    beforeEach(async () => { h = await harness(backend, PLANS); });
    afterEach(async () => h.drop());

    it('a percentage of each approved fee; the rate by challenge_type and account_size, at the boundary', async () => {
      await h.load('customers', [
        trader('t1', { challenge_type: 'instant_funding', account_size: 200000 }),
        trader('t2', { account_size: 100000 }),
        trader('t3', { account_size: 99999.99 }),
        trader('t4', { account_size: undefined }),
      ], prop);
      await h.load('transactions', [fee('f1', 't1', 500), fee('f2', 't2', 500), fee('f3', 't3', 500), fee('f4', 't4', 500), fee('f5', 't3', 99.95, { status: 'pending' })], prop);
      // 15%, 12%, 10% of 500; t4 has no account_size: no rule matches
      assert.deepEqual((await h.lines({ plan: 'fees' })).map((l) => [l.customer_id, l.ref_id, l.amount_usd, l.basis.rate]), [
        ['t1', 'f1', '75.00', '0.15'], ['t2', 'f2', '60.00', '0.12'], ['t3', 'f3', '50.00', '0.1'],
      ]);
      await h.agrees();
    });

    it('a refunded fee gives a negative line; partial refunds take back their share, never more than was earned', async () => {
      await h.load('customers', [trader('t1'), trader('t2'), trader('t3')], prop);
      await h.load('transactions', [fee('f1', 't1', 500), fee('f2', 't2', 500), fee('f3', 't3', 99.95)], prop);
      await h.load('transactions', [
        tx('r1', 't1', 'refund', 500, { note: 'refund of f1', transaction_date: '2026-11-03T00:00:00Z' }),
        tx('r2', 't2', 'refund', 200, { transaction_date: '2026-11-03T00:00:00Z' }),
        tx('r3', 't3', 'refund', 800, { transaction_date: '2026-11-03T00:00:00Z' }),
      ], prop);
      // f1: 50 − 50; f2: 10% × (500 − 200) = 30 → −20; f3: 9.995 → 10.00 (half-even), refunded whole → −10.00
      assert.deepEqual((await h.lines({ plan: 'fees' })).map((l) => [l.ref_id, l.reason, l.amount_usd, l.period]), [
        ['f1', 'challenge_fee', '50.00', '2026-10'], ['f2', 'challenge_fee', '50.00', '2026-10'], ['f3', 'challenge_fee', '10.00', '2026-10'],
        ['f1', 'challenge_fee_refunded', '-50.00', '2026-11'], ['f2', 'challenge_fee_refunded', '-20.00', '2026-11'], ['f3', 'challenge_fee_refunded', '-10.00', '2026-11'],
      ]);
      const f1 = (await h.lines({ plan: 'fees' }))[3];
      assert.deepEqual(f1?.sources, ['transactions:f1', 'transactions:r1']);
      await h.agrees();
    });

    it('a reversed fee gives back exactly what it earned', async () => {
      await h.load('customers', [trader('t1')], prop);
      await h.load('transactions', [fee('f1', 't1', 333.33)], prop);
      await h.load('transactions', [fee('f1', 't1', 333.33, { status: 'reversed' })], prop);
      assert.deepEqual(brief(await h.lines({ plan: 'fees' })), [['challenge_fee', '33.33'], ['challenge_fee_reversed', '-33.33']]);
      await h.agrees();
    });

    it('reset fees only when the plan includes them; a refund goes to the latest fee before it', async () => {
      const pr = { partner: 'firm-r', variant: 'prop-trading' as const };
      await h.load('customers', [trader('t1')], pr);
      await h.load('transactions', [
        fee('f1', 't1', 100),
        tx('s1', 't1', 'reset_fee', 80, { transaction_date: '2026-10-20T00:00:00Z' }),
        tx('r1', 't1', 'refund', 90, { transaction_date: '2026-10-25T00:00:00Z' }),
      ], pr);
      // 20% of 100 = 20; reset 80 → 16, the refund of 90: 80 from the reset (latest), 10 from f1 → f1 18, s1 0
      assert.deepEqual((await h.lines({ plan: 'fees-reset' })).map((l) => [l.ref_id, l.reason, l.amount_usd]), [
        ['f1', 'challenge_fee_refunded', '18.00'],
      ]);
      // Another partner's plan without reset fees: nothing for s1.
      await h.load('customers', [trader('t9')], prop);
      await h.load('transactions', [tx('s9', 't9', 'reset_fee', 80)], prop);
      assert.deepEqual(await h.lines({ plan: 'fees' }), []);
      await h.agrees();
    });

    it('phase bonus once on first reaching the phase: reached twice pays once, never clawed back', async () => {
      await h.load('customers', [trader('t1', { phase: 'phase_1' })], prop);
      assert.deepEqual(await h.lines({ plan: 'funded' }), []);
      await h.load('customers', [trader('t1', { phase: 'funded', last_modified_date: '2026-11-04T10:00:00Z' })], prop);
      await h.load('customers', [trader('t1', { phase: 'failed', last_modified_date: '2026-11-10T10:00:00Z' })], prop);
      await h.load('customers', [trader('t1', { phase: 'funded', last_modified_date: '2026-12-01T10:00:00Z' })], prop);
      const lines = await h.lines({ plan: 'funded' });
      assert.deepEqual(lines.map((l) => [l.reason, l.amount_usd, l.period]), [['phase_bonus', '50.00', '2026-11']]);
      // Funded implies phase_2 passed: its bonus was paid at the same time.
      assert.deepEqual(brief(await h.lines({ plan: 'phase-2' })), [['phase_bonus', '20.00']]);
      await h.agrees();
    });

    it('a challenge fee in EUR waits for its rate', async () => {
      await h.load('customers', [trader('t1')], prop);
      await h.load('transactions', [fee('f1', 't1', 400, { currency: 'EUR' })], prop);
      assert.deepEqual(await h.lines({ plan: 'fees' }), []);
      assert.deepEqual((await h.holds()).map((x) => [x.line_key, x.missing]), [['challenge_cpa|fees|firm|f1', ['EUR 2026-10-02']]]);
      await h.rates('date,currency,rate\n2026-10-02,EUR,1.25\n');
      assert.deepEqual(brief(await h.lines({ plan: 'fees' })), [['challenge_fee', '50.00']]);
      assert.deepEqual(await h.holds(), []);
      await h.agrees();
    });
  });
}
