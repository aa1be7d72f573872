/**
 * FX: the USD value of one unit of a currency per UTC day, imported from CSV files
 * (`partner-sync fx import FILE.csv`). An amount converts with the rate of its record's own day;
 * a missing rate is reported as missing, never guessed from a neighbouring day.
 */
import type { Knex } from 'knex';
import { money, type Money } from './money.js';

/** `EUR 2026-11-02`: the rate a held entry waits for. */
export type MissingRate = string;

export type Converted = { usd: Money; rate: Money | null } | { missing: MissingRate };

export const missingRate = (currency: string, day: string): MissingRate => `${currency} ${day}`;

/** USD's rate: one instance (decimals are immutable), not one a conversion. */
const ONE = money(1);

/** The rates a run needs, loaded once. */
export class RateBook {
  constructor(private readonly rates: ReadonlyMap<string, Money>) {}

  /** The rate of (currency, day); USD is 1. */
  rate(currency: string, day: string): Money | undefined {
    if (currency === 'USD') return ONE;
    return this.rates.get(`${currency} ${day}`);
  }

  convert(amount: Money, currency: string, day: string): Converted {
    const rate = this.rate(currency, day);
    if (rate === undefined) return { missing: missingRate(currency, day) };
    return { usd: amount.times(rate), rate: currency === 'USD' ? null : rate };
  }

  /** Loads the rates of these (currency, day) pairs. */
  static async load(knex: Knex, pairs: Iterable<readonly [string, string]>): Promise<RateBook> {
    const currencies = new Set<string>();
    const days = new Set<string>();
    for (const [currency, day] of pairs) {
      if (currency === 'USD') continue;
      currencies.add(currency);
      days.add(day);
    }
    // Every currency's rates of every day asked for, in one statement per 500 days: a few rates
    // more than asked (a currency's day asked only for another currency) beat a statement per
    // currency (a batch's evaluation asked 5-10 of them).
    const rates = new Map<string, Money>();
    const list = [...days];
    for (let i = 0; i < list.length && currencies.size > 0; i += 500) {
      const rows: { currency: string; date: string; rate: string }[] = await knex('fx_rates').whereIn('currency', [...currencies]).whereIn('date', list.slice(i, i + 500)).select('currency', 'date', 'rate');
      for (const r of rows) rates.set(`${r.currency} ${String(r.date).slice(0, 10)}`, money(r.rate));
    }
    return new RateBook(rates);
  }
}
