/**
 * challenge_cpa: a percentage of each approved challenge fee (and reset fee when the plan says
 * so), the rate chosen by the customer's account_size and challenge_type; refunds and reversals
 * take back what was earned on the fee, never more (docs/commissions.md, Challenge CPA).
 */
import { monthOf } from '../../kernel/dates.js';
import { byDateThenId, referencedIds, txUsd, type CustomerFact, type TxFact } from '../facts.js';
import type { RateBook } from '../../kernel/fx.js';
import type { Target } from '../target.js';
import { cents, exactText, ZERO, type Money } from '../../kernel/money.js';
import { coversAffiliate, coversDay, type ChallengeCpaPlan, type RateRule } from '../plans.js';

export const FEE_TYPES = ['challenge_fee', 'reset_fee'] as const;
export const REFUND_TYPES = ['refund'] as const;

export const challengeKey = (plan: ChallengeCpaPlan, feeId: string): string => `challenge_cpa|${plan.id}|${plan.partner}|${feeId}`;

export const CHALLENGE_REASONS = { fee: 'challenge_fee', refunded: 'challenge_fee_refunded', reversed: 'challenge_fee_reversed', correction: 'challenge_correction', deleted: 'challenge_fee_deleted' } as const;

/** The first rule the customer meets; undefined when none. */
export function rateFor(plan: ChallengeCpaPlan, customer: CustomerFact): RateRule | undefined {
  return plan.rates.find((r) =>
    (r.challengeTypes === null || (customer.challengeType !== null && r.challengeTypes.has(customer.challengeType))) &&
    (r.minAccountUsd === null || (customer.accountSize !== null && customer.accountSize.greaterThanOrEqualTo(r.minAccountUsd))) &&
    (r.belowAccountUsd === null || (customer.accountSize !== null && customer.accountSize.lessThan(r.belowAccountUsd))));
}

export interface Allocation {
  /** USD refunded per fee id, and the refunds behind it. */
  refunded: Map<string, { usd: Money; refunds: TxFact[] }>;
  missing: string[];
}

/**
 * Refunds to fees: a refund whose note names one of the customer's fees goes to that fee first;
 * otherwise to the latest approved fee dated at or before it (the latest of all when none is),
 * each fee absorbing at most its own amount, the rest going to the next earlier fee.
 */
export function allocateRefunds(fees: readonly TxFact[], refunds: readonly TxFact[], fx: RateBook): Allocation {
  const refunded = new Map<string, { usd: Money; refunds: TxFact[] }>();
  const missing = new Set<string>();
  const approved = fees.filter((f) => f.status === 'approved').sort(byDateThenId);
  const remaining = new Map<string, Money>();
  for (const f of approved) {
    const c = txUsd(f, fx);
    if ('missing' in c) missing.add(c.missing);
    else remaining.set(f.id, c.usd.abs());
  }
  for (const refund of [...refunds].filter((r) => r.status === 'approved').sort(byDateThenId)) {
    const c = txUsd(refund, fx);
    if ('missing' in c) {
      missing.add(c.missing);
      continue;
    }
    let left = c.usd.abs();
    const named = referencedIds(refund.note, approved.map((f) => f.id));
    const before = approved.filter((f) => f.date <= refund.date).reverse();
    const order = [...approved.filter((f) => named.includes(f.id)), ...(before.length > 0 ? before : [...approved].reverse())];
    for (const fee of order) {
      if (left.lessThanOrEqualTo(0)) break;
      const room = remaining.get(fee.id);
      if (room === undefined || room.lessThanOrEqualTo(0)) continue;
      const take = left.lessThan(room) ? left : room;
      remaining.set(fee.id, room.minus(take));
      left = left.minus(take);
      const entry = refunded.get(fee.id) ?? { usd: ZERO, refunds: [] };
      entry.usd = entry.usd.plus(take);
      entry.refunds.push(refund);
      refunded.set(fee.id, entry);
    }
  }
  return { refunded, missing: [...missing].sort() };
}

export interface ChallengeInput {
  plan: ChallengeCpaPlan;
  customer: CustomerFact;
  /** The customer's fees (both types, every status) and refunds. */
  fees: readonly TxFact[];
  refunds: readonly TxFact[];
  fx: RateBook;
  currentMonth: string;
}

export function challengeTargets(input: ChallengeInput): Target[] {
  const { plan, customer, fx } = input;
  const allocation = allocateRefunds(input.fees, input.refunds, fx);
  const covered = coversAffiliate(plan, customer.affiliateId);
  const rule = rateFor(plan, customer);
  const out: Target[] = [];
  for (const fee of input.fees) {
    if (fee.type === 'reset_fee' && !plan.includeResetFee) continue;
    const base = { key: challengeKey(plan, fee.id), plan, affiliate: customer.affiliateId, customer: customer.customerId, refId: fee.id, missing: [] as string[] };
    const zero = (reason: string, period: string, basis: Record<string, unknown>, sources: string[] = [`transactions:${fee.id}`]): Target =>
      ({ ...base, amount: ZERO, reason, period, sources, basis });
    if (!covered) { out.push(zero(CHALLENGE_REASONS.correction, input.currentMonth, { why: `affiliate ${customer.affiliateId} is not on plan ${plan.id}` })); continue; }
    if (!coversDay(plan, fee.day)) { out.push(zero(CHALLENGE_REASONS.correction, input.currentMonth, { why: `fee on ${fee.day}, outside the plan's dates` })); continue; }
    if (fee.status !== 'approved') {
      out.push(zero(CHALLENGE_REASONS.reversed, monthOf(fee.loadedAt.slice(0, 10)), { why: `fee status ${fee.status}`, learned_at: fee.loadedAt }));
      continue;
    }
    if (!rule) { out.push(zero(CHALLENGE_REASONS.correction, monthOf(fee.day), { why: 'no rate rule matches the customer', challenge_type: customer.challengeType, account_size: customer.accountSize?.toFixed() ?? null })); continue; }
    const c = txUsd(fee, fx);
    const refund = allocation.refunded.get(fee.id);
    const missing = [...new Set([...('missing' in c ? [c.missing] : []), ...allocation.missing])].sort();
    if (missing.length > 0) {
      out.push({ ...base, amount: null, missing, reason: CHALLENGE_REASONS.fee, period: monthOf(fee.day), sources: [`transactions:${fee.id}`], basis: { why: 'waiting for FX rates' } });
      continue;
    }
    const feeUsd = (c as { usd: Money }).usd.abs();
    const refundedUsd = refund?.usd ?? ZERO;
    const net = feeUsd.minus(refundedUsd);
    const exact = net.times(rule.rate);
    const lastRefund = refund?.refunds[refund.refunds.length - 1];
    out.push({
      ...base,
      amount: cents(exact),
      reason: refund ? CHALLENGE_REASONS.refunded : CHALLENGE_REASONS.fee,
      period: lastRefund ? monthOf(lastRefund.day) : monthOf(fee.day),
      sources: [`transactions:${fee.id}`, ...(refund?.refunds ?? []).map((r) => `transactions:${r.id}`)],
      basis: {
        fee_type: fee.type,
        fee_usd: exactText(feeUsd),
        fee_rate: fee.amountUsd === null && fee.currency !== 'USD' ? fx.rate(fee.currency, fee.day)?.toFixed() ?? null : null,
        refunded_usd: exactText(refundedUsd),
        net_usd: exactText(net),
        rate: rule.rate.toFixed(),
        challenge_type: customer.challengeType,
        account_size: customer.accountSize?.toFixed() ?? null,
        commission_exact_usd: exactText(exact),
      },
    });
  }
  return out;
}
