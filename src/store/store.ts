import { mkdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { DIALECTS, type DialectProfile } from './dialects.js';
import { MIGRATIONS, type StoreMigration } from './migrations/index.js';
import { scrubStatementErrors } from './store-errors.js';
import { describeStore, parseStoreUrl, sqliteDirectory, type StoreLocation } from './store-url.js';
import { systemClock, type Clock } from '../kernel/clock.js';

// PostgreSQL type OIDs read as text, so that dates, timestamps and NUMERIC keep full precision
// (pg would turn timestamps into millisecond Dates).
const TEXT_TYPES = new Set([1082 /* date */, 1114 /* timestamp */, 1184 /* timestamptz */, 1700 /* numeric */]);
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (TEXT_TYPES.has(oid)) return (value: string) => value;
    if (oid === 20) return (value: string) => Number(value); // int8 counts stay far below 2^53
    return pg.types.getTypeParser(oid, format);
  },
};

/** The advisory lock of migration runs: this class, and the schema migrated (stores in other schemas of one database do not wait for each other). */
const MIGRATION_LOCK = "7305, hashtext('partner-sync migrate ' || coalesce(current_schema(), ''))";

/** How long a SQLite process waits for another's migrations: 100 × 100 ms. */
const SQLITE_MIGRATION_ATTEMPTS = 100;
const SQLITE_MIGRATION_WAIT_MS = 100;

/** A store named correctly that cannot be opened (unreachable, refused, a migration failed): a runtime failure, not bad usage. */
export class StoreOpenError extends Error {
  override name = 'StoreOpenError';
}

/** The store: a knex handle and the profile of its backend. Open it with `openStore`. */
export class Store {
  constructor(
    readonly knex: Knex,
    readonly profile: DialectProfile,
    readonly location: StoreLocation,
    readonly clock: Clock,
  ) {}

  get description(): string {
    return describeStore(this.location);
  }

  /** The current time as the store keeps it (UTC, six fraction digits). */
  now(): string {
    return this.clock().toISOString().replace('Z', '000Z');
  }

  /**
   * A transaction that fails reports its work's error, not its ROLLBACK's: SQLite rolls a
   * transaction back by itself on some errors (a full disk: SQLITE_FULL), and the ROLLBACK that
   * follows then fails with "no transaction is active", which knex would report instead.
   */
  async transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    let failed: { error: unknown } | undefined;
    try {
      return await this.knex.transaction(async (trx) => {
        try {
          return await work(trx);
        } catch (error) {
          failed = { error };
          throw error;
        }
      });
    } catch (error) {
      throw failed !== undefined ? failed.error : error;
    }
  }

  /**
   * Applies pending migrations; returns the names applied (empty when up to date). On
   * PostgreSQL, processes take turns: the run holds a session advisory lock on a connection of
   * its own (knex's lock table alone races on a fresh store: two processes both create it, or
   * both find it locked and give up). On SQLite the file's write lock serializes the
   * migrations' transactions, but knex creates its bookkeeping tables and takes its lock row
   * outside them: a process that loses that race (the table already exists, the lock is held)
   * waits and tries again, and then finds the migrations applied by the other.
   */
  async migrate(): Promise<string[]> {
    if (this.location.kind !== 'postgres') {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.migrateLatest();
        } catch (error) {
          const message = (error as Error).message ?? '';
          if (attempt >= SQLITE_MIGRATION_ATTEMPTS || !/already exists|already locked|SQLITE_BUSY/.test(message)) throw error;
          await sleep(SQLITE_MIGRATION_WAIT_MS);
        }
      }
    }
    const lock = new pg.Client({ connectionString: this.location.target });
    await lock.connect();
    try {
      await lock.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
      return await this.migrateLatest();
    } finally {
      // Ending the session releases the lock too, should the unlock itself fail.
      await lock.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
      await lock.end().catch(() => undefined);
    }
  }

  private async migrateLatest(): Promise<string[]> {
    const profile = this.profile;
    const source: Knex.MigrationSource<StoreMigration> = {
      getMigrations: async () => [...MIGRATIONS],
      getMigrationName: (m) => m.name,
      getMigration: async (m) => ({ up: (knex: Knex) => m.up(knex, profile, this.clock), down: async () => {} }),
    };
    const [, applied] = (await this.knex.migrate.latest({
      migrationSource: source,
      tableName: 'schema_migrations',
    })) as [number, string[]];
    return applied;
  }

  /** Names of applied migrations, oldest first. */
  async appliedMigrations(): Promise<string[]> {
    if (!(await this.knex.schema.hasTable('schema_migrations'))) return [];
    const rows: { name: string }[] = await this.knex('schema_migrations').select('name').orderBy('id');
    return rows.map((r) => r.name);
  }

  async close(): Promise<void> {
    await this.knex.destroy();
  }
}

/** Where the database driver's own notes go (knex prints them on stdout by default). */
export type DriverLog = (level: 'debug' | 'warn' | 'error' | 'deprecate', message: string) => void;

/**
 * The driver's notes only with DEBUG set, on stderr. Without it they are noise: a pool's
 * "Connection Error" or "Acquire connection error" with its stack comes before the same error
 * reaching the caller, which reports it once, in its own words (and on stdout they would break a
 * command's --json output).
 */
export const debugDriverLog: DriverLog = (level, message) => {
  if (process.env.DEBUG) process.stderr.write(`knex ${level}: ${message}\n`);
};

export interface OpenStoreOptions {
  /** Store URL; empty means the embedded SQLite default. */
  url?: string;
  clock?: Clock;
  /** Run migrations on open (default true: "migration on first use"). */
  migrate?: boolean;
  cwd?: string;
  /** The driver's notes (default debugDriverLog). */
  log?: DriverLog;
}

export async function openStore(options: OpenStoreOptions = {}): Promise<Store> {
  const location = parseStoreUrl(options.url, options.cwd);
  const profile = DIALECTS[location.kind];
  const dir = sqliteDirectory(location);
  if (dir) mkdirSync(dir, { recursive: true });
  // The values of a failed statement never enter its error (./store-errors.ts).
  const knex = knexFactory({ ...knexConfig(location, profile), compileSqlOnError: false, log: driverLog(options.log ?? debugDriverLog) });
  scrubStatementErrors(knex);
  const store = new Store(knex, profile, location, options.clock ?? systemClock);
  try {
    if (options.migrate ?? true) await store.migrate();
  } catch (error) {
    await knex.destroy();
    throw new StoreOpenError(`cannot open store ${store.description}: ${(error as Error).message}`, { cause: error });
  }
  return store;
}

function driverLog(log: DriverLog): Knex.Config['log'] {
  const text = (message: unknown): string => (typeof message === 'string' ? message : inspect(message, { depth: 4 }));
  return {
    debug: (m: unknown) => log('debug', text(m)),
    warn: (m: unknown) => log('warn', text(m)),
    error: (m: unknown) => log('error', text(m)),
    deprecate: (method: string, alternative: string) => log('deprecate', `${method} is deprecated, use ${alternative}`),
  };
}

interface SqliteConnection {
  pragma(sql: string): unknown;
  prepare(sql: string): unknown;
}

/** Prepared statements a SQLite connection keeps, by their SQL text (the most recently used). */
const STATEMENTS_KEPT = 256;

/**
 * A SQLite connection's statements prepared once per SQL text, not once per call: knex prepares
 * every statement it runs again, and a bulk settle runs the same few shapes thousands of times
 * (the same IN list of 500 customers, the same multi-row insert), preparing them took 0.8 s of a
 * month's commission evaluation. A prepared statement is reusable as long as the connection is
 * open (SQLite prepares it again itself when the schema changed); the least recently used ones
 * beyond STATEMENTS_KEPT are dropped.
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

function knexConfig(location: StoreLocation, profile: DialectProfile): Knex.Config {
  if (location.kind === 'postgres') {
    return {
      client: profile.knexClient,
      connection: { connectionString: location.target, types: pgTypes } as Knex.PgConnectionConfig,
      pool: {
        min: 0,
        max: 4,
        afterCreate: (conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void) => {
          // No JIT: a bulk settle's statements (report facts, customer-days) cost above its
          // threshold and each paid 100-120 ms compiling (auto_explain on a month's settle), to run
          // a plan once; nothing here runs long enough to win that back.
          conn.query("SET TIME ZONE 'UTC'; SET jit = off", (err) => done(err ?? null, conn));
        },
      },
    };
  }
  return {
    client: profile.knexClient,
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
          done(null, conn);
        } catch (error) {
          done(error as Error, conn);
        }
      },
    },
  };
}
