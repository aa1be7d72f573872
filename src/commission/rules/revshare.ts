/**
 * revshare: a share of an affiliate's GGR or NGR per calendar month (UTC), in USD, with tiered
 * or ladder bands and optional negative carryover (docs/commissions.md, RevShare).
 */
import type { AffiliateMonth } from '../customer-days.js';
import { firstDayOf, monthOf, nextMonth } from '../../kernel/dates.js';
import type { Target } from '../target.js';
import { cents, exactText, ZERO, type Money } from '../../kernel/money.js';
import { coversAffiliate, type RevsharePlan } from '../plans.js';

export const revshareKey = (plan: RevsharePlan, affiliate: string, month: string): string => `revshare|${plan.id}|${plan.partner}|${affiliate}|${month}`;

export const REVSHARE_REASONS = { open: 'revshare', late: 'revshare_late' } as const;

/**
 * A closed month's first booking is its earning, not a late correction: `revshare_late` is kept
 * for lines that change what a closed month had already booked.
 */
export function firstBookingReason(target: Target, lines: readonly { amount: Money }[] | undefined): Target {
  if (target.reason !== REVSHARE_REASONS.late || (lines ?? []).some((l) => !l.amount.isZero())) return target;
  return { ...target, reason: REVSHARE_REASONS.open };
}

/** The commission on a positive month revenue: the band reached (tiered) or each band's part (ladder). Exact, not rounded. */
export function tierCommission(plan: RevsharePlan, revenue: Money): { amount: Money; parts: Record<string, string>[] } {
  const bands = plan.tiers.bands;
  if (plan.tiers.mode === 'tiered') {
    let band = bands[0];
    for (const b of bands) if (revenue.greaterThanOrEqualTo(b.fromUsd)) band = b;
    if (!band) return { amount: ZERO, parts: [] };
    const amount = revenue.times(band.rate);
    return { amount, parts: [{ from_usd: band.fromUsd.toFixed(), rate: band.rate.toFixed(), on_usd: exactText(revenue), amount_usd: exactText(amount) }] };
  }
  let amount = ZERO;
  const parts: Record<string, string>[] = [];
  bands.forEach((band, i) => {
    const upper = bands[i + 1]?.fromUsd;
    const top = upper !== undefined && revenue.greaterThan(upper) ? upper : revenue;
    const portion = top.minus(band.fromUsd);
    if (portion.lessThanOrEqualTo(0)) return;
    const part = portion.times(band.rate);
    amount = amount.plus(part);
    parts.push({ from_usd: band.fromUsd.toFixed(), rate: band.rate.toFixed(), on_usd: exactText(portion), amount_usd: exactText(part) });
  });
  return { amount, parts };
}

/** When a month closes: its month end plus the plan's close_after_hours (UTC). */
export function monthClosesAt(plan: RevsharePlan, month: string): string {
  const end = new Date(`${firstDayOf(nextMonth(month))}T00:00:00Z`).getTime() + plan.closeAfterHours * 3_600_000;
  return new Date(end).toISOString().replace('Z', '000Z');
}

export interface RevshareInput {
  plan: RevsharePlan;
  affiliate: string;
  /** Every month of the affiliate with customer-days, any order. */
  months: readonly AffiliateMonth[];
  /** The months whose targets are wanted. */
  evaluate: ReadonlySet<string>;
  /** Rates the held months wait for. */
  missing: ReadonlyMap<string, string[]>;
  /** The records that changed each month in this run. */
  sources: ReadonlyMap<string, string[]>;
  now: string;
}

/**
 * Targets of the wanted months. With carryover a month depends on every earlier month of the
 * plan, so the chain runs from the plan's first month; a month that is held (a rate missing)
 * holds every later month too, since its carry is unknown.
 */
export function revshareTargets(input: RevshareInput): Target[] {
  const { plan, affiliate } = input;
  const firstMonth = monthOf(plan.from);
  const lastMonth = plan.to === null ? '9999-12' : monthOf(plan.to);
  const rows = new Map(input.months.map((m) => [m.month, m]));
  const months = [...new Set([...rows.keys(), ...input.evaluate])].sort();
  const covered = coversAffiliate(plan, affiliate);
  const out: Target[] = [];
  let carry = ZERO;
  let heldBy: { month: string; missing: string[] } | undefined;

  for (const month of months) {
    const key = revshareKey(plan, affiliate, month);
    const row = rows.get(month);
    const closesAt = monthClosesAt(plan, month);
    const reason = input.now >= closesAt ? REVSHARE_REASONS.late : REVSHARE_REASONS.open;
    const sources = input.sources.get(month) ?? [];
    const target = (amount: Money | null, basis: Record<string, unknown>, missing: string[] = []): Target =>
      ({ key, plan, affiliate, customer: null, amount, missing, reason, period: month, refId: null, sources, basis });
    if (!covered || month < firstMonth || month > lastMonth) {
      if (input.evaluate.has(month)) out.push(target(ZERO, { why: covered ? `month outside plan ${plan.id}'s dates` : `affiliate ${affiliate} is not on plan ${plan.id}` }));
      continue;
    }
    const revenue = row ? (plan.revenue === 'ngr' ? row.ngr : row.ggr) : ZERO;
    if (row && row.missingDays > 0) {
      const own = input.missing.get(month) ?? [];
      heldBy = { month, missing: plan.carryover && heldBy ? [...new Set([...heldBy.missing, ...own])].sort() : own };
    }
    const heldHere = heldBy !== undefined && (heldBy.month === month || plan.carryover);
    if (heldHere && heldBy) {
      if (input.evaluate.has(month)) {
        out.push(target(null, { why: heldBy.month === month ? `${row?.missingDays ?? 0} customer-days wait for FX rates` : `the carry from ${heldBy.month} waits for FX rates` }, heldBy.missing));
      }
      if (heldBy.month === month && !plan.carryover) heldBy = undefined;
      continue;
    }
    const carryIn = plan.carryover ? carry : ZERO;
    const adjusted = revenue.plus(carryIn);
    let exact = ZERO;
    let parts: Record<string, string>[] = [];
    if (adjusted.greaterThan(0)) {
      ({ amount: exact, parts } = tierCommission(plan, adjusted));
      carry = ZERO;
    } else carry = plan.carryover ? adjusted : ZERO;
    if (input.evaluate.has(month)) {
      out.push(target(cents(exact), {
        revenue: plan.revenue,
        revenue_usd: exactText(revenue),
        carry_in_usd: exactText(carryIn),
        commissionable_usd: exactText(adjusted),
        carry_out_usd: exactText(carry),
        mode: plan.tiers.mode,
        bands: parts,
        commission_exact_usd: exactText(exact),
        customer_days: row?.days ?? 0,
        month_closes_at: closesAt,
      }));
    }
  }
  return out;
}
