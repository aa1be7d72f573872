/**
 * Real MariaDB and PostgreSQL replicas for tests: each a database (MariaDB) or schema (PostgreSQL)
 * of its own, with the tables of the prop-trading replica example (config/partners/replica-prop.yaml),
 * dropped after the test.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { utcDay } from '../../jobs/windows.js';
import { addDays } from '../../src/kernel/dates.js';
import type { PartnerDefinition } from '../../src/config/definition.js';
import { loadDefinition } from '../../src/config/load-definitions.js';
import { packageRoot } from '../../src/paths.js';

const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
// A replica's server; TEST_REPLICA_PG_URL sets it apart from the store's (scripts/faketime-suite.sh).
const PG_URL = process.env.TEST_REPLICA_PG_URL ?? process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
let counter = 0;

export interface Replica {
  client: 'mysql' | 'postgres';
  url: string;
  exec(sql: string, params?: unknown[]): Promise<void>;
  /** The replica's own clock plus `seconds`, as a zone-less UTC date-time with microseconds. */
  nowPlus(seconds: number): Promise<string>;
  drop(): Promise<void>;
}

export async function mariadb(): Promise<Replica> {
  const name = `ps_replica_${process.pid}_${++counter}`;
  const admin = await mysql.createConnection(MYSQL_URL);
  await admin.query(`CREATE DATABASE ${name}`);
  const conn = await mysql.createConnection(`${MYSQL_URL}/${name}`);
  await conn.query("SET time_zone = '+00:00'");
  const ddl = { dt: 'DATETIME(6)', dec: 'DECIMAL(14,2)' };
  for (const sql of schema(ddl)) await conn.query(sql);
  return {
    client: 'mysql',
    url: `${MYSQL_URL}/${name}`,
    exec: async (sql, params) => void (await conn.query(sql, params)),
    nowPlus: async (s) => {
      const [rows] = await conn.query(`SELECT DATE_FORMAT(UTC_TIMESTAMP(6) + INTERVAL ${Number(s)} SECOND, '%Y-%m-%d %H:%i:%s.%f') AS t`);
      return (rows as { t: string }[])[0]?.t as string;
    },
    drop: async () => { await conn.end(); await admin.query(`DROP DATABASE ${name}`); await admin.end(); },
  };
}

export async function postgres(): Promise<Replica> {
  const name = `ps_replica_${process.pid}_${++counter}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${name}`);
  const url = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${name}`)}`;
  const conn = new pg.Client({ connectionString: url });
  await conn.connect();
  for (const sql of schema({ dt: 'timestamp(6)', dec: 'numeric(14,2)' })) await conn.query(sql);
  return {
    client: 'postgres',
    url,
    exec: async (sql, params) => {
      let n = 0;
      await conn.query(sql.replace(/\?/g, () => `$${++n}`), params);
    },
    nowPlus: async (s) => {
      const r = await conn.query(`SELECT to_char((now() at time zone 'UTC') + make_interval(secs => ${Number(s)}), 'YYYY-MM-DD HH24:MI:SS.US') AS t`);
      return r.rows[0].t as string;
    },
    drop: async () => { await conn.end(); await admin.query(`DROP SCHEMA ${name} CASCADE`); await admin.end(); },
  };
}

function schema(t: { dt: string; dec: string }): string[] {
  return [
    `CREATE TABLE accounts (account_id VARCHAR(32) NOT NULL PRIMARY KEY, email VARCHAR(255), first_name VARCHAR(100), last_name VARCHAR(100),
      country CHAR(2), plan VARCHAR(40) NOT NULL, stage VARCHAR(16) NOT NULL, balance_usd ${t.dec} NOT NULL, ib_code VARCHAR(32),
      created_at ${t.dt} NOT NULL, updated_at ${t.dt} NOT NULL)`,
    'CREATE INDEX accounts_updated ON accounts (updated_at, account_id)',
    `CREATE TABLE payments (payment_id VARCHAR(32) NOT NULL PRIMARY KEY, account_id VARCHAR(32) NOT NULL, kind VARCHAR(16) NOT NULL,
      amount_cents INTEGER NOT NULL, currency CHAR(3) NOT NULL, paid_at ${t.dt} NOT NULL, state VARCHAR(16) NOT NULL, updated_at ${t.dt} NOT NULL)`,
    'CREATE INDEX payments_updated ON payments (updated_at, payment_id)',
    `CREATE TABLE trades (trade_id INTEGER NOT NULL PRIMARY KEY, account_id VARCHAR(32) NOT NULL, symbol VARCHAR(16) NOT NULL,
      volume INTEGER NOT NULL, profit_cents INTEGER NOT NULL, currency CHAR(3) NOT NULL, opened_at ${t.dt} NOT NULL, closed_at ${t.dt} NOT NULL)`,
  ];
}

/** The example definition, pointed at a replica, with its first run covering the test data (from `startDaysBack` days ago). */
export async function replicaDefinition(replica: Replica, dir: string, pageSize = 5000, startDaysBack = 10): Promise<PartnerDefinition> {
  mkdirSync(join(dir, 'partners'), { recursive: true });
  const yaml = readFileSync(join(packageRoot(), 'config', 'partners', 'replica-prop.yaml'), 'utf8')
    .replace(/^(\s+)client: sqlite\b/m, `$1client: ${replica.client}`)
    .replace(/page_size: \d+/, `page_size: ${pageSize}`)
    .replace(/^(\s+)lookback: (\S+).*$/gm, `$1lookback: $2\n$1start: ${addDays(utcDay(new Date()), -startDaysBack)}T00:00:00Z`);
  const file = join(dir, 'partners', 'replica-prop.yaml');
  writeFileSync(file, yaml);
  const loaded = await loadDefinition(file, { ...process.env, REPLICA_PROP_URL: replica.url });
  if (!loaded.definition) throw new Error(JSON.stringify(loaded.errors));
  return loaded.definition;
}

export async function seed(replica: Replica, accounts: number): Promise<void> {
  const hourAgo = await replica.nowPlus(-3600);
  const minuteAgo = await replica.nowPlus(-60);
  const yesterday = addDays(utcDay(new Date()), -1);
  for (let i = 1; i <= accounts; i++) {
    const id = `A${String(i).padStart(5, '0')}`;
    await replica.exec('INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [id, null, null, null, 'GB', 'standard', i % 3 === 0 ? 'FUNDED' : 'P1', '100000.00', `IB-${i % 4}`, '2026-01-05 09:00:00.000001', i === accounts ? minuteAgo : hourAgo]);
    await replica.exec('INSERT INTO payments VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [`P${i}`, id, 'CHALLENGE', 54900, 'USD', '2026-01-05 09:05:00', 'approved', hourAgo]);
    await replica.exec('INSERT INTO trades VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [i, id, i % 2 ? 'EURUSD' : 'XAUUSD', 150, -2550, 'USD', `${yesterday} 09:00:00`, `${yesterday} 10:00:00`]);
  }
}
