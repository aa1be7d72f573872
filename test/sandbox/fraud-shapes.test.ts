/**
 * The labelled population of bench/fraud-quality.bench.ts (src/sandbox/fraud-shapes.ts): the same
 * for a seed, every rule planted at every size, and the clean players' money following their
 * balance (what a withdrawal takes out was deposited or won; a bonus leaves only once wagered 35
 * times), which is what makes them clean.
 */
import { strict as assert } from 'node:assert';
import { PLANTED_RULES, SIZES, fxRates, shapedPopulation } from '../../src/sandbox/fraud-shapes.js';
import { generationContext } from '../../src/sandbox/generate-common.js';
import { parseDay } from '../../src/sandbox/instant.js';

const ctx = (seed: number) => generationContext(seed, parseDay('2026-10-01')!, parseDay('2026-10-31')!);

describe('sandbox: the fraud-quality population', () => {
  it('is the same for a seed, another for another seed', () => {
    const a = JSON.stringify(shapedPopulation(ctx(3), { customers: 300, propCustomers: 20, repeats: 1 }).map((p) => p.generated));
    const b = JSON.stringify(shapedPopulation(ctx(3), { customers: 300, propCustomers: 20, repeats: 1 }).map((p) => p.generated));
    const c = JSON.stringify(shapedPopulation(ctx(4), { customers: 300, propCustomers: 20, repeats: 1 }).map((p) => p.generated));
    assert.equal(a, b);
    assert.notEqual(a, c);
  });

  it('plants every rule at every size, with customers of their own, beside the requested clean customers', () => {
    const pops = shapedPopulation(ctx(1), { customers: 500, propCustomers: 40, repeats: 2 });
    for (const p of pops) {
      const ids = new Set(p.generated.map((g) => String(g.customer.customer_id)));
      assert.equal(p.generated.length, ids.size, 'customer ids are unique');
      assert.equal(p.clean.size, p.variant === 'igaming' ? 500 : 40);
      for (const rule of PLANTED_RULES[p.variant]) {
        for (const size of SIZES) assert.equal(p.planted.filter((x) => x.rule === rule && x.size === size).length, 2, `${rule} ${size}`);
      }
      for (const planted of p.planted) for (const c of planted.customers) assert.ok(ids.has(c) && !p.clean.has(c), `${planted.instance}: ${c} is generated and not clean`);
    }
  });

  it('clean players withdraw only what they deposited and won: never bonus money before 35 times its wagering', () => {
    const c = ctx(7);
    const [igaming] = shapedPopulation(c, { customers: 3000, propCustomers: 0, repeats: 0 });
    const rate = new Map(fxRates(c).map((r) => [`${r.currency} ${r.date}`, Number(r.rate)]));
    const usd = (amount: unknown, currency: unknown, day: string) => Number(amount) * (currency === 'USD' ? 1 : rate.get(`${String(currency)} ${day}`)!);
    let withdrawals = 0;
    for (const g of igaming!.generated) {
      // Per day: net winnings; a withdrawal's excess over the net deposits before it must be won by its day.
      const won = new Map<string, number>();
      let wagered = 0;
      for (const a of g.activity) won.set(String(a.date), usd(Number(a.wins) - Number(a.total_bets), a.currency, String(a.date)));
      for (const a of g.activity) wagered += usd(a.total_bets, a.currency, String(a.date));
      let net = 0;
      const txs = [...g.transactions].sort((x, y) => String(x.transaction_date).localeCompare(String(y.transaction_date)));
      const bonus = txs.find((t) => t.transaction_type === 'bonus');
      for (const t of txs) {
        const day = String(t.transaction_date).slice(0, 10);
        const amount = usd(t.amount_currency, t.currency, day);
        if (t.transaction_type === 'deposit' && t.status === 'approved') net += amount;
        if (t.transaction_type !== 'withdrawal') continue;
        withdrawals += 1;
        const winnings = [...won].filter(([d]) => d <= day).reduce((s, [, v]) => s + v, 0);
        const bonusUsd = bonus && wagered >= 35 * usd(bonus.amount_currency, bonus.currency, day) ? usd(bonus.amount_currency, bonus.currency, day) : 0;
        // A cent of rounding per row, in the player's currency.
        assert.ok(amount <= net + Math.max(0, winnings) + bonusUsd + 0.05 * (g.activity.length + 2), `${String(g.customer.customer_id)}: ${amount.toFixed(2)} out, ${net.toFixed(2)} in, ${winnings.toFixed(2)} won`);
        net -= amount;
      }
    }
    assert.ok(withdrawals > 300, `clean players withdraw (${withdrawals})`);
  });
});
