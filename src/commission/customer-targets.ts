/**
 * The targets of a customer's keys under the per-customer plans (CPA, challenge fees, phase
 * bonuses), and a key's targets completed with a zero for every other affiliate it paid: what an
 * evaluation (./engine.ts) and a recompute (./recompute.ts) both compute.
 */
import type { RateBook } from '../kernel/fx.js';
import { monthOf } from '../kernel/dates.js';
import { ZERO } from '../kernel/money.js';
import type { CachedDay } from './customer-days.js';
import type { CustomerFact, TxFact } from './facts.js';
import { totalsByAffiliate } from './ledger.js';
import type { Plan } from './plans.js';
import { challengeTargets, FEE_TYPES, REFUND_TYPES } from './rules/challenge-cpa.js';
import { cpaKey, cpaTarget } from './rules/cpa-ftd.js';
import { phaseKey, phaseTarget } from './rules/phase-bonus.js';
import type { LineState, Target } from './target.js';

/** Targets of per-customer and RevShare keys: what `evaluateIn` and `recompute` both compute. */
export interface TargetSource {
  plans: readonly Plan[];
  customers: ReadonlyMap<string, CustomerFact>;
  lines: ReadonlyMap<string, LineState[]>;
  now: string;
}

export function customerTargets(
  src: TargetSource,
  customer: CustomerFact,
  txs: readonly TxFact[],
  wagering: readonly CachedDay[],
  fx: RateBook,
): Target[] {
  const out: Target[] = [];
  const currentMonth = monthOf(src.now.slice(0, 10));
  for (const plan of src.plans) {
    if (plan.kind === 'cpa_ftd') {
      out.push(cpaTarget({
        plan, customer, fx, currentMonth,
        deposits: txs.filter((t) => t.type === 'deposit'),
        adjustments: txs.filter((t) => t.type === 'adjustment'),
        days: wagering,
        lines: src.lines.get(cpaKey(plan, customer.customerId)),
      }));
    } else if (plan.kind === 'challenge_cpa') {
      out.push(...challengeTargets({
        plan, customer, fx, currentMonth,
        fees: txs.filter((t) => (FEE_TYPES as readonly string[]).includes(t.type)),
        refunds: txs.filter((t) => (REFUND_TYPES as readonly string[]).includes(t.type)),
      }));
    } else if (plan.kind === 'phase_bonus') {
      out.push(phaseTarget(plan, customer, src.lines.get(phaseKey(plan, customer.customerId)), currentMonth));
    }
  }
  return out;
}

/** The transaction types the per-customer plans read. */
export function transactionTypes(plans: readonly Plan[]): string[] {
  const types = new Set<string>();
  for (const p of plans) {
    if (p.kind === 'cpa_ftd') ['deposit', 'adjustment'].forEach((t) => types.add(t));
    if (p.kind === 'challenge_cpa') [...FEE_TYPES, ...REFUND_TYPES].forEach((t) => types.add(t));
  }
  return [...types];
}

/** A key's targets plus a zero for every other affiliate still holding money under it (re-attribution). */
export function completeTargets(targets: readonly Target[], lines: readonly LineState[] | undefined, currentMonth: string): Target[] {
  const first = targets[0];
  if (!first) return [];
  const out = [...targets];
  const named = new Set(targets.map((t) => t.affiliate));
  for (const [affiliate, total] of totalsByAffiliate(lines)) {
    if (named.has(affiliate) || total.isZero()) continue;
    out.push({
      ...first, affiliate, amount: ZERO, missing: [], reason: 'reattributed', period: currentMonth,
      basis: { why: `the customer is now attributed to ${first.affiliate}`, moved_usd: total.toFixed(2) },
    });
  }
  return out;
}
