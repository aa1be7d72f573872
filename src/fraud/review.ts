/**
 * Where fraud detection tells the commission side which customers to re-evaluate: called in the
 * same transaction whenever a flag is opened, gains or loses customers, or is decided. The
 * commission side decides what that does to the customers' ledger lines (held for review while a
 * flag is open, released on dismiss, voided with reversing lines on confirm).
 */
import type { Knex } from 'knex';
import { markForReview } from '../commission/review-holds.js';
import type { Store } from '../store/store.js';
import type { Variant } from '../types.js';

export async function reviewCustomers(trx: Knex.Transaction, store: Store, partner: string, variant: Variant, customerIds: readonly string[]): Promise<void> {
  if (customerIds.length === 0) return;
  await markForReview(trx, store, partner, variant, customerIds);
}
