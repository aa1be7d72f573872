/**
 * Review holds: commission of a customer under a fraud flag (docs/commissions.md, Review holds).
 * The fraud side calls `markForReview` in the same transaction that opens a flag, adds customers
 * to it or records a decision. It writes those customers into the commission job's pending
 * scope, so the evaluation after the commit (or, after a crash, the partner's next evaluation)
 * re-evaluates their keys and the RevShare months their activity counts in, with the flags as
 * they stand then.
 */
import type { Knex } from 'knex';
import type { Store } from '../store/store.js';
import type { Variant } from '../types.js';
import { emptyScope, writePending } from './engine.js';

/**
 * Adds these customers of the partner to the commission job's pending scope, in the caller's
 * transaction: their per-customer keys (CPA, challenge fees, phase bonuses) and the RevShare
 * months of their activity are evaluated again after the commit.
 */
export async function markForReview(trx: Knex.Transaction, store: Store, partner: string, variant: Variant, customerIds: Iterable<string>): Promise<void> {
  const scope = emptyScope(partner, variant, '');
  for (const id of customerIds) {
    scope.customers.add(id);
    scope.reviewed.add(id);
  }
  if (scope.customers.size === 0) return;
  await writePending(trx, scope, store.now());
}
