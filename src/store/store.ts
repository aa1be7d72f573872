import { mkdirSync } from 'node:fs';
import { inspect } from 'node:util';
import knexFactory, { type Knex } from 'knex';
import { STORE_DIALECTS, type StoreDialect } from './dialect/index.js';
import { MIGRATIONS, type StoreMigration } from './migrations/index.js';
import { scrubStatementErrors } from './store-errors.js';
import { describeStore, parseStoreUrl, sqliteDirectory, type StoreLocation } from './store-url.js';
import { systemClock, type Clock } from '../kernel/clock.js';

/** A store named correctly that cannot be opened (unreachable, refused, a migration failed): a runtime failure, not bad usage. */
export class StoreOpenError extends Error {
  override name = 'StoreOpenError';
}

/** The store: a knex handle and the adapter of its backend. Open it with `openStore`. */
export class Store {
  constructor(
    readonly knex: Knex,
    readonly dialect: StoreDialect,
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

  /** Applies pending migrations, taking turns with other processes (the dialect's migrationTurn); returns the names applied (empty when up to date). */
  migrate(): Promise<string[]> {
    return this.dialect.migrationTurn(this.location, () => this.migrateLatest());
  }

  private async migrateLatest(): Promise<string[]> {
    const profile = this.dialect;
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
  const dialect = STORE_DIALECTS[location.kind];
  const dir = sqliteDirectory(location);
  if (dir) mkdirSync(dir, { recursive: true });
  // The values of a failed statement never enter its error (./store-errors.ts).
  const knex = knexFactory({ ...dialect.knexConfig(location), compileSqlOnError: false, log: driverLog(options.log ?? debugDriverLog) });
  scrubStatementErrors(knex);
  const store = new Store(knex, dialect, location, options.clock ?? systemClock);
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
