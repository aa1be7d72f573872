/**
 * A source database as a knex instance (its pool and its placeholder compilation) with drivers
 * set up so that values keep the source's precision, and sessions set up read-only:
 *
 * - `mysql` (mysql2): date-times and dates as text (`dateStrings`), DECIMAL and BIGINT as text
 *   (`supportBigNumbers` + `bigNumberStrings`); the session time zone `+00:00`, the statement timeout `max_statement_time` (MariaDB, seconds) or `max_execution_time` (MySQL, ms),
 *   transactions read-only.
 * - `postgres` (pg): date, timestamp, timestamptz, numeric and int8 as text (type parsers);
 *   `TimeZone` (UTC), `statement_timeout` and `default_transaction_read_only` set per session.
 *
 * Sessions run in UTC whatever the source's zone: the database never converts a zone (a named
 * zone needs the server's time-zone tables, which a partner's replica usually lacks). Zone-less
 * local values (DATETIME, `timestamp`) come as the text stored and are read in the source's zone
 * by us (datetime.ts); MySQL TIMESTAMP and PostgreSQL timestamptz are instants and come in UTC.
 * - `sqlite` (better-sqlite3): the file opened read-only, `query_only` on; stands in for a
 *   replica in the demo through the same path. No statement timeout.
 *
 * The URL is a secret: it appears in messages only with its password masked and redacted.
 */
import { isAbsolute, resolve } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type Database from 'better-sqlite3';
import type { Connection as MysqlConnection, QueryError } from 'mysql2';
import pg from 'pg';
import type { Logger, Redact } from '../../src/log.js';
import { SourceError, type SourceStats } from '../source.js';
import { PG_TEXT_OIDS } from './column-types.js';
import { isKnownZone } from './datetime.js';
import { SQL_DIALECTS, type SqlClient, type SqlDialect } from './dialects.js';
import { scrub, sqlError } from './errors.js';
import { createSession, type SqlSession } from './session.js';

export interface SqlConnectionOptions {
  client: SqlClient;
  url: string;
  /** IANA zone of the source's zone-less date-times (validated here; sessions run in UTC). */
  timezone: string;
  /** 0: none. */
  statementTimeoutMs: number;
  redact: Redact;
  logger: Logger;
  /** Counts every statement run. */
  stats: SourceStats;
  /** Connections at most (default 2: one read, one clock or inspection). */
  poolMax?: number;
  /** Relative SQLite paths are resolved from here (default the working directory). */
  cwd?: string;
}

export interface SqlConnection {
  readonly dialect: SqlDialect;
  readonly knex: Knex;
  /** `client url` with the password masked, for messages. */
  readonly description: string;
  /** A pooled connection; release it. */
  acquire(what: string): Promise<SqlSession>;
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 10_000;

const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (PG_TEXT_OIDS.has(oid)) return (value: string) => value;
    return pg.types.getTypeParser(oid, format);
  },
};

type Done = (error: Error | null, connection: unknown) => void;

/**
 * A pool's `afterCreate` running `setup`. knex does not close a connection whose afterCreate
 * failed (it would stay open and keep the process alive), so a failed setup closes it here.
 */
function afterCreate<C>(setup: (conn: C) => Promise<void>, close: (conn: C) => void): (conn: C, done: Done) => void {
  return (conn, done) => {
    setup(conn).then(
      () => done(null, conn),
      (error: Error) => {
        try {
          close(conn);
        } finally {
          done(error, conn);
        }
      },
    );
  };
}

function mysqlQuery(conn: MysqlConnection, sql: string, values: unknown[] = []): Promise<unknown> {
  return new Promise((resolvePromise, reject) => {
    conn.query({ sql, values }, (error: QueryError | null, result: unknown) => (error ? reject(error) : resolvePromise(result)));
  });
}

/** `mysql://user:password@host:port/database[?ssl=true]` → mysql2 options; unknown parameters are refused. */
function mysqlOptions(url: string): Record<string, unknown> {
  const parsed = new URL(url);
  const options: Record<string, unknown> = {
    host: decodeURIComponent(parsed.hostname.replace(/^\[(.*)\]$/, '$1')),
    port: parsed.port === '' ? 3306 : Number(parsed.port),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')),
  };
  for (const [key, value] of parsed.searchParams) {
    if (key !== 'ssl') throw new Error(`unsupported URL parameter "${key}"; supported: ssl=true`);
    // Certificates are verified: there is no switch to turn that off.
    if (value === 'true' || value === '1') options.ssl = {};
    else if (value !== 'false' && value !== '0') throw new Error(`ssl=${value}: use ssl=true or ssl=false`);
  }
  return options;
}

function knexConfig(options: SqlConnectionOptions, dialect: SqlDialect): Knex.Config {
  const { url, statementTimeoutMs } = options;
  const pool = { min: 0, max: options.poolMax ?? 2 };
  const log = {
    warn: (message: unknown) => options.logger.debug(scrub(`knex: ${String(message)}`, options.redact)),
    error: (message: unknown) => options.logger.debug(scrub(`knex: ${String(message)}`, options.redact)),
    deprecate: () => undefined,
    debug: () => undefined,
  };
  const common = { client: dialect.knexClient, log, acquireConnectionTimeout: 30_000 };

  if (dialect.client === 'mysql') {
    if (!/^(mysql|mariadb):\/\//i.test(url)) throw new Error('a mysql source needs a mysql://user:password@host:port/database URL');
    return {
      ...common,
      connection: {
        ...mysqlOptions(url),
        dateStrings: true,
        supportBigNumbers: true,
        bigNumberStrings: true,
        decimalNumbers: false,
        timezone: 'Z',
        multipleStatements: false,
        connectTimeout: CONNECT_TIMEOUT_MS,
      } as Knex.MySql2ConnectionConfig,
      pool: {
        ...pool,
        afterCreate: afterCreate<MysqlConnection>(
          async (conn) => {
            const [version] = (await mysqlQuery(conn, 'SELECT VERSION() AS version')) as { version: string }[];
            const mariadb = /mariadb/i.test(version?.version ?? '');
            // An offset, not a name: it needs no time-zone tables.
            await mysqlQuery(conn, "SET time_zone = '+00:00'");
            if (mariadb) await mysqlQuery(conn, 'SET SESSION max_statement_time = ?', [statementTimeoutMs / 1000]);
            else await mysqlQuery(conn, 'SET SESSION max_execution_time = ?', [statementTimeoutMs]);
            await mysqlQuery(conn, 'SET SESSION TRANSACTION READ ONLY');
          },
          (conn) => conn.destroy(),
        ),
      },
    };
  }

  if (dialect.client === 'postgres') {
    if (!/^postgres(ql)?:\/\//i.test(url)) throw new Error('a postgres source needs a postgres://user:password@host:port/database URL');
    return {
      ...common,
      connection: { connectionString: url, types: pgTypes, connectionTimeoutMillis: CONNECT_TIMEOUT_MS } as Knex.PgConnectionConfig,
      pool: {
        ...pool,
        afterCreate: afterCreate<pg.Client>(
          async (conn) => {
            await conn.query({
              text: `SELECT set_config('TimeZone', $1, false), set_config('statement_timeout', $2, false), set_config('default_transaction_read_only', 'on', false)`,
              values: ['UTC', String(statementTimeoutMs)],
            });
          },
          (conn) => void conn.end().catch(() => undefined),
        ),
      },
    };
  }

  const sqlite = /^sqlite:(?:\/\/)?(.*)$/i.exec(url);
  const path = sqlite ? (sqlite[1] ?? '') : url;
  if (path === '' || /^[a-z][a-z0-9+.-]*:\/\//i.test(path)) throw new Error('a sqlite source needs a sqlite:PATH URL');
  return {
    ...common,
    useNullAsDefault: true,
    connection: { filename: isAbsolute(path) ? path : resolve(options.cwd ?? process.cwd(), path), options: { readonly: true } },
    pool: {
      min: 0,
      max: 1,
      afterCreate: afterCreate<Database.Database>(
        async (conn) => {
          conn.pragma('query_only = ON');
          conn.pragma('busy_timeout = 5000');
        },
        (conn) => conn.close(),
      ),
    },
  };
}

/** A URL fit for messages: password masked, secrets redacted. */
export function describeSource(client: SqlClient, url: string, redact: Redact): string {
  return `${client} ${scrub(url, redact)}`;
}

export function openSqlConnection(options: SqlConnectionOptions): SqlConnection {
  const dialect = SQL_DIALECTS[options.client];
  if (dialect === undefined) throw new SourceError(`source.client: ${JSON.stringify(options.client)} is not a database client; allowed: ${Object.keys(SQL_DIALECTS).join(', ')}`);
  const description = describeSource(options.client, options.url, options.redact);
  if (!isKnownZone(options.timezone)) throw new SourceError(`source.timezone: unknown time zone ${JSON.stringify(options.timezone)}: use an IANA name such as Europe/Malta, or UTC`);
  if (!Number.isFinite(options.statementTimeoutMs) || options.statementTimeoutMs < 0) {
    throw new SourceError(`source.statement_timeout_ms: ${options.statementTimeoutMs} is not a duration in milliseconds (0 for none)`);
  }
  let knex: Knex;
  try {
    knex = knexFactory(knexConfig(options, dialect));
  } catch (error) {
    throw new SourceError(`source.url (${description}): ${scrub((error as Error).message, options.redact)}`);
  }
  const context = { knex, dialect, stats: options.stats, redact: options.redact, statementTimeoutMs: options.statementTimeoutMs };
  return {
    dialect,
    knex,
    description,
    async acquire(what) {
      let raw: unknown;
      try {
        raw = await knex.client.acquireConnection();
      } catch (error) {
        throw sqlError(`${what}: connecting to ${description}`, error, options.redact);
      }
      return createSession(context, raw);
    },
    close: () => knex.destroy(),
  };
}
