/**
 * PostgreSQL transaction advisory locks, scoped to the store. Advisory lock keys are shared by the
 * whole database, so a key names the store's schema too: two stores in schemas of one database
 * (a staging and a production store, or tests side by side) never wait on each other's partners.
 * The stream locks of the worker (src/store/stream-locks.ts) are scoped the same way.
 */
import type { Knex } from 'knex';

/** Holds `key` in this store until the transaction ends. */
export async function transactionLock(trx: Knex.Transaction, key: string): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock(hashtextextended(coalesce(current_schema(), '') || ':' || ?, 0))", [key]);
}
