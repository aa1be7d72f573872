/**
 * A store that fills up under a load, and runs their process never closed. What a user must see:
 * one short line naming the cause and what was being written (never a statement with its values),
 * no fraud flags announced for a transaction that did not commit, the rerun loading exactly what
 * the file holds, and no run left `running` once it is over.
 *
 * - SQLITE_FULL from `PRAGMA max_page_count` on the store's own connection (the same error path
 *   as a full disk), in-process;
 * - a real full disk: a 2 MiB tmpfs (mounting needs root: skipped otherwise, saying so);
 * - a SIGKILLed import on both stores: its run is closed as abandoned by the next run.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Readable } from 'node:stream';
import knexFactory from 'knex';
import { importFile } from '../../jobs/import-file.js';
import { parseFraudConfig } from '../../src/fraud/config.js';
import { ABANDONED_RUN, finishRun, startRun, emptyCounts } from '../../src/store/runs.js';
import { openStore, type Store } from '../../src/store/store.js';
import { describeStatementError, statementActivity } from '../../src/store/store-errors.js';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../support/cli.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { STORES, fixedClock } from '../support/stores.js';
import { captureLogger } from '../worker/support/log-capture.js';

const CUSTOMERS = 6000;
/** Two customers per e-mail: every pair is a duplicate_identity flag once it commits. */
const customersFile = (dir: string, n = CUSTOMERS): string => {
  const file = join(dir, 'customers.ndjson');
  const lines = Array.from({ length: n }, (_, i) => JSON.stringify({
    customer_id: `C-${i}`, signup_date: '2026-11-20T09:00:00Z', affiliate_id: `AFF-${i % 50}`, click_id: `clk-${i}`,
    country_code: 'GB', email: `user${Math.floor(i / 2)}@example.com`, first_name: `Name${i}`, last_name: `Last${i}`,
  }));
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
};
const FRAUD = 'rules:\n  duplicate_identity:\n    min_accounts: 2\n';
const SHORT_FULL = /^store is full: database or disk is full \(SQLITE_FULL\) while (writing [a-z_]+|committing a transaction)$/;

async function runsOf(store: Store): Promise<{ id: string; status: string; error: string | null }[]> {
  return store.knex('runs').orderBy('started_at').select('id', 'status', 'error');
}
const count = async (store: Store, table: string): Promise<number> => Number(((await store.knex(table).count({ n: '*' })) as { n: number | string }[])[0]?.n ?? 0);

describe('store errors in one line', () => {
  it('names the cause, the code and what was written; never the statement', () => {
    const sql = 'insert into "transactions" ("amount_currency", "customer_id") values (?, ?), (?, ?) on conflict do nothing';
    assert.equal(describeStatementError('database or disk is full', 'SQLITE_FULL', sql), 'store is full: database or disk is full (SQLITE_FULL) while writing transactions');
    assert.equal(describeStatementError('could not extend file "base/1/2": No space left on device', '53100', 'update "runs" set "status" = $1'),
      'store is full: could not extend file "base/1/2": No space left on device (53100) while writing runs');
    assert.equal(describeStatementError('UNIQUE constraint failed: customers.id', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'select * from "customers"'),
      'UNIQUE constraint failed: customers.id (SQLITE_CONSTRAINT_PRIMARYKEY) while reading customers');
    assert.equal(statementActivity('COMMIT;'), 'committing a transaction');
    assert.equal(statementActivity('delete from "gaming_activity" where "partner_id" = ?'), 'writing gaming_activity');
    assert.equal(statementActivity('PRAGMA foo'), 'running a statement');
  });

  it('a failed statement through the store: no value of the query in the message, the statement kept for DEBUG', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'partner-sync-stmt-'));
    const store = await openStore({ url: `sqlite:${join(dir, 's.sqlite')}` });
    try {
      const error = await store.knex('customers').insert({ partner_id: 'acme', customer_id: 'secret-value@example.com', no_such_column: 1 }).then(() => undefined, (e: unknown) => e as Error & { statement?: string });
      assert.ok(error);
      assert.equal(error.message, 'table customers has no column named no_such_column (SQLITE_ERROR) while writing customers');
      assert.doesNotMatch(error.message, /secret-value/);
      assert.match(error.statement ?? '', /^insert into `customers` .*values \(\?, \?, \?\)$/);
      assert.doesNotMatch(error.statement ?? '', /secret-value/);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('disk full on SQLite (PRAGMA max_page_count on the store connection)', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'partner-sync-full-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('fails with one short line, announces no flag, closes its run; the rerun loads all, no run stays running', async () => {
    const file = customersFile(dir);
    const store = await openStore({ url: `sqlite:${join(dir, 'store.sqlite')}`, clock: fixedClock('2026-11-22T10:00:00.000Z') });
    const { config } = parseFraudConfig(FRAUD, 'fraud.yaml');
    const logs = captureLogger();
    const newLoader = () => loaderWithEveryJob(store, { logger: logs.logger, fraud: config });
    const request = { partner: 'acme', variant: 'igaming' as const, entity: 'customers' as const, file, stdin: Readable.from([]) };
    try {
      // Room for about half the file: one pool connection, so the pragma holds for every statement of the run.
      const pages = Number((await store.knex.raw('PRAGMA page_count') as { page_count: number }[])[0]?.page_count);
      await store.knex.raw(`PRAGMA max_page_count = ${pages + 150}`);
      const failed = await importFile({ store, loader: newLoader() }, request).then(() => undefined, (e: unknown) => e as Error);
      assert.ok(failed, 'the import must fail on a full store');
      assert.match(failed.message, SHORT_FULL, failed.stack);
      assert.doesNotMatch(failed.message, /example\.com|C-\d/);
      const [first] = await runsOf(store);
      assert.equal(first?.status, 'failed');
      assert.equal(first?.error, failed.message);
      assert.equal(await count(store, 'fraud_flags'), 0);
      assert.deepEqual(logs.lines.filter((l) => l.event === 'fraud_flags'), [], 'no flags announced for transactions that rolled back');

      await store.knex.raw('PRAGMA max_page_count = 1073741823');
      const summary = await importFile({ store, loader: newLoader() }, request);
      assert.equal(summary.counts.loaded, CUSTOMERS);
      assert.equal(await count(store, 'customers'), CUSTOMERS);
      assert.equal(await count(store, 'fraud_flags'), CUSTOMERS / 2);
      const opened = logs.lines.filter((l) => l.event === 'fraud_flags').reduce((n, l) => n + Number(l.opened), 0);
      assert.equal(opened, CUSTOMERS / 2, 'the flags announced are the flags committed');
      assert.deepEqual((await runsOf(store)).map((r) => r.status), ['failed', 'succeeded']);
    } finally {
      await store.close();
    }
  });

  it('a run whose close could not be written is closed as abandoned by the next run of its stream in the same process', async () => {
    const store = await openStore({ url: `sqlite:${join(dir, 'store.sqlite')}`, clock: fixedClock('2026-11-22T10:00:00.000Z') });
    const broken = knexFactory({ client: 'better-sqlite3', connection: { filename: join(dir, 'missing', 'x.sqlite') }, useNullAsDefault: true });
    try {
      const first = await startRun(store.knex, { partner: 'acme', stream: 'customers', kind: 'import' }, store.now());
      // A second run while the first is open in this process leaves it alone: it is still going.
      const second = await startRun(store.knex, { partner: 'acme', stream: 'customers', kind: 'import' }, store.now());
      assert.deepEqual((await runsOf(store)).map((r) => r.status), ['running', 'running']);
      // The first one's close fails (its store is gone under it).
      await assert.rejects(finishRun(broken, first, { status: 'failed', counts: emptyCounts(), durationMs: 1 }, store.now()));
      await finishRun(store.knex, second, { status: 'succeeded', counts: emptyCounts(), durationMs: 1 }, store.now());
      // Another stream's run does not touch it; the next run of its stream does.
      await startRun(store.knex, { partner: 'acme', stream: 'transactions', kind: 'import' }, store.now());
      assert.equal((await store.knex('runs').where({ id: first }).first('status')).status, 'running');
      await startRun(store.knex, { partner: 'acme', stream: 'customers', kind: 'import' }, store.now());
      const row = await store.knex('runs').where({ id: first }).first('status', 'error', 'finished_at');
      assert.deepEqual(row, { status: 'failed', error: ABANDONED_RUN, finished_at: '2026-11-22T10:00:00.000000Z' });
    } finally {
      await broken.destroy();
      await store.close();
    }
  });
});

/** Whether this process may mount a tmpfs (root, and a kernel that lets it). */
function tryMount(at: string, size: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', at], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('disk full on SQLite (a real 2 MiB tmpfs)', function () {
  this.timeout(120_000);
  let dir: string;
  let mnt: string;
  let mounted = false;
  before(function () {
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-tmpfs-'));
    mnt = join(dir, 'mnt');
    mkdirSync(mnt);
    mounted = tryMount(mnt, '2m');
    if (!mounted) {
      console.log('      skipped: mounting a tmpfs is not permitted here (needs root); the max_page_count tests cover the same error path');
      this.skip();
    }
  });
  after(() => {
    if (mounted) execFileSync('umount', [mnt]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('exit 1 with one short line and no flag warning; after room is made the rerun loads all and no run is running', async () => {
    const file = customersFile(dir, 12_000);
    const config = join(dir, 'config');
    mkdirSync(config);
    writeFileSync(join(config, 'fraud.yaml'), FRAUD);
    const env = { STORE_URL: `sqlite:${join(mnt, 'store.sqlite')}`, PARTNER_SYNC_IMPORT_BATCH: '1000', LOG_LEVEL: 'info', DEBUG: '' };
    const args = ['--config', config, 'import', 'acme', '--variant', 'igaming', '--entity', 'customers', file];
    const full = await runCli(args, { env });
    assert.equal(full.code, 1, full.stderr);
    const errors = full.stderr.split('\n').filter((l) => l.startsWith('partner-sync: '));
    assert.equal(errors.length, 1, full.stderr);
    assert.match((errors[0] as string).slice('partner-sync: '.length), SHORT_FULL);
    assert.doesNotMatch(full.stderr, /flag\(s\) opened/);
    assert.doesNotMatch(full.stderr, /example\.com/);

    execFileSync('mount', ['-o', 'remount,size=64m', mnt]);
    const rerun = await runCli(args, { env });
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.match(rerun.stderr, /fraud: 6000 flag\(s\) opened/);
    const store = await openStore({ url: env.STORE_URL });
    try {
      assert.equal(await count(store, 'customers'), 12_000);
      assert.equal(await count(store, 'fraud_flags'), 6000);
      const runs = await runsOf(store);
      assert.deepEqual(runs.map((r) => r.status), ['failed', 'succeeded']);
      assert.match(runs[0]?.error ?? '', SHORT_FULL);
    } finally {
      await store.close();
    }
  });
});

for (const backend of STORES) {
  describe(`a killed import's run on ${backend.name}`, function () {
    this.timeout(240_000);
    it('is closed as failed (abandoned) by the next run of the stream, which loads all', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'partner-sync-kill-'));
      const t = await backend.create();
      try {
        const file = customersFile(dir, 12_000);
        const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'partner-sync.js'), 'import', 'acme', '--variant', 'igaming', '--entity', 'customers', file], {
          env: { ...process.env, STORE_URL: t.url, PARTNER_SYNC_IMPORT_BATCH: '1000' }, stdio: 'ignore',
        });
        const exited = new Promise((resolve) => child.on('exit', resolve));
        while ((await count(t.store, 'customers')) === 0) await sleep(10);
        child.kill('SIGKILL');
        await exited;
        assert.deepEqual((await runsOf(t.store)).map((r) => r.status), ['running'], 'the killed run is left running');
        const rerun = await runCli(['import', 'acme', '--variant', 'igaming', '--entity', 'customers', file], { env: { STORE_URL: t.url } });
        assert.equal(rerun.code, 0, rerun.stderr);
        assert.equal(await count(t.store, 'customers'), 12_000);
        const runs = await runsOf(t.store);
        assert.deepEqual(runs.map((r) => [r.status, r.error]), [['failed', ABANDONED_RUN], ['succeeded', null]]);
      } finally {
        await t.drop();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
