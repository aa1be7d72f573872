/**
 * The shipped defaults (config/fraud.yaml as it is) on the small cases an affiliate manager acts
 * on, each beside a clean look-alike that must not flag: two quick round trips barely played
 * (deposit_cycling by weight), 6 of an affiliate's 10 FTDs reversed (chargeback_rate by its
 * confidence bound, no minimum count), a bonus withdrawn unplayed beside a big winner's
 * withdrawal, and a click id shared by two accounts beside a tracker's unfilled macro on many.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { STORES } from '../support/stores.js';
import { bets, cust, fraudHarness, tx, type FraudHarness } from './harness.js';

const backend = STORES[0]!;
const shipped = readFileSync(join(process.cwd(), 'config', 'fraud.yaml'), 'utf8');
const ids = (flags: { customers: string[] }[]) => flags.map((f) => f.customers);

describe('fraud rules: the shipped defaults on small cases and their clean look-alikes', () => {
  let h: FraudHarness;
  afterEach(async () => { await h.drop(); });

  it('deposit_cycling: 500 in / 490 out, then 600 in / 590 out two days later with 10 wagered in all flags (weight 1.9627); the same trips played 40% each, or one trip barely played, do not', async () => {
    h = await fraudHarness(backend, shipped);
    await h.load('customers', [cust('cy1'), cust('cy2'), cust('cy3')]);
    const trips = (c: string) => [
      tx(`${c}-a`, c, 'deposit', 500, '2026-11-02T09:00:00Z'), tx(`${c}-b`, c, 'withdrawal', 490, '2026-11-02T18:00:00Z'),
      tx(`${c}-c`, c, 'deposit', 600, '2026-11-04T09:00:00Z'), tx(`${c}-d`, c, 'withdrawal', 590, '2026-11-04T19:00:00Z'),
    ];
    await h.load('transactions', [...trips('cy1'), ...trips('cy2'), tx('cy3-a', 'cy3', 'deposit', 500, '2026-11-02T09:00:00Z'), tx('cy3-b', 'cy3', 'withdrawal', 495, '2026-11-02T12:00:00Z')]);
    // cy1: 6 + 4 wagered (2% of the deposits); cy2: 100 of 500 and 120 of 600 (weights 0.6 + 0.6 = 1.2); cy3: one trip, 2 wagered (0.992).
    await h.load('activity', [bets('2026-11-02', 'cy1', 6), bets('2026-11-04', 'cy1', 4), bets('2026-11-02', 'cy2', 100), bets('2026-11-04', 'cy2', 120), bets('2026-11-02', 'cy3', 2)]);
    const flags = await h.flags('deposit_cycling');
    assert.deepEqual(ids(flags), [['cy1']]);
    const e = flags[0]!.evidence as { cycles: number; weight: string; min_weight: number; pairs: { weight: string; wagering_usd: string }[] };
    // 1 − 6 ÷ (0.5 × 500) = 0.9760; 1 − 4 ÷ (0.5 × 600) = 0.9867; 1.9627 ≥ 1.8 though 2 < 3 cycles.
    assert.deepEqual([e.cycles, e.weight, e.min_weight, e.pairs.map((p) => [p.wagering_usd, p.weight])], [2, '1.9627', 1.8, [['6.00', '0.9760'], ['4.00', '0.9867']]]);
    assert.equal(flags[0]!.severity, 'medium');
  });

  it('chargeback_rate: an affiliate with 10 FTDs, 6 of them reversed or charged back, flags (lower bound 0.2725); one of 10, or one of 2, does not', async () => {
    h = await fraudHarness(backend, shipped);
    const n = (i: number) => String(i).padStart(2, '0');
    const custs = [];
    const txs = [];
    for (let i = 1; i <= 10; i++) {
      custs.push(cust(`a${n(i)}`, 'aff-1'), cust(`b${n(i)}`, 'aff-2'));
      // aff-1: a02, a04, a06 reversed; a01, a03, a05 charged back on 11-14.
      txs.push(tx(`ta${n(i)}`, `a${n(i)}`, 'deposit', 50, `2026-11-${n(i)}T10:00:00Z`, { status: i <= 6 && i % 2 === 0 ? 'reversed' : 'approved' }));
      if (i <= 6 && i % 2 === 1) txs.push(tx(`ca${n(i)}`, `a${n(i)}`, 'adjustment', -50, '2026-11-14T10:00:00Z', { transaction_subtype: 'chargeback' }));
      // aff-2: one chargeback among 10 (0.1, not above 0.1).
      txs.push(tx(`tb${n(i)}`, `b${n(i)}`, 'deposit', 50, `2026-11-${n(i)}T11:00:00Z`));
    }
    txs.push(tx('cb01', 'b01', 'adjustment', -50, '2026-11-14T11:00:00Z', { transaction_subtype: 'chargeback' }));
    // aff-3, a new affiliate: 2 FTDs, one charged back (1 of 2: lower bound 0.0728 at z 2.326; 0.1209 at 1.645 would flag it).
    for (let i = 1; i <= 2; i++) {
      custs.push(cust(`s${i}`, 'aff-3'));
      txs.push(tx(`ts${i}`, `s${i}`, 'deposit', 50, `2026-11-0${i}T12:00:00Z`));
    }
    txs.push(tx('cs1', 's2', 'adjustment', -50, '2026-11-05T12:00:00Z', { transaction_subtype: 'chargeback' }));
    await h.load('customers', custs);
    await h.load('transactions', txs);
    const flags = await h.flags('chargeback_rate');
    assert.deepEqual(flags.map((f) => [JSON.parse(f.instance_key), f.customers]), [[['aff-1', '2026-11'], ['a01', 'a02', 'a03', 'a04', 'a05', 'a06']]]);
    const e = flags[0]!.evidence;
    // The window ending 11-14 holds the 10 deposits and the 6 reversals: 0.6000, Wilson lower bound at z 2.326: 0.2725.
    assert.deepEqual([e.window_to, e.deposits, e.reversals, e.rate, e.rate_lower_bound], ['2026-11-14', 10, 6, '0.6000', '0.2725']);
  });

  it('bonus_bust_out: 100 deposited, a 100 bonus, 60 bet and 180 withdrawn the next day flags; a big winner who won 250 net on 150 bet and withdrew 330 does not (the win explains it)', async () => {
    h = await fraudHarness(backend, shipped);
    await h.load('customers', [cust('bb1'), cust('bw1')]);
    const start = (c: string) => [tx(`${c}-d`, c, 'deposit', 100, '2026-11-02T09:00:00Z'), tx(`${c}-b`, c, 'bonus', 100, '2026-11-02T09:01:00Z')];
    await h.load('transactions', [...start('bb1'), tx('bb1-w', 'bb1', 'withdrawal', 180, '2026-11-03T12:00:00Z'), ...start('bw1'), tx('bw1-w', 'bw1', 'withdrawal', 330, '2026-11-03T12:00:00Z')]);
    await h.load('activity', [
      { ...bets('2026-11-02', 'bb1', 60), wins: 54 }, { ...bets('2026-11-03', 'bb1', 0), wins: 0 },
      { ...bets('2026-11-02', 'bw1', 150), wins: 400 }, { ...bets('2026-11-03', 'bw1', 0), wins: 0 },
    ]);
    const flags = await h.flags('bonus_bust_out');
    assert.deepEqual(ids(flags), [['bb1']]);
    // 180 − 100 net deposits = 80 ≥ 0.5 × 100 (no net win: 54 − 60 < 0); 60 < 3 × 100.
    assert.deepEqual([flags[0]!.evidence.bonus_out_usd, flags[0]!.evidence.wagering_usd], ['80.00', '60.00']);
  });

  it('duplicate_identity: one click id on two accounts flags; a tracker’s "{clickid}" on six accounts (more than click_max_accounts 5) does not', async () => {
    h = await fraudHarness(backend, shipped);
    const tracker = Array.from({ length: 6 }, (_u, i) => cust(`t${i + 1}`, 'aff-9', { click_id: '{clickid}', signup_date: `2026-11-0${i + 1}T10:00:00Z` }));
    await h.load('customers', [cust('k1', 'aff-1', { click_id: 'clk-77' }), cust('k2', 'aff-1', { click_id: 'clk-77' }), ...tracker]);
    const flags = await h.flags('duplicate_identity');
    assert.deepEqual(flags.map((f) => [JSON.parse(f.instance_key), f.customers]), [[['click', 'clk-77'], ['k1', 'k2']]]);
  });
});
