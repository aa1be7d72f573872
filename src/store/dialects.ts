/**
 * What differs between store backends, as data: column types (which the frozen migrations read),
 * how bulk upserts are written, locking, and the size limits of one statement. The behaviour that
 * differs is the adapter's (./dialect/: each adapter extends its profile); every multi-row
 * statement takes its rows per statement from `rowsPerStatement`, so a batch, scope or plan of any
 * size stays inside the limits.
 */

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

/** Variables per row of a knex multi-row insert: every key of any row. */
export function columnCount(rows: readonly object[]): number {
  const columns = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) columns.add(key);
  return columns.size;
}

/** Items cut into runs of `size`. */
export function cut<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The rows of a raw statement's result: SQLite's driver returns the array, PostgreSQL's a result with `rows`. */
export const rawRows = <T>(result: unknown): T[] => (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];
