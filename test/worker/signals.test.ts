/**
 * The worker as a process: SIGTERM during a run (clean stop within the bound, or abandoned past
 * it), a second signal, SIGHUP reloads, one worker per SQLite store. After each stop the rerun
 * leaves the store exactly as one uninterrupted run: nothing lost, nothing twice.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { packageRoot } from '../../src/paths.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { listRejects } from '../../src/store/rejects.js';
import type { Store } from '../../src/store/store.js';
import type { Entity } from '../../src/types.js';
import { runCli } from '../support/cli.js';
import { SANDBOX_SECRET, storedByKey } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';
import { startCli, type WorkerProcess } from './support/worker-process.js';

const ENTITIES: Entity[] = ['customers', 'transactions', 'activity'];

async function snapshot(store: Store): Promise<unknown> {
  const tables = await Promise.all(ENTITIES.map(async (e) => [...(await storedByKey(store, 'sandbox-casino', 'igaming', e)).entries()].sort()));
  const rejects = (await listRejects(store.knex, { partner: 'sandbox-casino' })).map((r) => [r.entity, r.payload, r.status]).sort();
  const waiting = (await store.knex('waiting_records').select('entity', 'record_key', 'record')).map((w) => JSON.stringify(w)).sort();
  return { tables, rejects, waiting };
}

const rowsIn = async (store: Store, table: string): Promise<number> => Number(((await store.knex(table).count({ n: '*' })) as { n: number }[])[0]?.n ?? 0);

/** Waits until the first stream has rows in the store: a run is under way. */
async function untilLoading(store: Store, worker: WorkerProcess): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    if ((await rowsIn(store, 'customers')) > 0) return;
    if (worker.child.exitCode !== null) throw new Error(`the worker ended: ${worker.stderr()}`);
    await sleep(5);
  }
  throw new Error('no rows loaded in time');
}

function writeConfig(sandbox: Sandbox, edit: (yaml: string) => string = (y) => y): { dir: string; file: string; write(edit?: (y: string) => string): void } {
  const dir = mkdtempSync(join(tmpdir(), 'partner-sync-worker-'));
  mkdirSync(join(dir, 'partners'));
  const file = join(dir, 'partners', 'sandbox-casino.yaml');
  const base = readFileSync(join(packageRoot(), 'config', 'partners', 'sandbox-casino.yaml'), 'utf8')
    .replace(/base_url: .*/, `base_url: ${sandbox.url}`)
    .replace(/per_page: 500/g, 'per_page: 5')
    .replace(/^(\s+)lookback: (\S+).*$/gm, `$1lookback: $2\n$1start: ${sandbox.data.from}T00:00:00Z`)
    .replace(/^(\s+)late_days: 2.*$/gm, `$1late_days: 2\n$1start: ${sandbox.data.from}`)
    // Every minute: the day's window is the same for the worker's catch-up and a `run` now.
    .replace(/^(\s+)schedule: .*$/gm, '$1schedule: "* * * * *"');
  const write = (more: (y: string) => string = (y) => y) => writeFileSync(file, more(edit(base)));
  write();
  return { dir, file, write };
}

for (const backend of STORES) {
  describe(`worker process signals on ${backend.name}`, function () {
    this.timeout(180_000);
    let sandbox: Sandbox;
    let config: ReturnType<typeof writeConfig>;
    const stores: TestStore[] = [];
    const workers: WorkerProcess[] = [];
    const env = (s: TestStore) => ({ SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, LOG_LEVEL: 'info', STORE_URL: s.url });
    let reference: unknown;

    before(async () => {
      sandbox = await startSandbox({ port: 0, seed: 11, customers: 40, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      sandbox.data.upsertCustomer('igaming', { customer_id: 'broken', signup_date: '2026-02-30T00:00:00Z', affiliate_id: 'aff-101' }, `${sandbox.data.to}T12:00:00Z`);
      sandbox.data.upsertTransaction('igaming', { transaction_id: 'orphan', customer_id: 'nobody', transaction_type: 'deposit', amount_currency: 10, currency: 'EUR', transaction_date: `${sandbox.data.to}T12:00:00Z`, status: 'approved' }, `${sandbox.data.to}T12:00:00Z`);
      config = writeConfig(sandbox);
      const s = await newStore();
      const r = await runCli(['--config', config.dir, 'run', 'sandbox-casino', '--json'], { env: env(s) });
      assert.equal(r.code, 0, r.stderr + r.stdout);
      reference = await snapshot(s.store);
    });
    afterEach(() => {
      sandbox.faults.latencyMs = 0;
      for (const w of workers.splice(0)) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    });
    after(async () => {
      await sandbox.close();
      rmSync(config.dir, { recursive: true, force: true });
      for (const s of stores) await s.drop();
    });
    const newStore = async () => {
      const s = await backend.create();
      stores.push(s);
      return s;
    };
    const worker = (s: TestStore, ...args: string[]) => {
      const w = startCli(['--config', config.dir, 'worker', ...args], env(s));
      workers.push(w);
      return w;
    };
    const rerun = async (s: TestStore) => {
      const r = await runCli(['--config', config.dir, 'run', 'sandbox-casino', '--json'], { env: env(s) });
      assert.equal(r.code, 0, r.stderr + r.stdout);
    };

    it('SIGTERM during a run: the run finishes within the bound, exit 0; the rerun finds nothing lost, nothing twice', async () => {
      const s = await newStore();
      sandbox.faults.latencyMs = 15;
      const w = worker(s, '--stop-timeout', '60');
      await untilLoading(s.store, w);
      w.child.kill('SIGTERM');
      const { code } = await w.exited;
      assert.equal(code, 0, w.stderr());
      const lines = w.lines();
      assert.ok(lines.some((l) => l.event === 'worker_stopping' && /SIGTERM: stopping; no new runs; waiting up to 60 s for sandbox-casino\/customers/.test(String(l.message))), w.stderr());
      assert.ok(lines.some((l) => l.event === 'worker_stopped' && l.level === 'info'));
      // The runs it was in finished; none started after the signal (SQLite runs one stream at a
      // time, so the others were still waiting; PostgreSQL runs them side by side).
      const runs = (await s.store.knex('runs').orderBy('started_at')) as { stream: string; status: string }[];
      assert.ok(runs.every((r) => r.status === 'succeeded'), JSON.stringify(runs));
      if (backend.name === 'sqlite') assert.deepEqual(runs.map((r) => r.stream), ['customers']);
      else assert.ok(runs.length <= 3);
      await rerun(s);
      assert.deepEqual(await snapshot(s.store), reference);
    });

    it('SIGTERM past the bound: the run is abandoned, its batch rolled back, exit 1 within the bound; the rerun finds nothing lost, nothing twice', async () => {
      const s = await newStore();
      sandbox.faults.latencyMs = 250;
      const w = worker(s, '--stop-timeout', '1');
      await untilLoading(s.store, w);
      const signalled = Date.now();
      w.child.kill('SIGTERM');
      const { code } = await w.exited;
      const took = Date.now() - signalled;
      assert.equal(code, 1, w.stderr());
      assert.ok(took < 4_000, `exited ${took} ms after SIGTERM`);
      assert.ok(w.lines().some((l) => l.event === 'worker_stopped' && l.level === 'error' && /abandoned/.test(String(l.message))), w.stderr());
      const left = (await s.store.knex('runs').where({ stream: 'customers' }).first()) as { status: string; error: string | null };
      assert.equal(left.status, 'failed');
      assert.match(left.error ?? '', /abandoned/);
      sandbox.faults.latencyMs = 0;
      await rerun(s);
      assert.deepEqual(await snapshot(s.store), reference);
    });

    it('a second signal exits at once', async () => {
      const s = await newStore();
      sandbox.faults.latencyMs = 250;
      const w = worker(s, '--stop-timeout', '120');
      await untilLoading(s.store, w);
      w.child.kill('SIGINT');
      await w.waitFor((l) => l.event === 'worker_stopping');
      const second = Date.now();
      w.child.kill('SIGINT');
      const { code } = await w.exited;
      assert.equal(code, 1);
      assert.ok(Date.now() - second < 1_500, 'exited at once');
      assert.match(w.stderr(), /second SIGINT: exiting now/);
      sandbox.faults.latencyMs = 0;
      // The rerun is the next worker: the killed one's runs are not counted as done, their rows
      // left `running` are closed when it takes each stream's lock, and it catches up at once.
      assert.ok((await s.store.knex('runs').where({ status: 'running' })).length >= 1);
      const next = worker(s, '--stop-timeout', '30');
      await next.waitFor((l) => /closed 1 run\(s\) left running/.test(String(l.message)));
      for (let i = 0; i < 600 && JSON.stringify(await snapshot(s.store)) !== JSON.stringify(reference); i++) await sleep(50);
      next.child.kill('SIGTERM');
      assert.equal((await next.exited).code, 0, next.stderr());
      assert.deepEqual(await snapshot(s.store), reference);
      assert.deepEqual(await s.store.knex('runs').where({ status: 'running' }), []);
    });

    it('logs are JSON lines with partner, stream and run id, and no secret', async () => {
      const s = await newStore();
      const w = worker(s, '--stop-timeout', '60');
      await w.waitFor((l) => l.stream === 'activity' && /run (succeeded|failed|partial)/.test(String(l.message)));
      w.child.kill('SIGTERM');
      assert.equal((await w.exited).code, 0, w.stderr());
      const raw = w.stderr().trim().split('\n');
      assert.ok(raw.every((l) => l.startsWith('{')), 'every line is JSON');
      const runLines = w.lines().filter((l) => /^run (started|succeeded)/.test(String(l.message)));
      // Every stream ran once; a stream whose schedule (every minute) came round again before the
      // signal ran twice: each start has its end either way.
      const perStream = new Map<string, { started: number; succeeded: number }>();
      for (const l of runLines) {
        const c = perStream.get(String(l.stream)) ?? { started: 0, succeeded: 0 };
        if (/^run started/.test(String(l.message))) c.started++;
        else c.succeeded++;
        perStream.set(String(l.stream), c);
      }
      assert.deepEqual([...perStream.keys()].sort(), ['activity', 'customers', 'transactions'], runLines.map((l) => `${String(l.stream)} ${String(l.message)}`).join('\n'));
      for (const [stream, c] of perStream) assert.ok(c.started >= 1 && c.started === c.succeeded, `${stream}: ${c.started} started, ${c.succeeded} succeeded`);
      for (const l of runLines) assert.ok(l.partner === 'sandbox-casino' && typeof l.stream === 'string' && typeof l.run_id === 'string', JSON.stringify(l));
      assert.ok(!w.stderr().includes(SANDBOX_SECRET));
      assert.ok(!/access_token"?\s*[:=]\s*"?[A-Za-z0-9]/.test(w.stderr()));
    });
  });
}

describe('worker process on a SQLite store: one worker per file, SIGHUP reloads', function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let config: ReturnType<typeof writeConfig>;
  let dir: string;
  const workers: WorkerProcess[] = [];
  before(async () => {
    sandbox = await startSandbox({ port: 0, seed: 3, customers: 10, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
    config = writeConfig(sandbox);
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-worker-store-'));
  });
  after(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await sandbox.close();
    rmSync(config.dir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it('a second worker on the same SQLite file refuses to start with a clear message; after the first stops, one starts', async () => {
    const env = { SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, STORE_URL: `sqlite:${join(dir, 'one.sqlite')}` };
    const first = startCli(['--config', config.dir, 'worker'], env);
    workers.push(first);
    await first.waitFor((l) => l.event === 'worker_started');
    const second = startCli(['--config', config.dir, 'worker'], env);
    workers.push(second);
    const { code } = await second.exited;
    assert.equal(code, 2);
    assert.match(second.stderr(), new RegExp(`another partner-sync worker is running on the SQLite store .*one\\.sqlite \\(pid ${first.child.pid} on host .*\\); a SQLite store takes one worker`));
    assert.match(second.stderr(), /use a PostgreSQL store/);
    // A killed worker leaves no lock behind: the operating system drops it.
    first.child.kill('SIGKILL');
    await first.exited;
    const third = startCli(['--config', config.dir, 'worker'], env);
    workers.push(third);
    await third.waitFor((l) => l.event === 'worker_started');
    third.child.kill('SIGTERM');
    assert.equal((await third.exited).code, 0, third.stderr());
  });

  it('SIGHUP: an invalid file keeps the running definition and logs why; a valid change applies', async () => {
    const env = { SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, STORE_URL: `sqlite:${join(dir, 'hup.sqlite')}` };
    const w = startCli(['--config', config.dir, 'worker'], env);
    workers.push(w);
    await w.waitFor((l) => l.event === 'worker_started');
    config.write((y) => y.replace(/per_page: 5/, 'per_page: 5000'));
    w.child.kill('SIGHUP');
    const invalid = await w.waitFor((l) => l.event === 'definition_error');
    assert.equal(invalid.level, 'error');
    assert.match(String(invalid.message), /reload: invalid definition: .*sandbox-casino\.yaml: streams\.customers\.pagination\.per_page/);
    await w.waitFor((l) => l.event === 'definition_kept' && l.partner === 'sandbox-casino');
    await w.waitFor((l) => l.event === 'definitions_reloaded' && /added none; removed none; rescheduled none/.test(String(l.message)));
    config.write((y) => y.replace(/schedule: "\* \* \* \* \*"/, 'schedule: "*/2 * * * *"'));
    w.child.kill('SIGHUP');
    await w.waitFor((l) => l.event === 'definitions_reloaded' && /rescheduled sandbox-casino\/customers/.test(String(l.message)));
    assert.equal(w.child.exitCode, null, 'still running');
    w.child.kill('SIGTERM');
    assert.equal((await w.exited).code, 0, w.stderr());
    config.write();
  });

  it('runs the commission job after every loaded batch; SIGHUP re-reads the plans, an invalid plans file keeps the ones in force', async () => {
    config.write();
    const plansFile = join(config.dir, 'commissions.yaml');
    const plans = readFileSync(join(packageRoot(), 'config', 'commissions.yaml'), 'utf8');
    writeFileSync(plansFile, plans);
    const url = `sqlite:${join(dir, 'plans.sqlite')}`;
    try {
      const w = startCli(['--config', config.dir, 'worker'], { SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, STORE_URL: url });
      workers.push(w);
      // The catch-up runs load the sandbox's deposits: the job books first-deposit CPAs.
      await w.waitFor((l) => /^commissions: [1-9]\d* lines/.test(String(l.message)) && l.partner === 'sandbox-casino', 60_000);

      writeFileSync(plansFile, plans.replace('kind: cpa_ftd', 'kind: cpa_first'));
      w.child.kill('SIGHUP');
      const invalid = await w.waitFor((l) => l.event === 'plans_error');
      assert.match(String(invalid.message), /reload: invalid commission plans: .*commissions\.yaml: plans\.0\.kind \(line \d+\): /);
      const kept = await w.waitFor((l) => l.event === 'plans_kept');
      assert.match(String(kept.message), /the commission plans in force stay \(\d+ plan\(s\)\)/);

      // A valid file (the same terms: a run in between must not change what is owed) applies.
      writeFileSync(plansFile, plans + '\n# reviewed\n');
      w.child.kill('SIGHUP');
      const applied = await w.waitFor((l) => l.event === 'plans_reloaded');
      assert.ok(Array.isArray(applied.plans) && applied.plans.includes('casino-cpa-2026'));
      w.child.kill('SIGTERM');
      assert.equal((await w.exited).code, 0, w.stderr());

      // What the worker booked is what a rebuild from history gives.
      const recomputed = await runCli(['--config', config.dir, '--store', url, 'commissions', 'recompute', '--partner', 'sandbox-casino']);
      assert.equal(recomputed.code, 0, recomputed.stdout + recomputed.stderr);
      assert.match(recomputed.stdout, /agrees with a rebuild from history, to the cent/);
      const ledger = await runCli(['--config', config.dir, '--store', url, '--json', 'commissions']);
      assert.ok(Number((JSON.parse(ledger.stdout) as { total_usd: string }).total_usd) > 0);
    } finally {
      rmSync(plansFile, { force: true });
    }
  });
});
