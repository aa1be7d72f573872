/**
 * The source databases the SQL source tests read, for real: a database of its own in the local
 * MariaDB (`ps_src_<pid>_<n>`), a schema of its own in the local PostgreSQL, a SQLite file. Each
 * test creates its database and drops it. TEST_SOURCE_DBS=mysql,postgres,sqlite narrows the list;
 * TEST_MYSQL_URL / TEST_PG_URL point elsewhere (TEST_REPLICA_PG_URL, when set, for PostgreSQL here only:
 * the sources' server apart from the store's, as scripts/faketime-suite.sh runs them).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { DbSource, DbStream, StreamMapping, WarehouseSource, WarehouseStream } from '../../src/config/definition.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import type { SqlClient } from '../../connectors/sql/dialects.js';

export const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
export const PG_URL = process.env.TEST_REPLICA_PG_URL ?? process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Column types and expressions of one dialect, for the tests' DDL and data. */
export interface DialectSql {
  /** A date-time at microseconds (zone-less DATETIME(6); timestamptz; TEXT in SQLite). */
  datetime6: string;
  /** A zone-less date-time (PostgreSQL timestamp). */
  localDatetime: string;
  date: string;
  bigint: string;
  decimal: string;
  text: string;
  /** A row source of `n` rows with a column `seq` 1..n. */
  series(n: number): string;
  /** `base + seconds` as a date-time value of `datetime6` (seconds may be an expression). */
  plusSeconds(base: string, seconds: string): string;
  /** The source's own current UTC time plus `seconds`, as a `datetime6` value. */
  nowPlus(seconds: number): string;
  /** A string of `n` characters. */
  pad(n: number): string;
}

export interface TestDatabase {
  client: SqlClient;
  /** The URL a source connects with. */
  url: string;
  sql: DialectSql;
  /** Runs a statement with positional `?` values (DDL, writes) as the owner. */
  exec(statement: string, values?: unknown[]): Promise<void>;
  rows<T = Record<string, unknown>>(statement: string, values?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

export interface DatabaseBackend {
  client: SqlClient;
  create(): Promise<TestDatabase>;
}

let counter = 0;

const mysqlSql: DialectSql = {
  datetime6: 'DATETIME(6)',
  localDatetime: 'DATETIME(6)',
  date: 'DATE',
  bigint: 'BIGINT',
  decimal: 'DECIMAL(15,2)',
  text: 'VARCHAR(255)',
  series: (n) => `(SELECT seq FROM seq_1_to_${n}) s`,
  plusSeconds: (base, seconds) => `(TIMESTAMP'${base}' + INTERVAL (${seconds}) SECOND)`,
  nowPlus: (seconds) => `(UTC_TIMESTAMP(6) + INTERVAL ${seconds} SECOND)`,
  pad: (n) => `REPEAT('x', ${n})`,
};

const postgresSql: DialectSql = {
  datetime6: 'timestamptz',
  localDatetime: 'timestamp',
  date: 'date',
  bigint: 'bigint',
  decimal: 'numeric(15,2)',
  text: 'text',
  series: (n) => `generate_series(1, ${n}) AS s(seq)`,
  plusSeconds: (base, seconds) => `(timestamptz '${base}+00' + (${seconds}) * interval '1 second')`,
  nowPlus: (seconds) => `(clock_timestamp() + interval '${seconds} seconds')`,
  pad: (n) => `repeat('x', ${n})`,
};

const sqliteSql: DialectSql = {
  datetime6: 'DATETIME',
  localDatetime: 'DATETIME',
  date: 'DATE',
  bigint: 'INTEGER',
  decimal: 'DECIMAL(15,2)',
  text: 'TEXT',
  series: (n) => `(WITH RECURSIVE s(seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM s WHERE seq < ${n}) SELECT seq FROM s) s`,
  plusSeconds: (base, seconds) => `(strftime('%Y-%m-%d %H:%M:%S', '${base}', '+' || (${seconds}) || ' seconds') || '.000000')`,
  nowPlus: (seconds) => `(strftime('%Y-%m-%d %H:%M:%f', 'now', '${seconds >= 0 ? '+' : ''}${seconds} seconds') || '000')`,
  pad: (n) => `substr(hex(zeroblob(${Math.ceil(n / 2)})), 1, ${n})`,
};

const mariadb: DatabaseBackend = {
  client: 'mysql',
  async create() {
    const name = `ps_src_${process.pid}_${++counter}`;
    const admin = await mysql.createConnection({ uri: MYSQL_URL, dateStrings: true, supportBigNumbers: true, bigNumberStrings: true });
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.query(`USE ${name}`);
    await admin.query("SET time_zone = '+00:00'");
    return {
      client: 'mysql',
      url: `${MYSQL_URL.replace(/\/$/, '')}/${name}`,
      sql: mysqlSql,
      exec: async (statement, values = []) => {
        await admin.query(statement, values);
      },
      rows: async <T>(statement: string, values: unknown[] = []) => (await admin.query(statement, values))[0] as T[],
      drop: async () => {
        try {
          await admin.query(`DROP DATABASE IF EXISTS ${name}`);
        } finally {
          await admin.end();
        }
      },
    };
  },
};

const postgres: DatabaseBackend = {
  client: 'postgres',
  async create() {
    const schema = `ps_src_${process.pid}_${++counter}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`SET search_path = ${schema}`);
    await admin.query(`SET TIME ZONE 'UTC'`);
    // Positional ? in the tests' statements, $n for pg.
    const numbered = (statement: string) => {
      let n = 0;
      return statement.replace(/\?/g, () => `$${++n}`);
    };
    return {
      client: 'postgres',
      url: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      sql: postgresSql,
      exec: async (statement, values = []) => {
        await admin.query(numbered(statement), values);
      },
      rows: async <T>(statement: string, values: unknown[] = []) => (await admin.query(numbered(statement), values)).rows as T[],
      drop: async () => {
        try {
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        } finally {
          await admin.end();
        }
      },
    };
  },
};

const sqlite: DatabaseBackend = {
  client: 'sqlite',
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'ps-src-'));
    const file = join(dir, 'replica.sqlite');
    const admin = new Database(file);
    // WAL: the writer of a test does not wait for a source's open read, and that read keeps its snapshot.
    admin.pragma('journal_mode = WAL');
    return {
      client: 'sqlite',
      url: `sqlite:${file}`,
      sql: sqliteSql,
      exec: async (statement, values = []) => {
        if (values.length === 0) admin.exec(statement);
        else admin.prepare(statement).run(values);
      },
      rows: async <T>(statement: string, values: unknown[] = []) => admin.prepare(statement).all(values) as T[],
      drop: async () => {
        admin.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const wanted = (process.env.TEST_SOURCE_DBS ?? 'mysql,postgres,sqlite').split(',').map((s) => s.trim());
export const DATABASES: DatabaseBackend[] = [mariadb, postgres, sqlite].filter((b) => wanted.includes(b.client));
export const SERVER_DATABASES: DatabaseBackend[] = DATABASES.filter((b) => b.client !== 'sqlite');

const openSockets = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;

/**
 * A test's database for the duration of each test of a suite: `db()` gives it. A test that leaves
 * a connection open (a source not closed, a read not released) fails.
 */
export function useDatabase(backend: DatabaseBackend): () => TestDatabase {
  let current: TestDatabase | undefined;
  let sockets = 0;
  beforeEach(async () => {
    sockets = openSockets();
    current = await backend.create();
  });
  afterEach(async () => {
    const db = current;
    current = undefined;
    await db?.drop();
    for (let i = 0; i < 50 && openSockets() > sockets; i++) await new Promise((r) => setTimeout(r, 20));
    if (openSockets() > sockets) throw new Error(`the test left ${openSockets() - sockets} database connection(s) open`);
  });
  return () => {
    if (current === undefined) throw new Error('no test database');
    return current;
  };
}

export function dbSource(db: TestDatabase, overrides: Partial<DbSource> = {}): DbSource {
  return {
    type: 'db',
    client: db.client,
    url: db.url,
    page_size: 100,
    safety_lag_ms: 0,
    timezone: 'UTC',
    statement_timeout_ms: 30_000,
    run_budget_ms: 3_600_000,
    ...overrides,
  };
}

export const RAW: StreamMapping = { fields: {}, passthrough: true };

export function cursorStream(overrides: Partial<DbStream> = {}): DbStream {
  return {
    entity: 'customers',
    incremental: { mode: 'cursor', cursor_field: 'updated_at', lookback_ms: 0, start: '' },
    mapping: RAW,
    schedule: '*/5 * * * *',
    table: 'accounts',
    cursor_column: 'updated_at',
    tiebreak_column: 'id',
    ...overrides,
  };
}

export function dailyStream(overrides: Partial<DbStream> = {}): DbStream {
  return {
    entity: 'activity',
    incremental: { mode: 'daily', late_days: 2, start: '' },
    mapping: RAW,
    schedule: '15 0 * * *',
    ...overrides,
  };
}

export function warehouseSource(db: TestDatabase, overrides: Partial<WarehouseSource> = {}): WarehouseSource {
  return {
    type: 'warehouse',
    client: db.client,
    url: db.url,
    statement_timeout_ms: 30_000,
    days_per_query: 1,
    timezone: 'UTC',
    run_budget_ms: 3_600_000,
    ...overrides,
  };
}

export function viewStream(overrides: Partial<WarehouseStream> = {}): WarehouseStream {
  return {
    entity: 'activity',
    incremental: { mode: 'daily', late_days: 2, start: '' },
    mapping: RAW,
    schedule: '15 0 * * *',
    view: 'activity_v',
    date_column: 'date',
    ...overrides,
  };
}

export const deps = () => ({ clock: () => new Date(), logger: silentLogger(), redact: noRedaction, variant: 'igaming' as const });

/** Every page of a read. */
export async function readAll(pages: AsyncIterable<unknown[]>): Promise<Record<string, unknown>[][]> {
  const out: Record<string, unknown>[][] = [];
  for await (const page of pages) out.push(page as Record<string, unknown>[]);
  return out;
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`rejected with a non-error: ${String(error)}`);
  }
  throw new Error('expected a rejection, but it resolved');
}
