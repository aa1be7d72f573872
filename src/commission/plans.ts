/**
 * Commission plans as the engine uses them, resolved from config/commissions.yaml
 * (load-plans.ts): defaults applied, amounts and rates as exact decimals.
 */
import type { Variant } from '../types.js';
import type { Money } from '../kernel/money.js';

export const PLAN_KINDS = ['cpa_ftd', 'revshare', 'challenge_cpa', 'phase_bonus'] as const;
export type PlanKind = (typeof PLAN_KINDS)[number];

/** The variant whose data each kind reads (spec §1 and §6). */
export const PLAN_VARIANT: Record<PlanKind, Variant> = {
  cpa_ftd: 'igaming',
  revshare: 'igaming',
  challenge_cpa: 'prop-trading',
  phase_bonus: 'prop-trading',
};

interface PlanBase {
  id: string;
  partner: string;
  /** 'all' of the partner's affiliates, or these. */
  affiliates: 'all' | ReadonlySet<string>;
  /** UTC days, inclusive; `to` null when open-ended. */
  from: string;
  to: string | null;
}

export interface CpaFtdPlan extends PlanBase {
  kind: 'cpa_ftd';
  windowDays: number | null;
  minFirstDepositUsd: Money | null;
  cumulative: { minUsd: Money; days: number } | null;
  wagering: { minUsd: Money; days: number } | null;
  amountUsd: { default: Money; byCountry: ReadonlyMap<string, Money> };
  clawback: { days: number; reversalStatuses: readonly string[]; chargebackSubtypes: readonly string[] };
}

export interface Band {
  fromUsd: Money;
  rate: Money;
}

export interface RevsharePlan extends PlanBase {
  kind: 'revshare';
  revenue: 'ggr' | 'ngr';
  tiers: { mode: 'tiered' | 'ladder'; bands: readonly Band[] };
  carryover: boolean;
  closeAfterHours: number;
}

export interface RateRule {
  challengeTypes: ReadonlySet<string> | null;
  minAccountUsd: Money | null;
  belowAccountUsd: Money | null;
  rate: Money;
}

export interface ChallengeCpaPlan extends PlanBase {
  kind: 'challenge_cpa';
  includeResetFee: boolean;
  rates: readonly RateRule[];
}

export interface PhaseBonusPlan extends PlanBase {
  kind: 'phase_bonus';
  phase: string;
  funnel: readonly string[];
  amountUsd: Money;
}

export type Plan = CpaFtdPlan | RevsharePlan | ChallengeCpaPlan | PhaseBonusPlan;

export const CLAWBACK_DEFAULTS = { days: 90, reversalStatuses: ['reversed'], chargebackSubtypes: ['chargeback'] } as const;
export const DEFAULT_FUNNEL = ['phase_1', 'phase_2', 'funded'] as const;
export const DEFAULT_CLOSE_AFTER_HOURS = 6;

export function coversAffiliate(plan: Plan, affiliate: string): boolean {
  return plan.affiliates === 'all' || plan.affiliates.has(affiliate);
}

export function coversDay(plan: Plan, day: string): boolean {
  return day >= plan.from && (plan.to === null || day <= plan.to);
}
