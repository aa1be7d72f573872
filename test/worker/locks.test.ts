/**
 * Stream locks across workers: PostgreSQL advisory locks (exclusive, released with the holder's
 * session, per store schema) and the one-worker-per-file lock of a SQLite store.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { noRedaction, silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/store.js';
import { acquireInstanceLock, InstanceLockedError } from '../../src/worker/instance-lock.js';
import { advisoryLocks, localLocks } from '../../src/store/stream-locks.js';
import { startWorker } from '../../src/worker/worker.js';
import { STORES } from '../support/stores.js';

const postgres = STORES.find((b) => b.name === 'postgres');

(postgres ? describe : describe.skip)('PostgreSQL advisory stream locks', function () {
  this.timeout(60_000);

  it('one holder at a time; free again on release, and when the holder\'s session ends', async () => {
    const s = await postgres!.create();
    const other = await postgres!.create();
    const a = advisoryLocks({ connectionString: s.url, logger: silentLogger() });
    const b = advisoryLocks({ connectionString: s.url, logger: silentLogger() });
    const elsewhere = advisoryLocks({ connectionString: other.url, logger: silentLogger() });
    try {
      const lease = await a.tryAcquire('sandbox-casino/customers');
      assert.ok(lease?.held);
      assert.equal(await b.tryAcquire('sandbox-casino/customers'), undefined);
      const otherStream = await b.tryAcquire('sandbox-casino/transactions');
      assert.ok(otherStream, 'another stream is another lock');
      const otherSchema = await elsewhere.tryAcquire('sandbox-casino/customers');
      assert.ok(otherSchema, 'a store in another schema has its own locks');
      await lease?.release();
      const again = await b.tryAcquire('sandbox-casino/customers');
      assert.ok(again);
      // The holder's session killed (a worker's connection dropped): the lock goes with it.
      const admin = new pg.Client({ connectionString: s.url });
      await admin.connect();
      await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'partner-sync worker lock sandbox-casino/customers'");
      await admin.end();
      for (let i = 0; i < 100 && again?.held; i++) await sleep(20);
      assert.equal(again?.held, false);
      assert.ok(await a.tryAcquire('sandbox-casino/customers'));
      await otherStream?.release();
      await otherSchema?.release();
    } finally {
      await a.close();
      await b.close();
      await elsewhere.close();
      await s.drop();
      await other.drop();
    }
  });

  it('a released lock\'s connection takes the next lock; one lost while kept is replaced; close ends them', async () => {
    const s = await postgres!.create();
    const locks = advisoryLocks({ connectionString: s.url, logger: silentLogger() });
    const admin = new pg.Client({ connectionString: s.url });
    await admin.connect();
    // The backend of the session named after the lock it holds.
    const holder = async (name: string): Promise<number | undefined> =>
      (await admin.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [`partner-sync worker lock ${name}`])).rows[0]?.pid;
    const alive = async (pids: number[]): Promise<number> =>
      Number((await admin.query<{ n: string }>('select count(*) as n from pg_stat_activity where pid = any($1::int[])', [pids])).rows[0]?.n);
    try {
      const first = await locks.tryAcquire('reuse/customers');
      const pid = await holder('reuse/customers');
      assert.ok(first?.held && pid);
      await first.release();
      assert.equal(await holder('reuse/customers'), undefined, 'a released lock no longer names the session');
      const second = await locks.tryAcquire('reuse/transactions');
      assert.ok(second?.held);
      assert.equal(await holder('reuse/transactions'), pid, 'the next lock is taken on the kept connection');
      // The first lease, released again, neither frees nor disowns the connection's new lock.
      await first.release();
      assert.equal(first.held, false);
      assert.ok(second.held);
      const meanwhile = advisoryLocks({ connectionString: s.url, logger: silentLogger() });
      assert.equal(await meanwhile.tryAcquire('reuse/transactions'), undefined);
      await meanwhile.close();
      // Its lock is free again for another worker once released, though the session stays.
      await second.release();
      const elsewhere = advisoryLocks({ connectionString: s.url, logger: silentLogger() });
      const taken = await elsewhere.tryAcquire('reuse/transactions');
      assert.ok(taken?.held);
      await elsewhere.close();

      // The kept session ends (a server restart, a cut network): the next lock opens a new one.
      await admin.query('select pg_terminate_backend($1)', [pid]);
      for (let i = 0; i < 100 && (await alive([pid])) > 0; i++) await sleep(20);
      const third = await locks.tryAcquire('reuse/activity');
      assert.ok(third?.held, 'a lock is still taken after its kept connection was lost');
      const pid3 = await holder('reuse/activity');
      assert.ok(pid3 && pid3 !== pid);
      await third.release();
      await locks.close();
      for (let i = 0; i < 100 && (await alive([pid3])) > 0; i++) await sleep(20);
      assert.equal(await alive([pid3]), 0, 'close ends the kept connections');
    } finally {
      await locks.close();
      await admin.end();
      await s.drop();
    }
  });

  it('a SIGKILLed process holding a lock frees it', async () => {
    const s = await postgres!.create();
    const locks = advisoryLocks({ connectionString: s.url, logger: silentLogger() });
    const script = `
      import pg from 'pg';
      const c = new pg.Client({ connectionString: process.env.URL });
      await c.connect();
      await c.query("select pg_advisory_lock(hashtextextended(coalesce(current_schema(), '') || ':partner-sync:' || 'p/customers', 0))");
      process.stdout.write('locked\\n');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, URL: s.url }, stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() });
    try {
      await new Promise<void>((resolve) => child.stdout.on('data', () => resolve()));
      assert.equal(await locks.tryAcquire('p/customers'), undefined);
      child.kill('SIGKILL');
      let lease;
      for (let i = 0; i < 200 && !lease; i++) {
        lease = await locks.tryAcquire('p/customers');
        if (!lease) await sleep(25);
      }
      assert.ok(lease, 'the lock came free after the kill');
    } finally {
      child.kill('SIGKILL');
      await locks.close();
      await s.drop();
    }
  });
});

describe('SQLite: one worker per store file', () => {
  it('a second worker on the same file is refused with a message naming the holder; free after stop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'partner-sync-instance-'));
    const file = join(dir, 'store.sqlite');
    const store = await openStore({ url: `sqlite:${file}` });
    try {
      const w1 = await startWorker({ store, definitions: [], logger: silentLogger(), redact: noRedaction });
      const second = await openStore({ url: `sqlite:${file}` });
      await assert.rejects(startWorker({ store: second, definitions: [], logger: silentLogger(), redact: noRedaction }), (error: Error) => {
        assert.ok(error instanceof InstanceLockedError);
        assert.match(error.message, new RegExp(`another partner-sync worker is running on the SQLite store .*store\\.sqlite \\(pid ${process.pid} on host `));
        return true;
      });
      await w1.stop(1_000);
      const w2 = await startWorker({ store: second, definitions: [], logger: silentLogger(), redact: noRedaction });
      await w2.stop(1_000);
      await second.close();
      const lock = acquireInstanceLock(file, new Date('2026-11-22T10:00:00Z'));
      lock.release();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('in-process locks exclude within one worker', async () => {
    const locks = localLocks();
    const lease = await locks.tryAcquire('a/customers');
    assert.equal(await locks.tryAcquire('a/customers'), undefined);
    await lease?.release();
    assert.ok(await locks.tryAcquire('a/customers'));
  });
});
