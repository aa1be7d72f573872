/**
 * phase_bonus: a fixed amount once per customer on first reaching a phase (docs/commissions.md,
 * Phase bonus). The store keeps only a customer's current phase, so the ledger remembers that
 * the phase was reached: a customer who falls back (funded → failed) and reaches it again is
 * not paid twice, and is never clawed back.
 */
import { monthOf } from '../../kernel/dates.js';
import type { CustomerFact } from '../facts.js';
import { keyTotal, type LineState, type Target } from '../target.js';
import { cents, ZERO } from '../../kernel/money.js';
import { coversAffiliate, coversDay, type PhaseBonusPlan } from '../plans.js';

export const phaseKey = (plan: PhaseBonusPlan, customer: string): string => `phase_bonus|${plan.id}|${plan.partner}|${customer}`;

export const PHASE_REASONS = { bonus: 'phase_bonus', correction: 'phase_correction' } as const;

/** Reached: the customer's phase is the plan's, or later in the funnel (a jump past it between two syncs still counts). */
export function reached(plan: PhaseBonusPlan, phase: string | null): boolean {
  if (phase === null) return false;
  if (phase === plan.phase) return true;
  const at = plan.funnel.indexOf(phase);
  const wanted = plan.funnel.indexOf(plan.phase);
  return at >= 0 && wanted >= 0 && at > wanted;
}

export function phaseTarget(plan: PhaseBonusPlan, customer: CustomerFact, lines: readonly LineState[] | undefined, currentMonth: string): Target {
  const key = phaseKey(plan, customer.customerId);
  const seenAt = customer.lastModified ?? customer.loadedAt;
  const base = { key, plan, affiliate: customer.affiliateId, customer: customer.customerId, missing: [] as string[], refId: customer.customerId, sources: [`customers:${customer.customerId}`] };
  if (!coversAffiliate(plan, customer.affiliateId)) {
    return { ...base, amount: ZERO, reason: PHASE_REASONS.correction, period: currentMonth, basis: { why: `affiliate ${customer.affiliateId} is not on plan ${plan.id}` } };
  }
  const paid = keyTotal(lines).greaterThan(0);
  const firstPaid = (lines ?? []).find((l) => l.reason === PHASE_REASONS.bonus && l.amount.greaterThan(0));
  if (paid || (reached(plan, customer.phase) && coversDay(plan, seenAt.slice(0, 10)))) {
    return {
      ...base,
      amount: cents(plan.amountUsd),
      reason: PHASE_REASONS.bonus,
      period: firstPaid?.period ?? monthOf(seenAt.slice(0, 10)),
      basis: { phase: plan.phase, customer_phase: customer.phase, seen_at: seenAt, amount_usd: plan.amountUsd.toFixed(), ...(paid ? { paid_before: true } : {}) },
    };
  }
  return { ...base, amount: ZERO, reason: PHASE_REASONS.correction, period: currentMonth, basis: { phase: plan.phase, customer_phase: customer.phase } };
}
