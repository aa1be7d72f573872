/**
 * What a delete learned at the source does to the commissions (docs/loading.md, Deletes). The
 * deleted rows are gone from the live tables, so every target the engine computes from them is
 * already right: a deleted FTD leaves its CPA key no deposit to pay on, a deleted fee's key no fee,
 * a deleted customer-day leaves its RevShare month. What is left to this module: the scope a
 * delete's change set adds (the customers, customer-days and former fees the removed rows counted
 * in), the keys of a deleted customer that nothing produces any more (booked to zero, as recompute
 * computes them), and the line that takes money back naming the tombstone it follows.
 */
import { utcDay } from '../kernel/dates.js';
import { fromStoreTimestamp, fromStoreDate } from '../store/values.js';
import type { ChangeSet } from '../pipeline/jobs.js';
import { ZERO } from '../kernel/money.js';
import { totalsByAffiliate } from './ledger.js';
import type { Plan } from './plans.js';
import { CHALLENGE_REASONS, FEE_TYPES } from './rules/challenge-cpa.js';
import { CPA_REASONS, cpaKey } from './rules/cpa-ftd.js';
import { phaseKey } from './rules/phase-bonus.js';
import { addDay, type Scope } from './scope.js';
import type { LineState, Target } from './target.js';

/** A tombstone as a ledger line's source. */
export const tombstoneSource = (id: number | string): string => `tombstones:${id}`;

/** Adds to the scope what the change set's deleted rows counted in. */
export function addRemoved(scope: Scope, change: ChangeSet): void {
  if (!change.deleted) return;
  const { removed } = change;
  const { tombstones } = change.deleted;
  // The tombstones follow the removed rows entity by entity, in the rows' order.
  let i = 0;
  const next = (): number => tombstones[i++]?.id as number;
  for (const c of removed.customers) {
    const id = String(c.customer_id);
    scope.customers.add(id);
    markDeleted(scope, id, next(), true);
  }
  for (const t of removed.transactions) {
    const id = String(t.customer_id);
    const tombstone = next();
    scope.customers.add(id);
    markDeleted(scope, id, tombstone, false);
    const type = String(t.transaction_type);
    if ((FEE_TYPES as readonly string[]).includes(type)) scope.formerFees.set(String(t.transaction_id), id);
    // A bonus moves NGR of its customer-day.
    if (type === 'bonus') addDay(scope, id, utcDay(fromStoreTimestamp(t.transaction_date) as string));
  }
  for (const a of removed.activity) {
    const id = String(a.customer_id);
    markDeleted(scope, id, next(), false);
    addDay(scope, id, fromStoreDate(a.date) as string);
  }
}

function markDeleted(scope: Scope, customer: string, tombstone: number, isCustomer: boolean): void {
  let d = scope.deleted.get(customer);
  if (!d) scope.deleted.set(customer, (d = { customer: null, rows: new Set() }));
  if (isCustomer) d.customer = tombstone;
  else d.rows.add(tombstone);
}

/** The tombstones of a customer as sources, its own first. */
function sourcesOf(d: { customer: number | null; rows: ReadonlySet<number> }): string[] {
  return [...(d.customer !== null ? [d.customer] : []), ...[...d.rows].sort((a, b) => a - b)].map(tombstoneSource);
}

const DELETED_REASON: Partial<Record<Plan['kind'], string>> = { cpa_ftd: CPA_REASONS.clawbackDeleted, challenge_cpa: CHALLENGE_REASONS.deleted };

/**
 * The targets of customers with a delete in the scope that take money back: their line names the
 * tombstones (the customer's first) before the records it named, and a CPA's says it follows a delete.
 */
export function nameTombstones(targets: readonly Target[], scope: Scope, lines: ReadonlyMap<string, LineState[]>): Target[] {
  if (scope.deleted.size === 0) return [...targets];
  return targets.map((t) => {
    const d = t.customer === null ? undefined : scope.deleted.get(t.customer);
    if (!d || t.amount === null) return t;
    const total = totalsByAffiliate(lines.get(t.key)).get(t.affiliate) ?? ZERO;
    if (!t.amount.lessThan(total)) return t;
    const reason = DELETED_REASON[t.plan.kind] ?? t.reason;
    return { ...t, reason, sources: [...sourcesOf(d), ...t.sources.filter((s) => !s.startsWith('tombstones:'))], basis: { ...t.basis, deleted_at_source: sourcesOf(d) } };
  });
}

/** The per-customer keys of the scope's deleted customers (their CPA and phase bonus keys), for the ledger lines to read. */
export function deletedCustomerKeys(plans: readonly Plan[], scope: Scope): Map<string, { plan: Plan; customer: string }> {
  const out = new Map<string, { plan: Plan; customer: string }>();
  for (const [customer, d] of scope.deleted) {
    if (d.customer === null) continue;
    for (const plan of plans) {
      if (plan.kind === 'cpa_ftd') out.set(cpaKey(plan, customer), { plan, customer });
      if (plan.kind === 'phase_bonus') out.set(phaseKey(plan, customer), { plan, customer });
    }
  }
  return out;
}

/**
 * A deleted customer's keys that no pass produced (the customer is not in the store to be
 * evaluated) go back to zero for every affiliate they paid, as recompute computes them.
 */
export function deletedCustomerTargets(keys: ReadonlyMap<string, { plan: Plan; customer: string }>, produced: ReadonlySet<string>, scope: Scope, lines: ReadonlyMap<string, LineState[]>, currentMonth: string): Target[] {
  const out: Target[] = [];
  for (const [key, { plan, customer }] of keys) {
    if (produced.has(key)) continue;
    const d = scope.deleted.get(customer);
    for (const [affiliate, total] of totalsByAffiliate(lines.get(key))) {
      if (total.isZero()) continue;
      out.push({
        key, plan, affiliate, customer, amount: ZERO, missing: [], reason: DELETED_REASON[plan.kind] ?? 'correction', period: currentMonth, refId: null,
        sources: d ? sourcesOf(d) : [`customers:${customer}`], basis: { why: 'the customer was deleted at the source' },
      });
    }
  }
  return out;
}
