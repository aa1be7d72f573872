/**
 * Reconcile scan benchmark: 20,000 customers (default), one transaction each (a month of the
 * sandbox's for REST), in a source of each kind: the REST sandbox partner, a MariaDB and a
 * PostgreSQL replica (the replica-prop example's tables), a PostgreSQL warehouse (the
 * warehouse-casino example's views). Each is loaded into a fresh PostgreSQL store schema (the load
 * path alone, untimed), then one `reconcile` (src/onboarding/reconcile.ts) over the days covering
 * them is timed, beside a baseline measured in the same run over the same rows: the source read
 * alone (a plain SELECT of the tables or views; the connector's pages for REST) plus a plain SELECT
 * of the store's rows. Figures: seconds, rows/s (source rows compared) and the ratio to the baseline.
 *
 *   node dist/bench/reconcile.bench.js [customers]
 *     (TEST_MYSQL_URL, TEST_PG_URL override the servers)
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { runPartner } from '../jobs/run-partner.js';
import { createSource } from '../connectors/index.js';
import type { PartnerDefinition } from '../src/config/definition.js';
import { loadDefinition } from '../src/config/load-definitions.js';
import { addDays } from '../src/kernel/dates.js';
import { noRedaction, silentLogger } from '../src/log.js';
import { reconcile } from '../src/onboarding/reconcile.js';
import { packageRoot } from '../src/paths.js';
import { Loader } from '../src/pipeline/load.js';
import { startSandbox } from '../src/sandbox/server.js';
import { specValidator } from '../src/spec/validator.js';
import { openStore, type Store } from '../src/store/store.js';
import type { Entity } from '../src/types.js';

const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const N = Number(process.argv[2] ?? 20_000);
const SECRET = 'bench-sandbox-secret';
const today = new Date().toISOString().slice(0, 10);
const yesterday = addDays(today, -1);
const seconds = (ms: number) => (ms / 1000).toFixed(2);

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await f();
  return [value, performance.now() - started];
}

/** A bundled example definition with these edits, its activity stream left out. */
async function example(name: string, edit: (yaml: string) => string, env: Record<string, string>): Promise<{ def: PartnerDefinition; cleanup(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'partner-sync-bench-reconcile-'));
  mkdirSync(join(dir, 'partners'));
  const file = join(dir, 'partners', `${name}.yaml`);
  writeFileSync(file, edit(readFileSync(join(packageRoot(), 'config', 'partners', `${name}.yaml`), 'utf8')));
  const loaded = await loadDefinition(file, { ...process.env, ...env });
  if (!loaded.definition) throw new Error(JSON.stringify(loaded.errors));
  delete loaded.definition.streams.activity;
  return { def: loaded.definition, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

let schemas = 0;
async function pgStore(): Promise<{ store: Store; drop(): Promise<void> }> {
  const schema = `ps_bench_reconcile_${process.pid}_${++schemas}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const store = await openStore({ url: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}` });
  return { store, drop: async () => { await store.close(); await admin.query(`DROP SCHEMA ${schema} CASCADE`); await admin.end(); } };
}

interface Figures { source: string; rows: number; reconcile_s: number; ok: boolean; source_s: number; store_s: number }

/** Loads the definition's source into a fresh store, then times reconcile and the baseline's two reads. */
async function measure(label: string, def: PartnerDefinition, from: string, to: string, sourceSelect: () => Promise<number>): Promise<Figures> {
  const s = await pgStore();
  try {
    const clock = () => new Date();
    const loader = new Loader({ validator: specValidator(), store: s.store, jobs: [] });
    const results = await runPartner({ loader, clock, logger: silentLogger(), redact: noRedaction }, def, { kind: 'run', scheduledFor: new Date() });
    for (const r of results) if (r.status !== 'succeeded') throw new Error(`${label}: ${JSON.stringify(r)}`);
    const [result, reconcileMs] = await timed(() => reconcile({ store: s.store, clock, logger: silentLogger(), redact: noRedaction }, def, from, to));
    const rows = result.days.reduce((n, d) => n + d.source.count, 0);
    const [, sourceMs] = await timed(sourceSelect);
    const [, storeMs] = await timed(async () => {
      for (const table of ['customers', 'transactions']) await s.store.knex(table).where('partner_id', def.partner).select('*');
    });
    return { source: label, rows, reconcile_s: reconcileMs / 1000, ok: result.ok, source_s: sourceMs / 1000, store_s: storeMs / 1000 };
  } finally {
    await s.drop();
  }
}

/** The replica example's tables with N accounts and one payment each, changed yesterday. */
function replicaRows(): { accounts: unknown[][]; payments: unknown[][] } {
  const accounts: unknown[][] = [];
  const payments: unknown[][] = [];
  for (let i = 1; i <= N; i++) {
    const id = `A${String(i).padStart(6, '0')}`;
    const at = `${yesterday} ${String(8 + (i % 12)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00.${String(i % 1_000_000).padStart(6, '0')}`;
    accounts.push([id, 'GB', 'standard', i % 3 === 0 ? 'FUNDED' : 'P1', '100000.00', `IB-${i % 40}`, at, at]);
    payments.push([`P${i}`, id, 'CHALLENGE', 54900, 'USD', at, 'approved', at]);
  }
  return { accounts, payments };
}
const REPLICA_DDL = (dt: string, dec: string) => [
  `CREATE TABLE accounts (account_id VARCHAR(32) NOT NULL PRIMARY KEY, country CHAR(2), plan VARCHAR(40) NOT NULL, stage VARCHAR(16) NOT NULL, balance_usd ${dec} NOT NULL, ib_code VARCHAR(32), created_at ${dt} NOT NULL, updated_at ${dt} NOT NULL)`,
  'CREATE INDEX accounts_updated ON accounts (updated_at, account_id)',
  `CREATE TABLE payments (payment_id VARCHAR(32) NOT NULL PRIMARY KEY, account_id VARCHAR(32) NOT NULL, kind VARCHAR(16) NOT NULL, amount_cents INTEGER NOT NULL, currency CHAR(3) NOT NULL, paid_at ${dt} NOT NULL, state VARCHAR(16) NOT NULL, updated_at ${dt} NOT NULL)`,
  'CREATE INDEX payments_updated ON payments (updated_at, payment_id)',
  'CREATE TABLE trades (trade_id INTEGER NOT NULL PRIMARY KEY, account_id VARCHAR(32) NOT NULL)',
];
const ACCOUNT_INSERT = 'INSERT INTO accounts (account_id, country, plan, stage, balance_usd, ib_code, created_at, updated_at) VALUES ';
const PAYMENT_INSERT = 'INSERT INTO payments VALUES ';

async function replicaDefinition(client: 'mysql' | 'postgres', url: string) {
  return example('replica-prop', (yaml) => yaml
    .replace(/^(\s+)client: sqlite\b/m, `$1client: ${client}`)
    .replace(/^(\s+)lookback: (\S+).*$/gm, `$1lookback: $2\n$1start: ${addDays(today, -3)}T00:00:00Z`), { REPLICA_PROP_URL: url });
}

async function rest(): Promise<Figures> {
  const clock = () => new Date(`${yesterday}T12:00:00Z`);
  const sandbox = await startSandbox({ port: 0, seed: 3, customers: N, clock, clients: [{ client_id: 'sandbox-client', client_secret: SECRET }] });
  const { def, cleanup } = await example('sandbox-casino', (yaml) => yaml.replace(/base_url: .*/, `base_url: ${sandbox.url}`)
    .replace(/^( +)mode: cursor\b.*$/gm, `$&\n$1start: ${sandbox.data.from}T00:00:00Z`), { SANDBOX_CLIENT_SECRET: SECRET });
  try {
    return await measure('REST (sandbox)', def, sandbox.data.from, sandbox.data.to, async () => {
      // The connector's pages alone: the same requests and JSON, nothing compared.
      const source = createSource(def, { clock: () => new Date(), logger: silentLogger(), redact: noRedaction });
      let n = 0;
      try {
        for (const entity of ['customers', 'transactions'] as Entity[]) {
          for await (const page of source.pages(def.streams[entity]!, { kind: 'cursor', from: `${sandbox.data.from}T00:00:00Z`, to: new Date().toISOString() })) n += page.length;
        }
      } finally {
        await source.close?.();
      }
      return n;
    });
  } finally {
    cleanup();
    await sandbox.close();
  }
}

async function mariadbReplica(): Promise<Figures> {
  const name = `ps_bench_reconcile_${process.pid}`;
  const admin = await mysql.createConnection(MYSQL_URL);
  await admin.query(`CREATE DATABASE ${name}`);
  const conn = await mysql.createConnection(`${MYSQL_URL}/${name}`);
  await conn.query("SET time_zone = '+00:00'");
  const { def, cleanup } = await replicaDefinition('mysql', `${MYSQL_URL}/${name}`);
  try {
    for (const sql of REPLICA_DDL('DATETIME(6)', 'DECIMAL(14,2)')) await conn.query(sql);
    const { accounts, payments } = replicaRows();
    for (let i = 0; i < N; i += 2000) {
      await conn.query(`${ACCOUNT_INSERT} ?`, [accounts.slice(i, i + 2000)]);
      await conn.query(`${PAYMENT_INSERT} ?`, [payments.slice(i, i + 2000)]);
    }
    return await measure('DB replica (MariaDB)', def, yesterday, yesterday, async () => {
      const [a] = await conn.query('SELECT * FROM accounts');
      const [p] = await conn.query('SELECT * FROM payments');
      return (a as unknown[]).length + (p as unknown[]).length;
    });
  } finally {
    cleanup();
    await conn.end();
    await admin.query(`DROP DATABASE ${name}`);
    await admin.end();
  }
}

/** A PostgreSQL schema of its own, filled by `fill`, dropped afterwards. */
async function pgSchema<T>(suffix: string, fill: (conn: pg.Client, url: string) => Promise<T>): Promise<T> {
  const name = `ps_bench_reconcile_${suffix}_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${name}`);
  const url = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${name}`)}`;
  const conn = new pg.Client({ connectionString: url });
  await conn.connect();
  try {
    return await fill(conn, url);
  } finally {
    await conn.end();
    await admin.query(`DROP SCHEMA ${name} CASCADE`);
    await admin.end();
  }
}

/** Multi-row INSERTs of rows in parts (positional parameters). */
async function insertRows(conn: pg.Client, head: string, rows: unknown[][]): Promise<void> {
  for (let i = 0; i < rows.length; i += 2000) {
    const part = rows.slice(i, i + 2000);
    let n = 0;
    const values = part.map((r) => `(${r.map(() => `$${++n}`).join(', ')})`).join(', ');
    await conn.query(`${head} ${values}`, part.flat());
  }
}

async function postgresReplica(): Promise<Figures> {
  return pgSchema('replica', async (conn, url) => {
    const { def, cleanup } = await replicaDefinition('postgres', url);
    try {
      for (const sql of REPLICA_DDL('timestamp(6)', 'numeric(14,2)')) await conn.query(sql);
      const { accounts, payments } = replicaRows();
      await insertRows(conn, ACCOUNT_INSERT, accounts);
      await insertRows(conn, PAYMENT_INSERT, payments);
      return await measure('DB replica (PostgreSQL)', def, yesterday, yesterday, async () => (await conn.query('SELECT * FROM accounts')).rows.length + (await conn.query('SELECT * FROM payments')).rows.length);
    } finally {
      cleanup();
    }
  });
}

async function warehouse(): Promise<Figures> {
  return pgSchema('warehouse', async (conn, url) => {
    const { def, cleanup } = await example('warehouse-casino', (yaml) => yaml.replace(/^(\s+)client: sqlite\b.*$/m, '$1client: postgres'), { WAREHOUSE_CASINO_URL: url });
    try {
      await conn.query(`CREATE TABLE dim_player (player_id VARCHAR(32) NOT NULL PRIMARY KEY, registered_at timestamp(6) NOT NULL, affiliate_code VARCHAR(32) NOT NULL, country CHAR(2), updated_at timestamp(6) NOT NULL)`);
      await conn.query(`CREATE TABLE fact_payment (payment_id VARCHAR(32) NOT NULL PRIMARY KEY, player_id VARCHAR(32) NOT NULL, payment_type VARCHAR(8) NOT NULL, amount_cents INTEGER NOT NULL, currency CHAR(3) NOT NULL, created_at timestamp(6) NOT NULL, status VARCHAR(16) NOT NULL, updated_at timestamp(6) NOT NULL)`);
      await conn.query('CREATE VIEW dw_players AS SELECT player_id, registered_at, affiliate_code, country, updated_at, CAST(updated_at AS date) AS modified_day FROM dim_player');
      await conn.query('CREATE VIEW dw_payments AS SELECT payment_id, player_id, payment_type, amount_cents / 100.0 AS amount, currency, created_at, status, updated_at, CAST(updated_at AS date) AS modified_day FROM fact_payment');
      const players: unknown[][] = [];
      const pays: unknown[][] = [];
      for (let i = 1; i <= N; i++) {
        const at = `${yesterday} ${String(8 + (i % 12)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00`;
        players.push([`W${i}`, at, `aff-${i % 40}`, 'GB', at]);
        pays.push([`PAY-${i}`, `W${i}`, 'DEP', 1000 + (i % 5000), 'USD', at, 'approved', at]);
      }
      await insertRows(conn, 'INSERT INTO dim_player VALUES', players);
      await insertRows(conn, 'INSERT INTO fact_payment VALUES', pays);
      return await measure('warehouse (PostgreSQL)', def, yesterday, yesterday, async () => (await conn.query('SELECT * FROM dw_players')).rows.length + (await conn.query('SELECT * FROM dw_payments')).rows.length);
    } finally {
      cleanup();
    }
  });
}

const figures: Figures[] = [];
for (const run of [rest, mariadbReplica, postgresReplica, warehouse]) {
  const f = await run();
  figures.push(f);
  const baseline = f.source_s + f.store_s;
  console.log(`${f.source}: ${f.rows} source rows; reconcile ${seconds(f.reconcile_s * 1000)} s (${Math.round(f.rows / f.reconcile_s)} rows/s, ok ${f.ok}); `
    + `baseline ${seconds(baseline * 1000)} s (source read ${seconds(f.source_s * 1000)} s + store SELECT ${seconds(f.store_s * 1000)} s, ${Math.round(f.rows / baseline)} rows/s); ${(f.reconcile_s / baseline).toFixed(1)}x the baseline`);
}
