/**
 * The SQLite adapter: an in-process database with one connection, so transactions are serial and
 * small prepared statements cost no round trip. Statements stay inside SQLite's limits (500 terms
 * of a compound SELECT, 32,766 variables); money is decimal text, summed in the process.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { DIALECTS } from '../dialects.js';
import { sizing, type Conflict, type StoreDialect } from './adapter.js';

/** How long a process waits for another's migrations: 100 × 100 ms. */
const MIGRATION_ATTEMPTS = 100;
const MIGRATION_WAIT_MS = 100;

/** Prepared statements a connection keeps, by their SQL text (the most recently used). */
const STATEMENTS_KEPT = 256;

interface SqliteConnection {
  pragma(sql: string): unknown;
  prepare(sql: string): unknown;
}

/**
 * A connection's statements prepared once per SQL text, not once per call: knex prepares every
 * statement it runs again, and a bulk settle runs the same few shapes thousands of times (the same
 * IN list of 500 customers, the same multi-row insert), and preparing them again was a share of a
 * month's commission evaluation worth saving (bench/README.md, the whole pipeline). A prepared statement is reusable as long as the connection is open
 * (SQLite prepares it again itself when the schema changed); the least recently used ones beyond
 * STATEMENTS_KEPT are dropped.
 */
function keepPreparedStatements(conn: SqliteConnection): void {
  const prepare = conn.prepare.bind(conn);
  const kept = new Map<string, unknown>();
  conn.prepare = (sql: string): unknown => {
    let statement = kept.get(sql);
    if (statement !== undefined) {
      kept.delete(sql);
    } else {
      statement = prepare(sql);
      if (kept.size >= STATEMENTS_KEPT) kept.delete(kept.keys().next().value as string);
    }
    kept.set(sql, statement);
    return statement;
  };
}

/** Knex multi-row inserts of `rows`, each inside the limits, with the conflict's clause. */
async function insert(trx: Knex.Transaction, table: string, rows: readonly Record<string, unknown>[], conflict: Conflict | undefined): Promise<void> {
  for (const part of sqliteDialect.insertChunks(rows)) {
    const q = trx(table).insert(part);
    if (!conflict) await q;
    else if (conflict.update?.length) await q.onConflict([...conflict.on]).merge([...conflict.update]);
    else await q.onConflict([...conflict.on]).ignore();
  }
}

export const sqliteDialect: StoreDialect = {
  ...DIALECTS.sqlite,
  ...sizing(DIALECTS.sqlite, 500),
  inList: (column, values) => (q) => { q.whereIn(column, values as string[]); },

  concurrent: false,
  transactionLock: async () => {},
  skipLocked: '',

  batchParameters: false,
  exactDecimals: false,
  plannerStatistics: false,
  partitions: false,

  insertColumns(trx, table, constants, columns, conflict) {
    const fixed = Object.fromEntries(Object.entries(constants).map(([c, [, value]]) => [c, value]));
    const arrays = Object.entries(columns);
    const rows = Array.from({ length: arrays[0]?.[1][1].length ?? 0 }, (_, i) => ({ ...fixed, ...Object.fromEntries(arrays.map(([c, [, values]]) => [c, values[i]])) }));
    return insert(trx, table, rows, conflict);
  },
  insertRows: (trx, table, _types, rows, options = {}) => insert(trx, table, rows, options.conflict),
  async deleteKeys(trx, table, partner, key, keys, atMost) {
    const columns = Object.keys(key);
    for (const part of sqliteDialect.chunks(keys, { valuesPerRow: columns.length, otherValues: 1, atMost })) {
      await trx(table).where('partner_id', partner).whereIn(columns, part as string[][]).delete();
    }
  },

  dateText: (column) => column,
  monthText: (column) => `substr(${column}, 1, 7)`,
  median: null,

  async reclaimErased(knex) {
    await knex.raw('PRAGMA wal_checkpoint(TRUNCATE)');
  },

  knexConfig: (location) => ({
    client: DIALECTS.sqlite.knexClient,
    connection: { filename: location.target },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: SqliteConnection, done: (err: Error | null, conn: unknown) => void) => {
        try {
          keepPreparedStatements(conn);
          conn.pragma('journal_mode = WAL');
          conn.pragma('busy_timeout = 5000');
          // FULL: a commit is on disk when it returns. With NORMAL, WAL mode stays consistent but
          // the last commits before a power loss or OS crash can vanish (a finished import, a
          // checkpoint, ledger lines) while the partner side believes them delivered.
          conn.pragma('synchronous = FULL');
          // Bulk loads touch many index pages per commit: a larger page cache and fewer WAL
          // checkpoints keep commits cheap without weakening what a commit promises.
          conn.pragma('cache_size = -65536');
          conn.pragma('wal_autocheckpoint = 16384');
          // Deleted and overwritten content is zeroed in the file, not left in free space: an
          // erased person's values must be gone from the bytes (docs/personal-data.md).
          conn.pragma('secure_delete = ON');
          done(null, conn);
        } catch (error) {
          done(error as Error, conn);
        }
      },
    },
  }),

  /**
   * The file's write lock serializes the migrations' transactions, but knex creates its
   * bookkeeping tables and takes its lock row outside them: a process that loses that race (the
   * table already exists, the lock is held) waits and tries again, and then finds the migrations
   * applied by the other.
   */
  async migrationTurn(_location, migrate) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await migrate();
      } catch (error) {
        const message = (error as Error).message ?? '';
        if (attempt >= MIGRATION_ATTEMPTS || !/already exists|already locked|SQLITE_BUSY/.test(message)) throw error;
        await sleep(MIGRATION_WAIT_MS);
      }
    }
  },
};
