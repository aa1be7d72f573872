/**
 * cpa_ftd: a fixed CPA per customer on the first-time deposit (FTD), once per customer ever,
 * clawed back when the paid deposit is undone (docs/commissions.md, CPA on first deposits).
 *
 * The target is a function of the store and of one memory, the ledger: once a CPA has been paid
 * on a deposit, that deposit stays the customer's FTD under the plan (one CPA per customer, ever).
 */
import { addDays, addDaysToTimestamp, monthOf } from '../../kernel/dates.js';
import type { CachedDay } from '../customer-days.js';
import { referencedIds, txUsd, type CustomerFact, type TxFact } from '../facts.js';
import type { RateBook } from '../../kernel/fx.js';
import type { LineState, Target } from '../target.js';
import { cents, exactText, sum, ZERO, type Money } from '../../kernel/money.js';
import { coversAffiliate, coversDay, type CpaFtdPlan } from '../plans.js';

export const cpaKey = (plan: CpaFtdPlan, customer: string): string => `cpa_ftd|${plan.id}|${plan.partner}|${customer}`;

export const CPA_REASONS = {
  paid: 'cpa_ftd',
  clawbackReversed: 'cpa_clawback_reversed',
  clawbackChargeback: 'cpa_clawback_chargeback',
  /** The paid deposit (or its customer) was deleted at the source (src/commission/deletes.ts). */
  clawbackDeleted: 'cpa_clawback_deleted',
  correction: 'cpa_correction',
} as const;

export interface CpaInput {
  plan: CpaFtdPlan;
  customer: CustomerFact;
  /** The customer's deposits (every status) and adjustments, in (date, id) order. */
  deposits: readonly TxFact[];
  adjustments: readonly TxFact[];
  /** Customer-days within the wagering window (only when the plan has a wagering term). */
  days: readonly CachedDay[];
  fx: RateBook;
  lines: readonly LineState[] | undefined;
  /** The month a line with no date of its own belongs to (now). */
  currentMonth: string;
}

type Qualification =
  | { kind: 'qualified'; amount: Money; day: string; basis: Record<string, unknown>; sources: string[] }
  | { kind: 'not_qualified'; why: string; basis: Record<string, unknown> }
  | { kind: 'held'; missing: string[]; basis: Record<string, unknown> };

/** The day a running total of (day, amount) pairs reaches `min`, if it does. */
function reachedOn(items: readonly { day: string; usd: Money }[], min: Money): string | undefined {
  let running = ZERO;
  for (const item of items) {
    running = running.plus(item.usd);
    if (running.greaterThanOrEqualTo(min)) return item.day;
  }
  return undefined;
}

function qualify(input: CpaInput, ftd: TxFact): Qualification {
  const { plan, customer, fx } = input;
  const basis: Record<string, unknown> = { ftd: ftd.id, ftd_date: ftd.date, signup_date: customer.signupDate };
  const sources = [`transactions:${ftd.id}`];
  if (plan.windowDays !== null) {
    const end = addDays(customer.signupDay, plan.windowDays);
    basis.window = `FTD before ${end}`;
    if (ftd.day >= end) return { kind: 'not_qualified', why: `FTD on ${ftd.day}, after the ${plan.windowDays}-day window from signup ${customer.signupDay}`, basis };
  }
  const missing = new Set<string>();
  const usdOf = (tx: TxFact): Money => {
    const c = txUsd(tx, fx);
    if ('missing' in c) {
      missing.add(c.missing);
      return ZERO;
    }
    return c.usd;
  };
  const ftdUsd = usdOf(ftd);
  basis.ftd_usd = exactText(ftdUsd);
  if (ftd.amountUsd === null && ftd.currency !== 'USD') basis.ftd_rate = fx.rate(ftd.currency, ftd.day)?.toFixed() ?? null;

  let cumulative: { usd: Money; day: string | undefined; ids: string[] } | undefined;
  if (plan.cumulative) {
    const end = addDays(customer.signupDay, plan.cumulative.days);
    const counted = input.deposits.filter((d) => d.day < end && (d.status === 'approved' || d.id === ftd.id));
    const items = counted.map((d) => ({ day: d.day, usd: usdOf(d) }));
    cumulative = { usd: sum(items.map((i) => i.usd)), day: reachedOn(items, plan.cumulative.minUsd), ids: counted.map((d) => d.id) };
    basis.cumulative_usd = exactText(cumulative.usd);
    basis.cumulative_deposits = cumulative.ids;
    basis.cumulative_window = `before ${end}`;
  }
  let wagering: { usd: Money; day: string | undefined } | undefined;
  if (plan.wagering) {
    const end = addDays(customer.signupDay, plan.wagering.days);
    const days = input.days.filter((d) => d.date >= customer.signupDay && d.date < end);
    for (const d of days) for (const m of d.missing) missing.add(m);
    const items = days.filter((d) => d.bets !== null).map((d) => ({ day: d.date, usd: d.bets as Money }));
    wagering = { usd: sum(items.map((i) => i.usd)), day: reachedOn(items, plan.wagering.minUsd) };
    basis.wagering_usd = exactText(wagering.usd);
    basis.wagering_window = `${customer.signupDay} to before ${end}`;
  }
  if (missing.size > 0) return { kind: 'held', missing: [...missing].sort(), basis };

  if (plan.minFirstDepositUsd !== null && ftdUsd.lessThan(plan.minFirstDepositUsd)) {
    return { kind: 'not_qualified', why: `FTD ${exactText(ftdUsd)} USD is below the baseline ${plan.minFirstDepositUsd.toFixed()} USD`, basis };
  }
  if (plan.cumulative && cumulative && cumulative.day === undefined) {
    return { kind: 'not_qualified', why: `approved deposits ${exactText(cumulative.usd)} USD within ${plan.cumulative.days} days of signup are below ${plan.cumulative.minUsd.toFixed()} USD`, basis };
  }
  if (plan.wagering && wagering && wagering.day === undefined) {
    return { kind: 'not_qualified', why: `wagering ${exactText(wagering.usd)} USD within ${plan.wagering.days} days of signup is below ${plan.wagering.minUsd.toFixed()} USD`, basis };
  }
  let day = ftd.day;
  if (cumulative?.day !== undefined && cumulative.day > day) day = cumulative.day;
  if (wagering?.day !== undefined && wagering.day > day) day = wagering.day;
  if (cumulative) sources.push(...cumulative.ids.filter((id) => id !== ftd.id).map((id) => `transactions:${id}`));
  if (wagering && plan.wagering) {
    const end = addDays(customer.signupDay, plan.wagering.days);
    sources.push(...input.days.filter((d) => d.date >= customer.signupDay && d.date < end).map((d) => `activity:${d.customerId}@${d.date}`));
  }
  const country = customer.countryCode ?? '';
  const amount = plan.amountUsd.byCountry.get(country) ?? plan.amountUsd.default;
  basis.country = customer.countryCode;
  basis.amount_usd = amount.toFixed();
  basis.qualified_on = day;
  return { kind: 'qualified', amount: cents(amount), day, basis, sources };
}

export function cpaTarget(input: CpaInput): Target {
  const { plan, customer, lines } = input;
  const base = { key: cpaKey(plan, customer.customerId), plan, affiliate: customer.affiliateId, customer: customer.customerId, missing: [] as string[] };
  const zero = (reason: string, basis: Record<string, unknown>, extra: Partial<Target> = {}): Target =>
    ({ ...base, amount: ZERO, reason, period: input.currentMonth, refId: null, sources: [`customers:${customer.customerId}`], basis, ...extra });

  if (!coversAffiliate(plan, customer.affiliateId)) return zero(CPA_REASONS.correction, { why: `affiliate ${customer.affiliateId} is not on plan ${plan.id}` });

  // The ledger's memory: the first CPA paid under this plan pins its deposit as the FTD.
  const paid = (lines ?? []).find((l) => l.reason === CPA_REASONS.paid && l.amount.greaterThan(0));
  const reversal = new Set(plan.clawback.reversalStatuses);
  // The FTD: the earliest deposit that is approved or was approved and undone (reversal statuses),
  // or the deposit a CPA was paid on whatever its status now; an earlier one arriving late takes over.
  const ftd = input.deposits.find((d) => d.status === 'approved' || reversal.has(d.status) || d.id === paid?.refId);
  if (!ftd) return zero(CPA_REASONS.correction, { why: 'no approved first deposit yet' });
  if (!coversDay(plan, ftd.day)) return zero(CPA_REASONS.correction, { why: `FTD on ${ftd.day}, outside the plan's dates`, ftd: ftd.id });

  // Undone: the FTD is no longer approved, or an approved chargeback adjustment names it (or names no deposit).
  const depositIds = input.deposits.map((d) => d.id);
  const chargebacks = input.adjustments.filter((a) => a.status === 'approved' && a.subtype !== null &&
    plan.clawback.chargebackSubtypes.includes(a.subtype) && a.date >= ftd.date &&
    (() => { const refs = referencedIds(a.note, depositIds); return refs.length === 0 || refs.includes(ftd.id); })());
  const evidence: { reason: string; learnedAt: string; day: string; source: string }[] = [];
  if (ftd.status !== 'approved') {
    evidence.push({ reason: CPA_REASONS.clawbackReversed, learnedAt: ftd.loadedAt, day: ftd.loadedAt.slice(0, 10), source: `transactions:${ftd.id}` });
  }
  for (const c of chargebacks) evidence.push({ reason: CPA_REASONS.clawbackChargeback, learnedAt: c.loadedAt, day: c.day, source: `transactions:${c.id}` });
  evidence.sort((a, b) => (a.learnedAt < b.learnedAt ? -1 : a.learnedAt > b.learnedAt ? 1 : 0));

  const q = qualify(input, ftd);
  const first = evidence[0];
  if (first) {
    const basis = { ...q.basis, ftd_status: ftd.status, chargebacks: chargebacks.map((c) => c.id), learned_at: first.learnedAt };
    const undone = (): Target => ({
      ...base, amount: ZERO, reason: first.reason, period: monthOf(first.day), refId: ftd.id,
      sources: [`transactions:${ftd.id}`, ...evidence.map((e) => e.source).filter((s) => s !== `transactions:${ftd.id}`)], basis,
    });
    if (!paid) return undone(); // never paid on an undone deposit
    // A clawback already booked stands while the deposit stays undone, whenever the row is rewritten.
    const last = [...(lines ?? [])].reverse().find((l) => !l.amount.isZero());
    const clawedBack = last !== undefined && (last.reason === CPA_REASONS.clawbackReversed || last.reason === CPA_REASONS.clawbackChargeback);
    const windowEnd = addDaysToTimestamp(paid.createdAt, plan.clawback.days);
    if (clawedBack || first.learnedAt <= windowEnd) return undone();
    // Learned after the clawback window: the CPA stands.
    q.basis.kept = `${first.reason === CPA_REASONS.clawbackReversed ? `status ${ftd.status}` : 'chargeback'} learned ${first.learnedAt}, after the clawback window ending ${windowEnd}`;
  }

  switch (q.kind) {
    case 'held':
      // Held under the FTD's month: the earliest the qualification day can be, and where it is listed and looked for.
      return { ...base, amount: null, missing: q.missing, reason: CPA_REASONS.paid, period: monthOf(ftd.day), refId: ftd.id, sources: [`transactions:${ftd.id}`], basis: q.basis };
    case 'not_qualified':
      return zero(CPA_REASONS.correction, { ...q.basis, why: q.why }, { refId: ftd.id, sources: [`transactions:${ftd.id}`] });
    case 'qualified':
      return { ...base, amount: q.amount, reason: CPA_REASONS.paid, period: monthOf(q.day), refId: ftd.id, sources: q.sources, basis: q.basis };
  }
}
