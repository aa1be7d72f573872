/**
 * A store outage under a running worker, on injected time against the sandbox partner and a real
 * PostgreSQL store made unreachable for this worker alone (a local proxy in front of the server
 * refuses connections, as a stopped server does). The 01:44 ticks fail to take their stream
 * locks; when the store answers again (20 s later) they run once, long before the 01:48 ticks;
 * meanwhile the store is asked with a bounded backoff, and the outage is one line when it starts
 * and one when it ends, not one per stream per tick. PostgreSQL only: a SQLite file has no
 * connection to lose.
 */
import assert from 'node:assert/strict';
import { noRedaction } from '../../src/log.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { openStore, type Store } from '../../src/store/store.js';
import { fromStoreTimestamp } from '../../src/store/values.js';
import { startWorker } from '../../src/worker/worker.js';
import { SANDBOX_SECRET, exampleDefinition } from '../support/sandbox.js';
import { STORES } from '../support/stores.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { FakeTimers, flushIo } from './support/fake-timers.js';
import { captureLogger } from './support/log-capture.js';

const postgres = STORES.find((b) => b.name === 'postgres');

const runStarts = async (store: Store, stream: string): Promise<{ at: string; status: string }[]> =>
  ((await store.knex('runs').where({ kind: 'run', stream }).orderBy('started_at').select('started_at', 'status')) as { started_at: string; status: string }[])
    .map((r) => ({ at: (fromStoreTimestamp(r.started_at) as string).replace(/(\.\d{3})\d*Z$/, '$1Z'), status: r.status }));

(postgres ? describe : describe.skip)('worker: a store outage on PostgreSQL', function () {
  this.timeout(120_000);
  const cleanups: (() => Promise<void> | void)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('the ticks lost to a 20 s outage run once when the store answers; bounded backoff meanwhile; one line when it starts, one when it ends', async () => {
    const timers = new FakeTimers('2026-11-22T01:41:30Z');
    const sandbox: Sandbox = await startSandbox({ port: 0, seed: 5, customers: 6, from: '2026-11-19', to: '2026-11-22', clock: timers.clock, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
    cleanups.push(() => sandbox.close());
    // Yesterday holds a row (this seed's few players have none): the activity stream loads cleanly at start.
    const player = sandbox.data.customers('igaming')[0]?.customer_id as string;
    sandbox.data.putActivity('igaming', { date: '2026-11-21', customer_id: player, game_type: 'slots', currency: 'EUR', bets_count: 3, total_bets: 30, wins: 0, ggr: 30, ngr: 30 });
    const casino = await exampleDefinition('igaming', sandbox.url, (yaml) =>
      yaml.replace(/^( +)mode: cursor\b.*$/gm, '$&\n$1start: 2026-11-19T00:00:00Z').replace(/^( +)late_days: 2.*$/gm, '$&\n$1start: 2026-11-20'));
    cleanups.push(casino.cleanup);
    const s = await postgres!.create(timers.clock);
    cleanups.push(() => s.drop());
    const target = new URL(s.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    cleanups.push(() => proxy.close());
    const store = await openStore({ url: proxy.through(s.url), clock: timers.clock });
    cleanups.push(() => store.close());

    const { logger, lines } = captureLogger({ level: 'info' });
    const worker = await startWorker({ store, definitions: [casino.def], logger, redact: noRedaction, timers, storeRetry: { initialMs: 1_000, maxMs: 8_000 } });
    cleanups.push(async () => void (await worker.stop(0)));
    const settle = async () => {
      await flushIo(2);
      await worker.scheduler.idle();
      await worker.monitor.settled();
      await flushIo(1);
    };
    // Caught up at start (the 01:40 ticks), then the store goes away just before 01:44.
    await timers.advanceTo('2026-11-22T01:43:50Z', settle);
    assert.deepEqual((await runStarts(s.store, 'customers')).map((r) => r.at), ['2026-11-22T01:41:30.000Z']);
    await proxy.down();
    await timers.advanceTo('2026-11-22T01:44:20Z', settle);
    assert.match(worker.health().detail, /the store has not answered since 2026-11-22T01:44:00.000Z \(connect ECONNREFUSED [^)]+\); 2 tick\(s\) held$/);
    assert.equal(worker.health().ok, true, 'alive through the outage');
    await proxy.up();
    await timers.advanceTo('2026-11-22T01:47:50Z', settle);

    // The held 01:44 ticks ran once when the store answered: the probe at 01:44:00 + 1 + 2 + 4 + 8 (at most 8) s.
    for (const stream of ['customers', 'transactions']) {
      assert.deepEqual(await runStarts(s.store, stream), [
        { at: '2026-11-22T01:41:30.000Z', status: 'succeeded' },
        { at: '2026-11-22T01:44:23.000Z', status: 'succeeded' },
      ], stream);
    }

    const outage = lines.filter((l) => l.event === 'store_unreachable');
    assert.equal(outage.length, 1, JSON.stringify(outage));
    assert.equal(outage[0]?.level, 'error');
    assert.match(outage[0]?.message ?? '', /^the store does not answer \(connect ECONNREFUSED 127\.0\.0\.1:\d+\): ticks are held and run once when it answers again; asking it again in 1 s, then backing off to at most 8 s$/);
    const recovered = lines.filter((l) => l.event === 'store_recovered');
    assert.equal(recovered.length, 1);
    assert.match(recovered[0]?.message ?? '', /^the store answers again after 23 s \(down since 2026-11-22T01:44:00.000Z\): running the 2 held tick\(s\) once: sandbox-casino\/(customers|transactions), sandbox-casino\/(customers|transactions)$/);
    const noise = lines.filter((l) => /cannot take the stream lock|failed to start|run failed|freshness check/.test(l.message));
    assert.deepEqual(noise, [], 'no line per stream per tick');
    await worker.stop(1_000);
  });
});
