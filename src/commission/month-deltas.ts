/**
 * The changes an evaluation makes to affiliate months (commission_affiliate_months): sums of GGR,
 * NGR and customer-days per affiliate and month, with the customer-days behind each as a RevShare
 * line's sources (the first `listed`, the rest counted).
 */
import { monthOf } from '../kernel/dates.js';
import { ZERO, type Money } from '../kernel/money.js';

/** What a customer-day adds to its month (the cached days of ./customer-days.ts are such days). */
export interface MonthDay {
  affiliateId: string;
  date: string;
  missing: readonly string[];
  ggr: Money | null;
  ngr: Money | null;
}

/** Deltas of affiliate months, and the customer-days behind each. */
export interface MonthDelta {
  ggr: Money;
  ngr: Money;
  days: number;
  missingDays: number;
  sources: string[];
  /** Sources past MonthDeltas' `listed`, counted, not kept. */
  unlisted: number;
}

export const monthKey = (affiliate: string, month: string): string => `${affiliate}\u0000${month}`;
export const splitMonthKey = (key: string): [string, string] => key.split('\u0000') as [string, string];

export class MonthDeltas {
  readonly map = new Map<string, MonthDelta>();
  /** Each month's sources as a set: a bulk group adds thousands of days to one month (a list search per day was quadratic). */
  private readonly seen = new Map<string, Set<string>>();

  /**
   * `listed`: the sources kept per month by `touchAll`; the rest are counted. An evaluation's
   * months gather every pass's sources, and a bulk group moves a month by hundreds of thousands of
   * customer-days: a line lists the first of them and how many more (sourcesOf).
   */
  constructor(private readonly listed = Number.POSITIVE_INFINITY) {}

  private at(affiliate: string, month: string): MonthDelta {
    const key = monthKey(affiliate, month);
    let d = this.map.get(key);
    if (!d) this.map.set(key, (d = { ggr: ZERO, ngr: ZERO, days: 0, missingDays: 0, sources: [], unlisted: 0 }));
    return d;
  }

  add(day: MonthDay, sign: 1 | -1, source?: string): void {
    const d = this.at(day.affiliateId, monthOf(day.date));
    d.days += sign;
    if (day.missing.length > 0) d.missingDays += sign;
    else if (sign === 1) {
      d.ggr = d.ggr.plus(day.ggr as Money);
      d.ngr = d.ngr.plus(day.ngr as Money);
    } else {
      d.ggr = d.ggr.minus(day.ggr as Money);
      d.ngr = d.ngr.minus(day.ngr as Money);
    }
    if (source) this.addSource(day.affiliateId, monthOf(day.date), d, source);
  }

  /** A month's change summed elsewhere (set-based: ./customer-days-sql.ts), with its first sources; `unlisted` more are counted. */
  addMonth(affiliate: string, month: string, change: { ggr: Money; ngr: Money; days: number; missingDays: number }, sources: readonly string[], unlisted: number): void {
    const d = this.at(affiliate, month);
    d.ggr = d.ggr.plus(change.ggr);
    d.ngr = d.ngr.plus(change.ngr);
    d.days += change.days;
    d.missingDays += change.missingDays;
    for (const source of sources) this.addSource(affiliate, month, d, source);
    d.unlisted += unlisted;
  }

  /** The months `other` touched, with their sources, added without their sums (an evaluation's passes each apply their own). */
  touchAll(other: MonthDeltas): void {
    for (const [key, d] of other.map) {
      const [affiliate, month] = splitMonthKey(key);
      const into = this.at(affiliate, month);
      // Counted past `listed` without a set: a pass's sources are distinct, and a customer-day is in one
      // pass (one in two takes, or also on a replaced day, counts twice in `unlisted`).
      for (const source of d.sources) {
        if (into.sources.length < this.listed) this.addSource(affiliate, month, into, source);
        else into.unlisted += 1;
      }
      into.unlisted += d.unlisted;
    }
  }

  /** A month's sources as a line lists them: the first `listed`, then `more:N` for the N not listed. */
  sourcesOf(affiliate: string, month: string): string[] | undefined {
    const d = this.map.get(monthKey(affiliate, month));
    if (!d) return undefined;
    return d.unlisted > 0 ? [...d.sources, `more:${d.unlisted}`] : d.sources;
  }

  private addSource(affiliate: string, month: string, d: MonthDelta, source: string): void {
    const key = monthKey(affiliate, month);
    let set = this.seen.get(key);
    if (!set) this.seen.set(key, (set = new Set(d.sources)));
    if (set.has(source)) return;
    set.add(source);
    d.sources.push(source);
  }
}
