/**
 * The wagering windows the fraud rules read (windowsOf): only the days of the windows a rule can
 * judge are read from the activity table. Randomized: for customers of random transactions,
 * amounts, missing rates, coverage and rule settings, the facts, the pending days and the findings
 * of the per-customer rules with the wagering of those windows alone equal those with every day's
 * wagering known.
 */
import { strict as assert } from 'node:assert';
import type { Knex } from 'knex';
import { addDays } from '../../src/kernel/dates.js';
import { money, type Money } from '../../src/kernel/money.js';
import { defaultSettings, type RuleSettings } from '../../src/fraud/config.js';
import { deriveFacts, windowsOf, type CustomerData, type Tx } from '../../src/fraud/facts.js';
import { bonusBustOut, depositCycling } from '../../src/fraud/rules/customer.js';
import type { Ctx } from '../../src/fraud/rules/unit.js';
import { mulberry32 } from '../../src/kernel/prng.js';

const FIRST = '2026-10-01';
const DAYS = 45;

function randomSettings(rnd: () => number): RuleSettings {
  const s = defaultSettings();
  const pick = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  s.cpa_farming.within_days = pick(1, 8);
  s.bonus_bust_out.within_days = pick(1, 5);
  s.deposit_cycling.within_days = pick(0, 4);
  s.deposit_cycling.min_cycles = pick(1, 2);
  s.bonus_bust_out.wagering_multiple = 1 + rnd() * 3;
  s.deposit_cycling.wagering_multiple = rnd();
  return s;
}

function randomCustomer(rnd: () => number, settings: RuleSettings): Tx[] {
  const base = settings.cpa_farming.baseline_usd;
  const amounts = [base, base * (1 + settings.cpa_farming.margin), base - 0.01, base * 3, 5, 50, 120, 400];
  const types = ['deposit', 'deposit', 'deposit', 'bonus', 'withdrawal', 'withdrawal'];
  const statuses = ['approved', 'approved', 'approved', 'Approved', 'pending', 'reversed'];
  const txs: Tx[] = [];
  const n = Math.floor(rnd() * 12);
  for (let i = 0; i < n; i++) {
    const minute = Math.floor(rnd() * DAYS * 1440);
    const at = new Date(Date.parse(`${FIRST}T00:00:00Z`) + minute * 60_000).toISOString().replace(/\.\d{3}Z$/, '.000000Z');
    txs.push({
      transaction_id: `t${i}`, customer_id: 'c1', type: types[Math.floor(rnd() * types.length)]!, subtype: null,
      status: statuses[Math.floor(rnd() * statuses.length)]!, at, day: at.slice(0, 10),
      usd: rnd() < 0.1 ? undefined : money(amounts[Math.floor(rnd() * amounts.length)]!),
    });
  }
  // Withdrawals at the edges of the windows: around a bonus's days x 24 hours, and on the first and
  // last minute of the days around a deposit's last day.
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '.000000Z');
  for (const t of [...txs]) {
    if (rnd() < 0.5) continue;
    let ms: number;
    if (t.type === 'bonus') ms = Date.parse(t.at) + settings.bonus_bust_out.within_days * 86_400_000 + [-3_660_000, -60_000, 0, 60_000, 3_660_000][Math.floor(rnd() * 5)]!;
    else if (t.type === 'deposit') ms = Date.parse(`${addDays(t.day, settings.deposit_cycling.within_days + Math.floor(rnd() * 3) - 1)}T00:00:00Z`) + (rnd() < 0.5 ? 0 : 86_340_000);
    else continue;
    const at = iso(ms);
    txs.push({ transaction_id: `w${txs.length}`, customer_id: 'c1', type: 'withdrawal', subtype: null, status: 'approved', at, day: at.slice(0, 10), usd: money(amounts[Math.floor(rnd() * amounts.length)]!) });
  }
  return txs.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.transaction_id < b.transaction_id ? -1 : 1));
}

/** What the rules make of one customer: facts, pending days, findings (in detection's order). */
function judge(data: CustomerData, settings: RuleSettings): string {
  const ctx: Ctx = { db: undefined as unknown as Knex, partner: 'p', variant: 'igaming', settings };
  const facts = deriveFacts(data, 'igaming', settings);
  const findings = [...bonusBustOut(ctx, data), ...depositCycling(ctx, data)];
  return JSON.stringify({ facts, pending: data.pending ?? null, findings });
}

describe('fraud rules: the wagering windows read', () => {
  it('judge every customer as with every day of activity known (4,000 random customers)', () => {
    const rnd = mulberry32(Number(process.env.TEST_SEED ?? 20261128));
    let judged = 0;
    let narrowed = 0;
    for (let k = 0; k < 4000; k++) {
      const settings = randomSettings(rnd);
      const txs = randomCustomer(rnd, settings);
      // Every day's wagering: known, unknown (a row without total_bets) or no row; some days not loaded.
      const wagering = new Map<string, Money | undefined>();
      const covered = new Set<string>();
      for (let d = addDays(FIRST, -5); d <= addDays(FIRST, DAYS + 15); d = addDays(d, 1)) {
        if (rnd() < 0.9) covered.add(d);
        const r = rnd();
        if (r < 0.6) wagering.set(d, money(Math.floor(rnd() * 300)));
        else if (r < 0.65) wagering.set(d, undefined);
      }
      const row = { customer_id: 'c1', affiliate_id: 'a1', signup_date: `${FIRST}T00:00:00.000000Z`, last_modified_date: null, email: null, first_name: null, last_name: null, country_code: null, click_id: null, phase: null };
      const windows = windowsOf({ txs }, settings);
      const inWindows = (d: string) => windows.some(([from, to]) => d >= from && d <= to);
      const read = new Map([...wagering].filter(([d]) => inWindows(d)));
      const all = judge({ row, txs, wagering, covered }, settings);
      const some = judge({ row, txs, wagering: read, covered }, settings);
      assert.equal(some, all, `customer ${k}: ${JSON.stringify(txs.map((t) => [t.type, t.status, t.at, t.usd?.toFixed()]))}, windows ${JSON.stringify(windows)}`);
      if (all.includes('"rule"') || all.includes('"farmed":1') || all.includes('"farmed":0')) judged += 1;
      if (read.size < wagering.size) narrowed += 1;
    }
    // The draw reaches what it must: customers the rules judged, and windows narrower than every day.
    assert.ok(judged > 400, `only ${judged} customers judged`);
    assert.ok(narrowed > 3000, `only ${narrowed} customers with narrowed windows`);
  });

  it('reads no window for a customer without a withdrawal and with a first deposit off the baseline band', () => {
    const settings = defaultSettings();
    const tx = (id: string, type: string, at: string, usd: number): Tx => ({ transaction_id: id, customer_id: 'c1', type, subtype: null, status: 'approved', at, day: at.slice(0, 10), usd: money(usd) });
    assert.deepEqual(windowsOf({ txs: [tx('d1', 'deposit', '2026-10-01T10:00:00.000000Z', 100), tx('b1', 'bonus', '2026-10-02T10:00:00.000000Z', 10)] }, settings), []);
    // At the baseline (20 USD): cpa_farming's 7 days from the first deposit.
    assert.deepEqual(windowsOf({ txs: [tx('d1', 'deposit', '2026-10-01T10:00:00.000000Z', 20)] }, settings), [['2026-10-01', '2026-10-07']]);
    // A withdrawal 3 days after a deposit (deposit_cycling's 3 days) and within 3 x 24 hours of a bonus.
    assert.deepEqual(windowsOf({ txs: [tx('d1', 'deposit', '2026-10-01T10:00:00.000000Z', 100), tx('b1', 'bonus', '2026-10-01T12:00:00.000000Z', 10), tx('w1', 'withdrawal', '2026-10-04T11:00:00.000000Z', 90)] }, settings),
      [['2026-10-01', '2026-10-04']]);
    // The same withdrawal a day later: neither rule judges a window.
    assert.deepEqual(windowsOf({ txs: [tx('d1', 'deposit', '2026-10-01T10:00:00.000000Z', 100), tx('b1', 'bonus', '2026-10-01T12:00:00.000000Z', 10), tx('w1', 'withdrawal', '2026-10-05T11:00:00.000000Z', 90)] }, settings), []);
  });
});
