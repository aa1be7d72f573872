/**
 * What differs between store backends, as data: column types, how bulk upserts are written,
 * connection set-up. Code elsewhere asks the profile instead of testing the client name.
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
    locking: 'single-process',
  },
  postgres: {
    kind: 'postgres',
    knexClient: 'pg',
    types: { decimal: 'numeric', timestamp: 'timestamptz', date: 'date', json: 'jsonb' },
    bulkWrite: 'copy-staging',
    maxBindVariables: 65535,
    locking: 'advisory',
  },
};
