/**
 * Several workers on one PostgreSQL store against the sandbox for a while, the partner changing
 * data all along: three worker processes, one killed (SIGKILL) half-way and replaced. Then the
 * run history shows no (partner, stream) ever ran twice at once, no window and no tick was missed,
 * and the store holds every record the partner has: nothing lost, nothing twice.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { packageRoot } from '../../src/paths.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { fromStoreTimestamp } from '../../src/store/values.js';
import type { Variant } from '../../src/types.js';
import { SANDBOX_SECRET, byKey, storedByKey } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';
import { startCli, type WorkerProcess } from './support/worker-process.js';

const PARTNERS: [string, Variant][] = [['sandbox-casino', 'igaming'], ['sandbox-prop', 'prop-trading']];
const TICK_S = 2;

interface RunRow { partner_id: string; stream: string; status: string; started_at: string; finished_at: string | null; window_from: string | null; window_to: string | null; error: string | null }

const postgres = STORES.find((b) => b.name === 'postgres');
(postgres ? describe : describe.skip)('several workers on one PostgreSQL store', function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let dir: string;
  let store: TestStore;
  const workers: WorkerProcess[] = [];

  before(async () => {
    sandbox = await startSandbox({ port: 0, seed: 21, customers: 30, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-multi-'));
    mkdirSync(join(dir, 'partners'));
    for (const [partner] of PARTNERS) {
      const yaml = readFileSync(join(packageRoot(), 'config', 'partners', `${partner}.yaml`), 'utf8')
        .replace(/base_url: .*/, `base_url: ${sandbox.url}`)
        .replace(/^(\s+)lookback: (\S+).*$/gm, `$1lookback: $2\n$1start: ${sandbox.data.from}T00:00:00Z`)
        .replace(/^(\s+)late_days: 2.*$/gm, `$1late_days: 2\n$1start: ${sandbox.data.from}`)
        // Deltas every 2 seconds, activity every 5: a while of worker life in seconds.
        .replace(/^(\s+)schedule: "\*\/4 \* \* \* \*".*$/gm, `$1schedule: "*/${TICK_S} * * * * *"`)
        .replace(/^(\s+)schedule: "15 0 \* \* \*".*$/gm, '$1schedule: "*/5 * * * * *"');
      writeFileSync(join(dir, 'partners', `${partner}.yaml`), yaml);
    }
    store = await postgres!.create();
  });
  after(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
    await store.drop();
  });

  it('no (partner, stream) ever ran twice at once, no window missed, nothing lost', async () => {
    const env = { SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, STORE_URL: store.url, LOG_LEVEL: 'info' };
    const spawnWorker = () => {
      const w = startCli(['--config', dir, 'worker', '--stop-timeout', '30'], env);
      workers.push(w);
      return w;
    };
    // The partner keeps changing: new customers with deposits, status changes of old deposits.
    let changes = 0;
    let changing = true;
    const mutate = (async () => {
      while (changing) {
        for (const [, variant] of PARTNERS) {
          const id = `live-${variant}-${changes}`;
          sandbox.data.upsertCustomer(variant, { customer_id: id, signup_date: new Date().toISOString(), affiliate_id: 'aff-101' });
          sandbox.data.upsertTransaction(variant, {
            transaction_id: `tx-${id}`, customer_id: id, transaction_type: variant === 'igaming' ? 'deposit' : 'challenge_fee', amount_currency: 25, currency: 'EUR',
            transaction_date: new Date().toISOString(), status: 'approved',
          });
          if (changes > 2) sandbox.data.upsertTransaction(variant, { transaction_id: `tx-live-${variant}-${changes - 2}`, status: 'reversed' });
        }
        changes += 1;
        await sleep(250);
      }
    })();

    const t0 = Date.now();
    const first = [spawnWorker(), spawnWorker(), spawnWorker()];
    for (const w of first) await w.waitFor((l) => l.event === 'worker_started');
    await sleep(8_000);
    const killedAt = new Date();
    first[0]?.child.kill('SIGKILL');
    await first[0]?.exited;
    await sleep(1_000);
    const replacement = spawnWorker();
    await replacement.waitFor((l) => l.event === 'worker_started');
    await sleep(8_000);
    changing = false;
    await mutate;
    // Long enough for every stream to tick again after the last change.
    await sleep(3 * TICK_S * 1000);
    const stopAt = new Date();
    const alive = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    for (const w of alive) w.child.kill('SIGTERM');
    for (const w of alive) assert.equal((await w.exited).code, 0, w.stderr());
    assert.ok(changes > 30, `${changes} rounds of changes`);

    const runs = ((await store.store.knex('runs').where({ kind: 'run' }).orderBy('started_at')) as RunRow[]).map((r) => ({
      ...r, started_at: fromStoreTimestamp(r.started_at) as string, finished_at: fromStoreTimestamp(r.finished_at),
    }));
    assert.ok(runs.every((r) => r.status !== 'running'), 'every run row is closed');
    for (const [partner] of PARTNERS) {
      for (const stream of ['customers', 'transactions', 'activity']) {
        const mine = runs.filter((r) => r.partner_id === partner && r.stream === stream);
        assert.ok(mine.length > (stream === 'activity' ? 3 : 8), `${partner}/${stream}: ${mine.length} runs`);
        // Never twice at once: each run ended before the next one started.
        for (let i = 1; i < mine.length; i++) {
          const prev = mine[i - 1] as RunRow;
          const next = mine[i] as RunRow;
          assert.ok(prev.finished_at !== null && prev.finished_at <= next.started_at, `${partner}/${stream}: the run started at ${next.started_at} overlaps the one started at ${prev.started_at} (finished ${prev.finished_at})`);
        }
        if (stream === 'activity') continue;
        // No window missed: each successful run's window starts at or before the previous one's end.
        const ok = mine.filter((r) => r.status === 'succeeded');
        for (let i = 1; i < ok.length; i++) {
          assert.ok((ok[i]?.window_from as string) <= (ok[i - 1]?.window_to as string), `${partner}/${stream}: gap between ${ok[i - 1]?.window_to} and ${ok[i]?.window_from}`);
        }
        // No tick missed (away from the start and the kill): a run started in each two-second tick,
        // or the tick found the previous run still going (a slow run makes the next tick skip, by design).
        const spans = mine.map((r) => ({ start: Date.parse(r.started_at), end: r.finished_at === null ? Infinity : Date.parse(r.finished_at) }));
        const from = Math.ceil((t0 + 6_000) / (TICK_S * 1000)) * TICK_S * 1000;
        for (let tick = from; tick < stopAt.getTime() - 2 * TICK_S * 1000; tick += TICK_S * 1000) {
          if (Math.abs(tick - killedAt.getTime()) < 2 * TICK_S * 1000) continue;
          const ran = spans.some((r) => r.start >= tick && r.start < tick + TICK_S * 1000);
          const busy = spans.some((r) => r.start < tick + 50 && r.end > tick - 50);
          assert.ok(ran || busy, `${partner}/${stream}: no run for the tick at ${new Date(tick).toISOString()}, and none was running then`);
        }
      }
    }
    // Each tick ran in exactly one worker: the others logged it as locked or done.
    const skipped = workers.flatMap((w) => w.lines()).filter((l) => l.skip === 'locked');
    assert.ok(skipped.length > 0);

    // Nothing lost, nothing twice: the store holds exactly the partner's customers and transactions.
    for (const [partner, variant] of PARTNERS) {
      for (const entity of ['customers', 'transactions'] as const) {
        const source = entity === 'customers' ? sandbox.data.customers(variant) : sandbox.data.transactions(variant);
        const expected = byKey(variant, entity, source);
        const stored = await storedByKey(store.store, partner, variant, entity);
        assert.equal(stored.size, expected.size, `${partner} ${entity}: ${stored.size} stored, ${expected.size} at the partner`);
        assert.deepEqual(stored, expected, `${partner} ${entity}`);
      }
    }
    assert.equal(Number(((await store.store.knex('waiting_records').count({ n: '*' })) as { n: number }[])[0]?.n), 0, 'no record waits for a customer');
  });
});
