/**
 * The example prop-trading replica definition (config/partners/replica-prop.yaml) against a real
 * MariaDB and PostgreSQL replica, through the sync job into the store: late rows at the
 * watermark, status changes, re-aggregated days, and a SIGKILL mid-run.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { runPartner } from '../../jobs/run-partner.js';
import { addDays, utcDay } from '../../jobs/windows.js';
import type { PartnerDefinition } from '../../src/config/definition.js';
import { loadDefinition } from '../../src/config/load-definitions.js';
import { silentLogger, noRedaction } from '../../src/log.js';
import { packageRoot } from '../../src/paths.js';
import { Loader } from '../../src/pipeline/load.js';
import { createSpecValidator } from '../../src/spec/validator.js';
import { readState } from '../../src/store/sync-state.js';
import type { Entity } from '../../src/types.js';
import { runCli } from '../support/cli.js';
import { storedByKey } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';

const validator = createSpecValidator();
const sqlite = STORES.find((s) => s.name === 'sqlite');
const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ENTITIES: Entity[] = ['customers', 'transactions', 'activity'];
let counter = 0;

interface Replica {
  client: 'mysql' | 'postgres';
  url: string;
  exec(sql: string, params?: unknown[]): Promise<void>;
  /** The replica's own clock plus `seconds`, as a zone-less UTC date-time with microseconds. */
  nowPlus(seconds: number): Promise<string>;
  drop(): Promise<void>;
}

async function mariadb(): Promise<Replica> {
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

async function postgres(): Promise<Replica> {
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

/** The example definition, pointed at a replica, with its first run covering the test data. */
async function replicaDefinition(replica: Replica, dir: string, pageSize = 5000): Promise<PartnerDefinition> {
  mkdirSync(join(dir, 'partners'), { recursive: true });
  const yaml = readFileSync(join(packageRoot(), 'config', 'partners', 'replica-prop.yaml'), 'utf8')
    .replace(/^(\s+)client: sqlite\b/m, `$1client: ${replica.client}`)
    .replace(/page_size: \d+/, `page_size: ${pageSize}`)
    .replace(/^(\s+)lookback: (\S+).*$/gm, `$1lookback: $2\n$1start: ${addDays(utcDay(new Date()), -10)}T00:00:00Z`);
  const file = join(dir, 'partners', 'replica-prop.yaml');
  writeFileSync(file, yaml);
  const loaded = await loadDefinition(file, { ...process.env, REPLICA_PROP_URL: replica.url });
  if (!loaded.definition) throw new Error(JSON.stringify(loaded.errors));
  return loaded.definition;
}

async function seed(replica: Replica, accounts: number): Promise<void> {
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

for (const make of [mariadb, postgres]) {
  describe(`the replica example over a real ${make === mariadb ? 'MariaDB' : 'PostgreSQL'} replica`, function () {
    this.timeout(120_000);
    let replica: Replica;
    let store: TestStore;
    let dir: string;
    beforeEach(async function () {
      if (!sqlite) this.skip();
      replica = await make();
      store = await (sqlite as NonNullable<typeof sqlite>).create();
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-replica-'));
    });
    afterEach(async () => {
      await replica?.drop();
      await store?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    const run = async (def: PartnerDefinition) => {
      const results = await runPartner({ loader: new Loader({ store: store.store, validator }), clock: store.store.clock, logger: silentLogger(), redact: noRedaction },
        def, { kind: 'run', scheduledFor: new Date() });
      assert.ok(results.every((r) => r.status === 'succeeded'), JSON.stringify(results));
      return results;
    };
    const stored = (entity: Entity) => storedByKey(store.store, 'replica-prop', 'prop-trading', entity);

    it('late rows at the watermark, status changes and re-aggregated days all reach the store', async () => {
      await seed(replica, 6);
      const def = await replicaDefinition(replica, dir);
      await run(def);
      assert.equal((await stored('customers')).size, 6);
      assert.equal((await stored('transactions')).size, 6);
      const activity = await stored('activity');
      assert.equal(activity.size, 6);
      const state = (await readState(store.store.knex, 'replica-prop', 'customers')) as { max_cursor: string; watermark: string };
      assert.match(state.max_cursor, /\.\d{6}Z$/, 'the cursor keeps microseconds');

      // Rows committed late with exactly the last cursor value seen and exactly the watermark;
      // a status change; a day re-aggregated.
      const plain = (iso: string) => iso.replace('T', ' ').replace('Z', '');
      await replica.exec('INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', ['A00000', null, null, null, 'DE', 'rapid', 'P2', '50000.00', 'IB-9', '2026-01-06 00:00:00', plain(state.max_cursor)]);
      await replica.exec('INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', ['A99999', null, null, null, 'DE', 'rapid', 'P1', '50000.00', 'IB-9', '2026-01-06 00:00:00', plain(state.watermark)]);
      await replica.exec('UPDATE payments SET state = ?, updated_at = ? WHERE payment_id = ?', ['reversed', await replica.nowPlus(-60), 'P2']);
      const yesterday = addDays(utcDay(new Date()), -1);
      await replica.exec('DELETE FROM trades WHERE trade_id = ?', [1]);
      await replica.exec('UPDATE trades SET profit_cents = ? WHERE trade_id = ?', [12345, 2]);
      await run(def);

      const customers = await stored('customers');
      assert.equal(customers.size, 8);
      assert.equal(customers.get('A00000')?.phase, 'phase_2');
      assert.ok(customers.has('A99999'));
      assert.equal((await stored('transactions')).get('P2')?.status, 'reversed');
      const day = await stored('activity');
      assert.equal(day.size, 5, 'the account whose only trade was deleted has no row that day any more');
      assert.ok(![...day.keys()].some((k) => k.startsWith(`${yesterday}|A00001|`)));
      assert.equal(day.get(`${yesterday}|A00002|XAUUSD|USD`)?.pnl, 123.45);
    });

    it('a replica sync killed with SIGKILL mid-run, then rerun, equals an uninterrupted run', async () => {
      await seed(replica, 400);
      await replicaDefinition(replica, dir, 20); // writes the definition the CLI reads
      const env = { REPLICA_PROP_URL: replica.url, STORE_URL: store.url, LOG_LEVEL: 'error' };
      const args = ['--config', dir, 'run', 'replica-prop'];
      // kill as soon as the first pages of customers are in
      const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'partner-sync.js'), ...args], { env: { ...process.env, ...env }, stdio: 'ignore' });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      for (let i = 0; i < 4000 && child.exitCode === null; i++) {
        const n = Number(((await store.store.knex('customers').count({ n: '*' })) as { n: number }[])[0]?.n ?? 0);
        if (n > 0) { child.kill('SIGKILL'); break; }
        await sleep(2);
      }
      assert.equal(await exited, null, 'the run was killed before it finished');
      const partial = (await stored('customers')).size;
      assert.ok(partial > 0 && partial < 400, `killed mid-customers (${partial} loaded)`);
      const rerun = await runCli(args, { env });
      assert.equal(rerun.code, 0, rerun.stderr);

      const reference = await (sqlite as NonNullable<typeof sqlite>).create();
      try {
        const again = await runCli(args, { env: { ...env, STORE_URL: reference.url } });
        assert.equal(again.code, 0, again.stderr);
        for (const entity of ENTITIES) {
          assert.deepEqual(await stored(entity), await storedByKey(reference.store, 'replica-prop', 'prop-trading', entity), entity);
        }
      } finally {
        await reference.drop();
      }
    });
  });
}
