/**
 * The rules of one affiliate's month or days (docs/fraud.md): cpa_farming, ftd_spike,
 * chargeback_rate and refund_after_fee, read from the per-affiliate day sums of the facts.
 */
import { addDays, lastDayOf, monthOf, nextMonth } from '../../kernel/dates.js';
import { money } from '../../kernel/money.js';
import type { Finding } from '../flags.js';
import { affiliateDays, affiliateRows, finding, key, ratio, usd, type Ctx } from './unit.js';

/** cpa_farming for one affiliate-month of first deposits. */
export async function cpaFarming(ctx: Ctx, affiliate: string, month: string): Promise<Finding[]> {
  const s = ctx.settings.cpa_farming;
  const from = `${month}-01`;
  const to = lastDayOf(month);
  const days = await affiliateDays(ctx, 'fraud_customers', affiliate, from, to);
  // FTDs whose 7 days are not all loaded yet are not judged (farmed NULL): neither counted nor farmed.
  const all = days.reduce((n, d) => n + d.ftds, 0);
  const judged = days.reduce((n, d) => n + d.judged, 0);
  const farmedCount = days.reduce((n, d) => n + d.farmed, 0);
  if (judged < s.min_ftds || farmedCount === 0 || money(farmedCount).lessThan(money(judged).times(s.min_share))) return [];
  const farmed = (await affiliateRows(ctx, 'fraud_customers', affiliate, from, to, ['customer_id', 'ftd_date', 'ftd_usd'], (q) => q.where('farmed', 1)) as { customer_id: string; ftd_date: string; ftd_usd: string | null }[])
    .sort((x, y) => (x.customer_id < y.customer_id ? -1 : 1));
  const base = money(s.baseline_usd);
  return [finding(ctx, 'cpa_farming', key(affiliate, month), affiliate, farmed.length * 5 >= judged * 4 ? 'high' : 'medium', farmed.map((r) => r.customer_id), {
    affiliate_id: affiliate, month, ftds: judged, not_yet_judged: all - judged, farmed: farmed.length, share: ratio(farmed.length, judged), min_share: s.min_share,
    deposit_band_usd: [usd(base), usd(base.times(money(1).plus(s.margin)))], wagering_multiple: s.wagering_multiple, within_days: s.within_days,
    customers: farmed.map((r) => ({ customer_id: r.customer_id, ftd_date: r.ftd_date, ftd_usd: r.ftd_usd === null ? null : usd(money(r.ftd_usd)) })),
  })];
}

/** ftd_spike for the days [from, to] of one affiliate: each day against the mean of the history_days before it. */
export async function ftdSpike(ctx: Ctx, affiliate: string, from: string, to: string): Promise<{ evaluated: string[]; findings: Finding[] }> {
  const s = ctx.settings.ftd_spike;
  const byDay = new Map<string, number>();
  for (const d of await affiliateDays(ctx, 'fraud_customers', affiliate, addDays(from, -s.history_days), to)) byDay.set(d.date, d.ftds);
  const evaluated: string[] = [];
  const findings: Finding[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) {
    evaluated.push(key(affiliate, d));
    const today = byDay.get(d) ?? 0;
    if (today < s.min_ftds) continue;
    // The affiliate's own recent history: from its first day with FTDs within the history_days
    // before D up to the day before D. Without one, the day is not judged (a new affiliate's first
    // days are not a spike of anything).
    let history = 0;
    let days = 0;
    for (let h = 1; h <= s.history_days; h++) {
      const n = byDay.get(addDays(d, -h)) ?? 0;
      history += n;
      if (n > 0) days = h;
    }
    if (days < s.min_history_days) continue;
    const mean = money(history).dividedBy(days);
    if (!money(today).greaterThan(mean.times(s.multiple))) continue;
    const customers = (await affiliateRows(ctx, 'fraud_customers', affiliate, d, d, ['customer_id'], (q) => q)).map((r) => String(r.customer_id)).sort();
    findings.push(finding(ctx, 'ftd_spike', key(affiliate, d), affiliate, 'medium', customers, {
      affiliate_id: affiliate, date: d, ftds: today, history_days: days, history_ftds: history,
      daily_mean: mean.toDecimalPlaces(4).toFixed(4), multiple: s.multiple, customers,
    }));
  }
  return { evaluated, findings };
}

interface DayCounts { customer_id: string; date: string; deposits: number; reversals: number; refunds: number }

/**
 * The Wilson score interval's lower end for k successes in n trials at z: the rate that k of n
 * shows at least, with the confidence z stands for (1.645: 95% one-sided). 5 of 30 (0.1667) gives
 * 0.0834: a small affiliate's bad month is not yet evidence of a rate above 0.1.
 */
export function wilsonLower(k: number, n: number, z: number): number {
  if (n === 0) return 0;
  const p = k / n;
  const z2 = z * z;
  return (p + z2 / (2 * n) - z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
}

const byCustomerThenDate = (a: DayCounts, b: DayCounts): number => (a.customer_id < b.customer_id ? -1 : a.customer_id > b.customer_id ? 1 : a.date < b.date ? -1 : 1);

/**
 * chargeback_rate for one affiliate and the month its windows end in: the windows above max_rate
 * with confidence (their Wilson lower bound above it), the strongest as evidence, the customers
 * with reversals in any of them.
 */
export async function chargebackRate(ctx: Ctx, affiliate: string, month: string): Promise<Finding[]> {
  const s = ctx.settings.chargeback_rate;
  const first = `${month}-01`;
  const last = lastDayOf(month);
  // Windows ending on a day with a deposit or reversal of the affiliate: one ending on a quiet day
  // holds the same events, minus deposits that fell out at its start.
  const perDay = new Map<string, { deposits: number; reversals: number }>();
  for (const d of await affiliateDays(ctx, 'fraud_customer_days', affiliate, addDays(first, -(s.window_days - 1)), last)) {
    if (d.deposits > 0 || d.reversals > 0) perDay.set(d.date, { deposits: d.deposits, reversals: d.reversals });
  }
  type Window = { from: string; to: string; deposits: number; reversals: number; lower: number };
  let worst: Window | undefined;
  const above: Window[] = [];
  const days = [...perDay.keys()].sort();
  const ends = days.filter((d) => d >= first && d <= last);
  for (const e of ends) {
    const from = addDays(e, -(s.window_days - 1));
    let deposits = 0;
    let reversals = 0;
    for (const d of days) if (d >= from && d <= e) { deposits += perDay.get(d)!.deposits; reversals += perDay.get(d)!.reversals; }
    if (deposits < s.min_deposits || !money(reversals).greaterThan(money(deposits).times(s.max_rate))) continue;
    const lower = wilsonLower(reversals, deposits, s.confidence_z);
    if (!(lower > s.max_rate)) continue;
    above.push({ from, to: e, deposits, reversals, lower });
    // The strongest evidence: the highest lower bound (a first reversed deposit alone, 1 of 1, is a
    // high rate on no sample), then the earliest window.
    if (!worst || lower > worst.lower) worst = { from, to: e, deposits, reversals, lower };
  }
  if (!worst) return [];
  const w = worst;
  // The customers of every window above the rate, not only the strongest one's.
  const inAbove = (d: string) => above.some((x) => d >= x.from && d <= x.to);
  const hit = (await affiliateRows(ctx, 'fraud_customer_days', affiliate, above[0]!.from, above[above.length - 1]!.to, ['customer_id', 'date', 'reversals'], (q) => q.where('reversals', '>', 0)))
    .map((r): DayCounts => ({ customer_id: String(r.customer_id), date: String(r.date), reversals: Number(r.reversals), deposits: 0, refunds: 0 }))
    .filter((r) => inAbove(r.date));
  const customers = [...new Set(hit.map((r) => r.customer_id))].sort();
  return [finding(ctx, 'chargeback_rate', key(affiliate, month), affiliate, 'high', customers, {
    affiliate_id: affiliate, month, window_from: w.from, window_to: w.to, deposits: w.deposits, reversals: w.reversals,
    rate: ratio(w.reversals, w.deposits), rate_lower_bound: w.lower.toFixed(4), confidence_z: s.confidence_z, max_rate: s.max_rate,
    reversals_by_customer: hit.sort(byCustomerThenDate).map((r) => ({ customer_id: r.customer_id, date: r.date, reversals: r.reversals })),
  })];
}

/**
 * refund_after_fee: refunds after a challenge fee among one affiliate's customers in one calendar
 * month, at least min_refunds of them and above max_rate × the challenge fees its customers paid
 * that month (fraud_customer_days.deposits counts a prop-trading customer's approved fees).
 */
export async function refundAfterFee(ctx: Ctx, affiliate: string, month: string): Promise<Finding[]> {
  const s = ctx.settings.refund_after_fee;
  const from = `${month}-01`;
  const to = lastDayOf(month);
  const days = await affiliateDays(ctx, 'fraud_customer_days', affiliate, from, to);
  const fees = days.reduce((n, d) => n + d.deposits, 0);
  const refunds = days.reduce((n, d) => n + d.refunds, 0);
  if (refunds < s.min_refunds || !money(refunds).greaterThan(money(fees).times(s.max_rate))) return [];
  const rows = (await affiliateRows(ctx, 'fraud_customer_days', affiliate, from, to, ['customer_id', 'date', 'refunds'], (q) => q.where('refunds', '>', 0)))
    .map((r): DayCounts => ({ customer_id: String(r.customer_id), date: String(r.date), refunds: Number(r.refunds), deposits: 0, reversals: 0 }))
    .sort(byCustomerThenDate);
  return [finding(ctx, 'refund_after_fee', key(affiliate, month), affiliate, 'medium', [...new Set(rows.map((r) => r.customer_id))].sort(), {
    affiliate_id: affiliate, month, refunds, fees, rate: fees === 0 ? null : ratio(refunds, fees), min_refunds: s.min_refunds, max_rate: s.max_rate,
    refunds_by_customer: rows.map((r) => ({ customer_id: r.customer_id, date: r.date, refunds: r.refunds })),
  })];
}

export const monthsOfWindow = (d: string, windowDays: number): string[] => {
  // Month by month, not day by day: this runs for every deposit day of every scope.
  const last = monthOf(addDays(d, windowDays - 1));
  const months: string[] = [];
  for (let m = monthOf(d); m <= last; m = nextMonth(m)) months.push(m);
  return months;
};
