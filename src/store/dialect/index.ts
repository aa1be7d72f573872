/** The adapter of each store backend, and the one a knex handle or transaction talks to. */
import type { Knex } from 'knex';
import type { StoreKind } from '../dialects.js';
import type { StoreDialect } from './adapter.js';
import { postgresDialect } from './postgres.js';
import { sqliteDialect } from './sqlite.js';

export type { Conflict, SqlType, StatementShape, StoreDialect } from './adapter.js';

export const STORE_DIALECTS: Record<StoreKind, StoreDialect> = { postgres: postgresDialect, sqlite: sqliteDialect };

/** The adapter of the store a knex handle (or transaction) talks to. */
export function dialectOf(db: Knex): StoreDialect {
  const client = (db as unknown as { client: { config: { client: unknown } } }).client.config.client;
  const dialect = Object.values(STORE_DIALECTS).find((d) => d.knexClient === client);
  if (!dialect) throw new Error(`store: no dialect for the knex client ${String(client)}`);
  return dialect;
}
