/**
 * What differs between store backends, as data: column types, how bulk upserts are written,
 * connection set-up, and the size limits of one statement. Code elsewhere asks the profile
 * instead of testing the client name; every multi-row statement takes its rows per statement
 * from `rowsPerStatement`, so a batch, scope or plan of any size stays inside the limits.
 */
import type { Knex } from 'knex';
import { arrayLiteral } from './json-insert.js';

export type StoreKind = 'sqlite' | 'postgres';

/** How rows reach a table in bulk: prepared per-row upserts (in-process SQLite), or COPY into a staging table then one upsert per chunk. */
export type BulkWriteStrategy = 'prepared-rows' | 'copy-staging';

export interface DialectProfile {
  kind: StoreKind;
  knexClient: 'better-sqlite3' | 'pg';
  /** Column types by logical kind. Money is exact: NUMERIC in PostgreSQL, decimal text in SQLite. */
  types: {
    decimal: string;
    timestamp: string;
    date: string;
    json: string;
  };
  bulkWrite: BulkWriteStrategy;
  /** Most bind variables one statement may carry (SQLite's default limit is 32766; pg's 65535). */
  maxBindVariables: number;
  /**
   * Most rows of one multi-row insert built by knex, or null for no limit but the variables.
   * Knex writes SQLite's as one compound SELECT (`select ... union all select ...`), and SQLite
   * allows 500 terms; a VALUES list or an IN list is not a compound SELECT.
   */
  maxInsertRows: number | null;
  /** Cross-process mutual exclusion for one (partner, stream): advisory locks or a file lock. */
  locking: 'advisory' | 'single-process';
}

export const DIALECTS: Record<StoreKind, DialectProfile> = {
  sqlite: {
    kind: 'sqlite',
    knexClient: 'better-sqlite3',
    types: { decimal: 'text', timestamp: 'text', date: 'text', json: 'text' },
    bulkWrite: 'prepared-rows',
    maxBindVariables: 32766,
    maxInsertRows: 500,
    locking: 'single-process',
  },
  postgres: {
    kind: 'postgres',
    knexClient: 'pg',
    types: { decimal: 'numeric', timestamp: 'timestamptz', date: 'date', json: 'jsonb' },
    bulkWrite: 'copy-staging',
    maxBindVariables: 65535,
    maxInsertRows: null,
    locking: 'advisory',
  },
};

/** The profile of the store a knex handle (or transaction) talks to. */
export function profileOf(db: Knex): DialectProfile {
  const client = (db as unknown as { client: { config: { client: unknown } } }).client.config.client;
  const profile = Object.values(DIALECTS).find((p) => p.knexClient === client);
  if (!profile) throw new Error(`store: no dialect profile for the knex client ${String(client)}`);
  return profile;
}

/**
 * How a statement carries its rows: `insert`, knex's multi-row insert builder (a compound SELECT
 * on SQLite); `list`, a VALUES list or an IN list (only the bind variables count).
 */
export type StatementForm = 'insert' | 'list';

/**
 * Rows one statement may carry: `valuesPerRow` bind variables each, besides `otherValues` of the
 * rest of the statement (its WHERE, its ON CONFLICT). Never below 1.
 */
export function rowsPerStatement(profile: DialectProfile, valuesPerRow: number, form: StatementForm = 'insert', otherValues = 0): number {
  const byVariables = Math.floor((profile.maxBindVariables - otherValues) / Math.max(1, valuesPerRow));
  const byRows = form === 'insert' && profile.maxInsertRows !== null ? profile.maxInsertRows : Infinity;
  return Math.max(1, Math.min(byVariables, byRows));
}

/** Rows of a knex multi-row insert cut into statements inside the store's limits (columns: every key of any row). */
export function insertChunks<T extends object>(db: Knex, rows: readonly T[], otherValues = 0): T[][] {
  if (rows.length === 0) return [];
  const columns = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) columns.add(key);
  return cut(rows, rowsPerStatement(profileOf(db), columns.size, 'insert', otherValues));
}

/** Keys of an IN list (`valuesPerKey` variables each, 2 for a pair) cut into statements inside the store's limits, at most `atMost` a statement. */
export function listChunks<T>(db: Knex, keys: readonly T[], options: { valuesPerKey?: number; otherValues?: number; atMost?: number } = {}): T[][] {
  const size = Math.min(options.atMost ?? Infinity, rowsPerStatement(profileOf(db), options.valuesPerKey ?? 1, 'list', options.otherValues ?? 0));
  return cut(keys, size);
}

/** Items cut into runs of `size`. */
export function cut<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * `column IN (values)` for a batch's keys: on PostgreSQL as one array parameter (thousands of
 * placeholders cost more to compile and parse than the lookup), elsewhere as a plain list (cut
 * the values with listChunks or to 500 there: SQLite's variable limit).
 */
export const inList = (column: string, values: readonly string[]) => (q: Knex.QueryBuilder): void => {
  if ((q as unknown as { client: { config: { client: string } } }).client.config.client === 'pg') q.whereRaw('?? = ANY(?::text[])', [column, arrayLiteral(values) as string]);
  else q.whereIn(column, values as string[]);
};

/** The rows of a raw statement's result: SQLite's driver returns the array, PostgreSQL's a result with `rows`. */
export const rawRows = <T>(result: unknown): T[] => (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];

/** Values per `inList` statement: a batch's whole list on PostgreSQL (one array parameter), 500 elsewhere. */
export const inListSize = (db: Knex | Knex.Transaction): number => (db.client.config.client === 'pg' ? 20_000 : 500);
