/**
 * What a repairing recompute may take of a partner's pending commission scope: exactly the
 * entries it read before its rebuild, under the loads' own lock, so no scope a load or a failed
 * evaluation writes meanwhile, and none it did not evaluate, is dropped unseen.
 */
import type { Knex } from 'knex';
import { loadLockKey } from '../pipeline/load-transaction.js';
import type { Store } from '../store/store.js';
import { dialectOf } from '../store/dialect/index.js';

export interface PendingEntry {
  kind: string;
  value: string;
}

/** The partner's load lock (see LoadTransaction.lockPartner); SQLite has one writer already. */
export async function lockPartnerLoads(store: Store, trx: Knex.Transaction, partner: string): Promise<void> {
  await store.dialect.transactionLock(trx, loadLockKey(partner));
}

export async function readPending(trx: Knex.Transaction, partner: string): Promise<PendingEntry[]> {
  return trx('commission_pending').where('partner_id', partner).select('kind', 'value');
}

/** Deletes these entries and no other. */
export async function dropPending(trx: Knex.Transaction, partner: string, entries: readonly PendingEntry[]): Promise<void> {
  const byKind = new Map<string, string[]>();
  for (const e of entries) {
    const values = byKind.get(e.kind);
    if (values) values.push(e.value);
    else byKind.set(e.kind, [e.value]);
  }
  for (const [kind, values] of byKind) {
    for (const part of dialectOf(trx).chunks(values, 500)) await trx('commission_pending').where({ partner_id: partner, kind }).whereIn('value', part).delete();
  }
}
