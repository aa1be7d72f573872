/**
 * Each rule on the worked example of docs/fraud.md (numbers computed by hand there) and a near
 * miss that must not flag, loaded through the real Loader and the after-load composition.
 */
import { strict as assert } from 'node:assert';
import { scanFraud } from '../../jobs/fraud.js';
import { decideFlag } from '../../src/fraud/flags.js';
import { emailKey, maskEmail, nameKey } from '../../src/fraud/identity.js';
import type { SpecRecord } from '../../src/types.js';
import { raw } from '../support/records.js';
import { STORES } from '../support/stores.js';
import { bets, cust, fraudHarness, trade, tx, type FraudHarness } from './harness.js';

const backend = STORES[0]!;
const ids = (flags: { customers: string[] }[]) => flags.map((f) => f.customers);

describe('fraud rules: the worked examples of docs/fraud.md', () => {
  let h: FraudHarness;
  afterEach(async () => { await h.drop(); });

  it('duplicate_identity: John.Doe+promo@GoogleMail.com and johndoe@gmail.com under two affiliates; dots elsewhere count; a reused click_id; one flag grows', async () => {
    h = await fraudHarness(backend, 'rules: {}');
    await h.load('customers', [
      cust('c1', 'aff-1', { email: 'John.Doe+promo@GoogleMail.com' }),
      cust('c2', 'aff-2', { email: 'johndoe@gmail.com' }),
      cust('c3', 'aff-1', { email: 'john.doe@example.com' }),
      cust('c4', 'aff-1', { email: 'johndoe@example.com' }),
      cust('c5', 'aff-3', { click_id: 'clk-9' }),
      cust('c6', 'aff-3', { click_id: 'clk-9' }),
    ]);
    const flags = await h.flags('duplicate_identity');
    assert.deepEqual(flags.map((f) => [JSON.parse(f.instance_key), f.customers, f.affiliate_id, f.severity]), [
      [['click', 'clk-9'], ['c5', 'c6'], 'aff-3', 'medium'],
      [['email', emailKey('johndoe@gmail.com')], ['c1', 'c2'], null, 'high'],
    ]);
    // No e-mail address is stored: the key is the masked form and a digest.
    assert.match(emailKey('johndoe@gmail.com'), /^j\*{5}e@gmail\.com#[0-9a-f]{24}$/);
    const stored = JSON.stringify(await h.t.store.knex('fraud_flags').select('*')) + JSON.stringify(await h.t.store.knex('fraud_identities').select('*'));
    for (const plain of ['johndoe@gmail.com', 'john.doe', 'John.Doe']) assert.ok(!stored.includes(plain), `${plain} stored`);
    assert.deepEqual(flags[1]!.evidence.affiliates, ['aff-1', 'aff-2']);
    await h.load('customers', [cust('c7', 'aff-2', { email: 'JOHNDOE+x@gmail.com' })]);
    const grown = await h.flags('duplicate_identity');
    assert.deepEqual(grown.map((f) => [f.id, f.customers]), [[flags[0]!.id, ['c5', 'c6']], [flags[1]!.id, ['c1', 'c2', 'c7']]]);
    assert.equal(grown[1]!.evidence.accounts, 3);
  });

  it('a customer leaving an identity: the open flag is withdrawn; a decided one stays, noted unsupported, and a scan changes nothing more', async () => {
    h = await fraudHarness(backend, 'rules: {}');
    const v = (id: string, email: string, at: string) => cust(id, 'aff-1', { email, last_modified_date: at });
    await h.load('customers', [v('c1', 'a@x.com', '2026-11-01T00:00:00Z'), v('c2', 'a@x.com', '2026-11-01T00:00:00Z'), v('c3', 'b@x.com', '2026-11-01T00:00:00Z'), v('c4', 'b@x.com', '2026-11-01T00:00:00Z')]);
    const [a, b] = (await h.flags()).sort((x, y) => (x.customers[0]! < y.customers[0]! ? -1 : 1));
    assert.deepEqual([a!.instance_key, b!.instance_key].sort(), [JSON.stringify(['email', emailKey('a@x.com')]), JSON.stringify(['email', emailKey('b@x.com')])].sort());
    assert.equal(maskEmail('a@x.com'), '*@x.com');
    await decideFlag(h.t.store, b!.id, 'confirmed', 'maria', 'one player');
    h.clock.set('2026-11-22T12:00:00.000Z');
    // Only c2 and c4 change: their old groups must be judged again although no other member is touched.
    await h.load('customers', [v('c2', 'c2@x.com', '2026-11-03T00:00:00Z'), v('c4', 'c4@x.com', '2026-11-03T00:00:00Z')]);
    const after = await h.flags();
    assert.deepEqual(after.map((f) => [f.id, f.status, f.customers, f.unsupported_since]), [[b!.id, 'confirmed', ['c3', 'c4'], '2026-11-22T12:00:00.000000Z']]);
    const scan = await scanFraud(h.t.store, h.config);
    assert.deepEqual(scan.map((x) => [x.opened, x.updated, x.withdrawn, x.unsupported]), [[0, 0, 0, 0]]);
  });

  it('duplicate_identity: first + last name + country, case and spaces aside, signed up 5 hours apart; another country is another person', async () => {
    h = await fraudHarness(backend, 'rules: {}');
    await h.load('customers', [
      cust('n1', 'aff-1', { first_name: 'Ann', last_name: 'Lee', country_code: 'DE', signup_date: '2026-11-01T08:00:00Z' }),
      cust('n2', 'aff-2', { first_name: ' ann ', last_name: 'LEE', country_code: 'DE', signup_date: '2026-11-01T13:00:00Z' }),
      cust('n3', 'aff-2', { first_name: 'Ann', last_name: 'Lee', country_code: 'AT' }),
    ]);
    const flags = await h.flags();
    assert.deepEqual(flags.map((f) => [JSON.parse(f.instance_key), f.customers]), [[['name', nameKey('ann', 'lee', 'DE')], ['n1', 'n2']]]);
    assert.match(nameKey('ann', 'lee', 'DE'), /^a\. l\. DE#[0-9a-f]{24}$/);
    assert.deepEqual([flags[0]!.evidence.closest_signups_hours, flags[0]!.evidence.closest_signups], ['5.00', ['n1', 'n2']]);
  });

  it('duplicate_identity by name: signups 3 days apart link no one; a fourth Ann Lee (DE) makes it a common name and the flag is withdrawn', async () => {
    h = await fraudHarness(backend, 'rules: {}');
    const ann = (id: string, aff: string, at: string) => cust(id, aff, { first_name: 'Ann', last_name: 'Lee', country_code: 'DE', signup_date: at });
    await h.load('customers', [ann('n1', 'aff-1', '2026-11-01T08:00:00Z'), ann('n2', 'aff-2', '2026-11-04T08:00:00Z')]);
    assert.deepEqual(await h.flags(), []);
    await h.load('customers', [ann('n3', 'aff-3', '2026-11-04T20:00:00Z')]);
    assert.deepEqual((await h.flags()).map((f) => f.customers), [['n1', 'n2', 'n3']]);
    await h.load('customers', [ann('n4', 'aff-4', '2026-11-09T08:00:00Z')]);
    assert.deepEqual(await h.flags(), []);
  });

  it('duplicate_identity with name_key: false: names alone link no one', async () => {
    h = await fraudHarness(backend, 'rules: { duplicate_identity: { name_key: false } }');
    await h.load('customers', [cust('n1', 'aff-1', { first_name: 'Ann', last_name: 'Lee', country_code: 'DE' }), cust('n2', 'aff-2', { first_name: 'Ann', last_name: 'Lee', country_code: 'DE' })]);
    assert.deepEqual(await h.flags(), []);
  });

  it('cpa_farming: 2 of aff-1’s 4 November FTDs at the baseline with little play (share 0.5000); aff-2 with 1 of 4 does not flag', async () => {
    h = await fraudHarness(backend, 'rules: { cpa_farming: { baseline_usd: 20, margin: 0.25, wagering_multiple: 1, within_days: 7, min_ftds: 4, min_share: 0.5 } }');
    await h.load('customers', ['f1', 'f2', 'f3', 'f4'].map((c) => cust(c, 'aff-1')).concat(['g1', 'g2', 'g3', 'g4'].map((c) => cust(c, 'aff-2')), [cust('z', 'aff-9')]));
    await h.load('transactions', [
      tx('t1', 'f1', 'deposit', 20, '2026-11-02T10:00:00Z'), tx('t2', 'f2', 'deposit', 24, '2026-11-03T10:00:00Z'),
      tx('t3', 'f3', 'deposit', 25, '2026-11-04T10:00:00Z'), tx('t4', 'f4', 'deposit', 100, '2026-11-05T10:00:00Z'),
      tx('u1', 'g1', 'deposit', 20, '2026-11-02T10:00:00Z'), tx('u2', 'g2', 'deposit', 24, '2026-11-03T10:00:00Z'),
      tx('u3', 'g3', 'deposit', 25, '2026-11-04T10:00:00Z'), tx('u4', 'g4', 'deposit', 100, '2026-11-05T10:00:00Z'),
    ]);
    await h.load('activity', [
      bets('2026-11-02', 'f1', 5), bets('2026-11-03', 'f2', 10), bets('2026-11-10', 'f2', 100), bets('2026-11-04', 'f3', 30),
      bets('2026-11-02', 'g1', 5), bets('2026-11-03', 'g2', 10), bets('2026-11-09', 'g2', 20), bets('2026-11-04', 'g3', 30),
      // Another player's activity: every day 11-02..11-10 is loaded, so the 7-day windows are complete.
      ...['02', '03', '04', '05', '06', '07', '08', '09', '10'].map((d) => bets(`2026-11-${d}`, 'z', 50)),
    ]);
    const flags = await h.flags('cpa_farming');
    assert.deepEqual(flags.map((f) => [JSON.parse(f.instance_key), f.customers]), [[['aff-1', '2026-11'], ['f1', 'f2']]]);
    const e = flags[0]!.evidence;
    assert.deepEqual([e.ftds, e.farmed, e.share, e.deposit_band_usd], [4, 2, '0.5000', ['20.00', '25.00']]);
  });

  it('bonus_bust_out: 100 deposited, a 50 bonus, 180 wagered, 130 withdrawn within 3 days flags once 11-04 is loaded; 300 wagered, a withdrawal a minute too late, or one within the deposits, does not', async () => {
    h = await fraudHarness(backend, 'rules: { bonus_bust_out: { wagering_multiple: 5 } }');
    await h.load('customers', [cust('b1'), cust('b2'), cust('b3'), cust('b4')]);
    await h.load('transactions', [
      tx('de1', 'b1', 'deposit', 100, '2026-11-02T09:00:00Z'), tx('bo1', 'b1', 'bonus', 50, '2026-11-02T10:00:00Z'), tx('wd1', 'b1', 'withdrawal', 130, '2026-11-04T09:00:00Z'),
      tx('bo2', 'b2', 'bonus', 50, '2026-11-02T10:00:00Z'), tx('wd2', 'b2', 'withdrawal', 120, '2026-11-04T09:00:00Z'),
      tx('bo3', 'b3', 'bonus', 50, '2026-11-02T10:00:00Z'), tx('wd3', 'b3', 'withdrawal', 120, '2026-11-05T10:01:00Z'),
      tx('de4', 'b4', 'deposit', 100, '2026-11-02T09:00:00Z'), tx('bo4', 'b4', 'bonus', 50, '2026-11-02T10:00:00Z'), tx('wd4', 'b4', 'withdrawal', 90, '2026-11-04T09:00:00Z'),
    ]);
    await h.load('activity', [bets('2026-11-02', 'b1', 100), bets('2026-11-03', 'b1', 80), bets('2026-11-02', 'b2', 300), bets('2026-11-02', 'b3', 10)]);
    // No activity of 11-04 is loaded yet: b1's wagering up to its withdrawal is unknown, not 180.
    assert.deepEqual(await h.flags('bonus_bust_out'), []);
    const pending = await h.t.store.knex('fraud_customers').where({ customer_id: 'b1' }).first('pending_from', 'pending_to');
    assert.deepEqual(pending, { pending_from: '2026-11-04', pending_to: '2026-11-04' });
    // Another player's row loads 11-04: b1 is judged again although none of its rows came.
    await h.load('activity', [bets('2026-11-04', 'b3', 5)]);
    const flags = await h.flags('bonus_bust_out');
    assert.deepEqual(flags.map((f) => [JSON.parse(f.instance_key), f.customers]), [[['b1', 'bo1'], ['b1']]]);
    assert.deepEqual([flags[0]!.evidence.net_deposits_usd, flags[0]!.evidence.bonus_out_usd, flags[0]!.evidence.wagering_usd, flags[0]!.evidence.wagering_limit_usd], ['100.00', '30.00', '180.00', '250.00']);
  });

  it('a replaced activity day without a customer’s row re-judges that customer: the bust-out its wagering hid is flagged', async () => {
    h = await fraudHarness(backend, 'rules: { bonus_bust_out: { wagering_multiple: 5 } }');
    await h.load('customers', [cust('b1'), cust('b2')]);
    await h.load('transactions', [tx('bo1', 'b1', 'bonus', 50, '2026-11-02T10:00:00Z'), tx('wd1', 'b1', 'withdrawal', 120, '2026-11-03T09:00:00Z')]);
    await h.load('activity', [bets('2026-11-02', 'b1', 300), bets('2026-11-02', 'b2', 40), bets('2026-11-03', 'b2', 40)]);
    assert.deepEqual(await h.flags(), []);
    await h.loader.transaction(async (t) => {
      await t.replaceDays('casino', 'igaming', ['2026-11-02'], 'run-replace');
      await t.load({ partner: 'casino', variant: 'igaming', entity: 'activity', runId: 'run-replace', records: raw([bets('2026-11-02', 'b2', 40)]) });
    });
    const flags = await h.flags('bonus_bust_out');
    assert.deepEqual(flags.map((f) => [JSON.parse(f.instance_key), f.evidence.wagering_usd]), [[['b1', 'bo1'], '0.00']]);
  });

  it('deposit_cycling: two deposits mostly withdrawn within 3 days with little play flag; a second withdrawal under 80% leaves one cycle', async () => {
    h = await fraudHarness(backend, 'rules: { deposit_cycling: { min_cycles: 2 } }');
    await h.load('customers', [cust('d1'), cust('d2'), cust('z')]);
    const cycle = (c: string, second: number) => [
      tx(`${c}-a`, c, 'deposit', 100, '2026-11-02T10:00:00Z'), tx(`${c}-b`, c, 'withdrawal', 95, '2026-11-03T10:00:00Z'),
      tx(`${c}-c`, c, 'deposit', 200, '2026-11-05T10:00:00Z'), tx(`${c}-d`, c, 'withdrawal', second, '2026-11-06T10:00:00Z'),
    ];
    await h.load('transactions', [...cycle('d1', 190), ...cycle('d2', 150)]);
    await h.load('activity', [bets('2026-11-02', 'd1', 20), bets('2026-11-05', 'd1', 40), bets('2026-11-02', 'd2', 20), bets('2026-11-05', 'd2', 40), bets('2026-11-03', 'z', 10), bets('2026-11-06', 'z', 10)]);
    const flags = await h.flags('deposit_cycling');
    assert.deepEqual(ids(flags), [['d1']]);
    assert.equal(flags[0]!.evidence.cycles, 2);
  });

  it('chargeback_rate: 2 of the first 5 deposits reversed (0.4000 over 2026-10-07..2026-11-05); aff-2’s 1 in 10 (0.1) is not above 0.1', async () => {
    h = await fraudHarness(backend, 'rules: { chargeback_rate: { window_days: 30, max_rate: 0.1, min_deposits: 5, confidence_z: 1.645 } }');
    const n = (i: number) => String(i).padStart(2, '0');
    const custs = [];
    const txs = [];
    for (let i = 1; i <= 12; i++) {
      custs.push(cust(`a${n(i)}`, 'aff-1'));
      txs.push(tx(`ta${n(i)}`, `a${n(i)}`, 'deposit', 50, `2026-11-${n(i)}T10:00:00Z`, { status: i <= 2 ? 'reversed' : 'approved' }));
    }
    for (let i = 1; i <= 10; i++) {
      custs.push(cust(`b${n(i)}`, 'aff-2'));
      txs.push(tx(`tb${n(i)}`, `b${n(i)}`, 'deposit', 50, '2026-11-10T10:00:00Z', { status: i === 10 ? 'reversed' : 'approved' }));
    }
    await h.load('customers', custs);
    await h.load('transactions', txs);
    const flags = await h.flags('chargeback_rate');
    assert.deepEqual(flags.map((f) => [JSON.parse(f.instance_key), f.customers]), [[['aff-1', '2026-11'], ['a01', 'a02']]]);
    const e = flags[0]!.evidence;
    assert.deepEqual([e.window_from, e.window_to, e.deposits, e.reversals, e.rate, e.rate_lower_bound], ['2026-10-07', '2026-11-05', 5, 2, '0.4000', '0.1427']);
  });

  it('ftd_spike: 4 FTDs after 7 days of 1 (mean 1, 4 > 3) flag; 5 after 7 days of 2 (5 ≤ 6), or 6 on a new affiliate’s first day, do not', async () => {
    h = await fraudHarness(backend, 'rules: { ftd_spike: { history_days: 7, multiple: 3, min_ftds: 4 } }');
    const custs: SpecRecord[] = [];
    const txs: SpecRecord[] = [];
    const add = (aff: string, day: string, count: number) => {
      for (let i = 0; i < count; i++) {
        const id = `${aff}-${day}-${i}`;
        custs.push(cust(id, aff));
        txs.push(tx(`t-${id}`, id, 'deposit', 50, `${day}T10:00:00Z`));
      }
    };
    for (let d = 1; d <= 7; d++) { add('aff-1', `2026-11-0${d}`, 1); add('aff-2', `2026-11-0${d}`, 2); }
    add('aff-1', '2026-11-08', 4);
    add('aff-2', '2026-11-08', 5);
    add('aff-3', '2026-11-08', 6); // a first day: no history, not judged
    await h.load('customers', custs);
    await h.load('transactions', txs);
    const flags = await h.flags('ftd_spike');
    assert.deepEqual(flags.map((f) => JSON.parse(f.instance_key)), [['aff-1', '2026-11-08']]);
    assert.deepEqual([flags[0]!.evidence.ftds, flags[0]!.evidence.history_ftds, flags[0]!.evidence.daily_mean], [4, 7, '1.0000']);
  });
});

describe('fraud rules, prop trading: the worked examples of docs/fraud.md', () => {
  let h: FraudHarness;
  afterEach(async () => { await h.drop(); });

  it('mirrored_pnl: +1000/−950 on EURUSD and −800/+820 on XAUUSD on two days flag p1|p2; a 150 gap on one of p3|p4’s two days does not', async () => {
    h = await fraudHarness(backend, 'rules: { mirrored_pnl: { min_days: 2, pnl_tolerance: 0.1 } }', 'prop-trading');
    await h.load('customers', ['p1', 'p2', 'p3', 'p4'].map((c) => cust(c)));
    await h.load('activity', [
      trade('2026-11-02', 'p1', 'EURUSD', 5, 1000), trade('2026-11-02', 'p2', 'EURUSD', 5.5, -950),
      trade('2026-11-03', 'p1', 'XAUUSD', 2, -800), trade('2026-11-03', 'p2', 'XAUUSD', 2, 820),
      trade('2026-11-02', 'p3', 'NAS100', 5, 1000), trade('2026-11-02', 'p4', 'NAS100', 5, -850),
      trade('2026-11-03', 'p3', 'US30', 2, -800), trade('2026-11-03', 'p4', 'US30', 2, 820),
    ]);
    const flags = await h.flags('mirrored_pnl');
    assert.deepEqual(flags.map((f) => [JSON.parse(f.instance_key), f.customers, f.evidence.days, f.evidence.common_days, f.evidence.share]), [[['p1', 'p2'], ['p1', 'p2'], 2, 2, '1.0000']]);
    // p5 and p6 mirror on 2 days but trade EURUSD together on 2 more without mirroring: 2 of 4 days (0.5000 < 0.6) is chance.
    await h.load('customers', ['p5', 'p6'].map((c) => cust(c)));
    await h.load('activity', [
      trade('2026-11-05', 'p5', 'EURUSD', 5, 1000), trade('2026-11-05', 'p6', 'EURUSD', 5, -1000),
      trade('2026-11-06', 'p5', 'EURUSD', 5, -700), trade('2026-11-06', 'p6', 'EURUSD', 5, 700),
      trade('2026-11-09', 'p5', 'EURUSD', 5, 300), trade('2026-11-09', 'p6', 'EURUSD', 1, 900),
      trade('2026-11-10', 'p5', 'EURUSD', 5, -300), trade('2026-11-10', 'p6', 'EURUSD', 5, -200),
    ]);
    assert.deepEqual((await h.flags('mirrored_pnl')).map((f) => f.customers), [['p1', 'p2']]);
  });

  it('copy_trading: three identical days flag q1|q2; q4’s extra GBPUSD on the third day leaves q3|q4 two', async () => {
    h = await fraudHarness(backend, 'rules: {}', 'prop-trading');
    await h.load('customers', ['q1', 'q2', 'q3', 'q4'].map((c) => cust(c)));
    const days = (a: string, b: string, k: number, extra: boolean) => [
      trade('2026-11-02', a, 'EURUSD', k, 200 * k), trade('2026-11-02', b, 'EURUSD', k, 210 * k),
      trade('2026-11-03', a, 'EURUSD', 2 * k, -100 * k), trade('2026-11-03', b, 'EURUSD', 2 * k, -95 * k),
      trade('2026-11-03', a, 'NAS100', k, 50 * k), trade('2026-11-03', b, 'NAS100', k, 52 * k),
      trade('2026-11-04', a, 'XAUUSD', 0.5 * k, 30 * k), trade('2026-11-04', b, 'XAUUSD', 0.5 * k, 30 * k),
      ...(extra ? [trade('2026-11-04', b, 'GBPUSD', 1, 10)] : []),
    ];
    await h.load('activity', [...days('q1', 'q2', 1, false), ...days('q3', 'q4', 3, true)]);
    const flags = await h.flags('copy_trading');
    assert.deepEqual(flags.map((f) => [JSON.parse(f.instance_key), f.evidence.identical_days]), [[['q1', 'q2'], 3]]);
  });

  it('fast_funding: funded 4.50 days after signup and sharing an e-mail flags s1 with s2; funded fast alone, or linked but slow, does not', async () => {
    h = await fraudHarness(backend, 'rules: {}', 'prop-trading');
    await h.load('customers', [
      cust('s1', 'aff-1', { phase: 'funded', last_modified_date: '2026-11-05T12:00:00Z', email: 'trader@example.com' }),
      cust('s2', 'aff-2', { phase: 'phase_1', email: 'Trader+2@example.com' }),
      cust('s3', 'aff-1', { phase: 'funded', last_modified_date: '2026-11-05T00:00:00Z', email: 'alone@example.com' }),
      cust('s4', 'aff-1', { phase: 'funded', last_modified_date: '2026-11-11T00:00:00Z', email: 'slow@example.com' }),
      cust('s5', 'aff-1', { phase: 'phase_2', email: 'slow@example.com' }),
      cust('s6', 'aff-1', { phase: 'funded', challenge_type: 'instant_funding', last_modified_date: '2026-11-01T00:10:00Z', email: 'slow+6@example.com' }),
    ]);
    const flags = await h.flags('fast_funding');
    assert.deepEqual(flags.map((f) => [JSON.parse(f.instance_key), f.customers, f.evidence.funded_days]), [[['s1'], ['s1', 's2'], '4.50']]);
  });

  it('refund_after_fee: three refunds after a challenge fee under aff-1 in November flag; aff-2’s third refund had no fee before it', async () => {
    h = await fraudHarness(backend, 'rules: { refund_after_fee: { min_refunds: 3 } }', 'prop-trading');
    await h.load('customers', ['r1', 'r2', 'r3'].map((c) => cust(c, 'aff-1')).concat(['v1', 'v2', 'v3'].map((c) => cust(c, 'aff-2'))));
    const pair = (c: string, fee: boolean) => [
      ...(fee ? [tx(`${c}-fee`, c, 'challenge_fee', 99, '2026-11-02T10:00:00Z')] : []),
      tx(`${c}-ref`, c, 'refund', 99, '2026-11-05T10:00:00Z'),
    ];
    // aff-3: 20 fees in November, 3 of them refunded: 3 ÷ 20 = 0.15, not above 0.2.
    const w = Array.from({ length: 20 }, (_u, i) => `w${String(i + 1).padStart(2, '0')}`);
    await h.load('customers', w.map((c) => cust(c, 'aff-3')));
    await h.load('transactions', [...pair('r1', true), ...pair('r2', true), ...pair('r3', true), ...pair('v1', true), ...pair('v2', true), ...pair('v3', false), ...w.flatMap((c, i) => (i < 3 ? pair(c, true) : pair(c, true).slice(0, 1)))]);
    const flags = await h.flags('refund_after_fee');
    assert.deepEqual(flags.map((f) => [JSON.parse(f.instance_key), f.customers, f.evidence.refunds, f.evidence.fees, f.evidence.rate]), [[['aff-1', '2026-11'], ['r1', 'r2', 'r3'], 3, 3, '1.0000']]);
  });
});
