/**
 * The worker's readiness apart from its liveness: /readyz 200 only while the scheduler turns, the
 * store answers within the bound, its migrations are current and streams are scheduled; 503
 * naming the failing check otherwise. On PostgreSQL the store is made unreachable for this worker
 * alone (a local proxy in front of the server), and /healthz stays 200 meanwhile.
 */
import assert from 'node:assert/strict';
import { noRedaction, silentLogger } from '../../src/log.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { openStore, type Store } from '../../src/store/store.js';
import type { PartnerDefinition } from '../../src/config/definition.js';
import { startMetricsServer, type MetricsServer } from '../../src/worker/http.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { STORES } from '../support/stores.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { FakeTimers } from './support/fake-timers.js';
import { FakeWorld } from './support/fake-world.js';

interface ReadyBody {
  status: string;
  checks: Record<string, { ok: boolean; detail: string }>;
}

const def = { partner: 'casino', variant: 'igaming', file: 'casino.yaml', source: { type: 'rest' }, affiliates: { map: {}, unmapped: 'keep' }, secrets: [],
  streams: { customers: { entity: 'customers', incremental: { mode: 'cursor' }, schedule: '*/4 * * * *' } } } as unknown as PartnerDefinition;

async function serve(store: Store, definitions: PartnerDefinition[]): Promise<{ worker: Worker; server: MetricsServer; probe(): Promise<{ status: number; body: ReadyBody }> }> {
  const timers = new FakeTimers('2026-11-22T10:00:10Z');
  const worker = await startWorker({ store, definitions, logger: silentLogger(), redact: noRedaction, timers, ports: new FakeWorld(timers).ports(), readinessTimeoutMs: 300 });
  const server = await startMetricsServer({ port: 0, host: '127.0.0.1', render: () => '', health: () => worker.health(), ready: () => worker.ready() });
  return {
    worker,
    server,
    async probe() {
      const res = await fetch(`${server.url}/readyz`);
      return { status: res.status, body: (await res.json()) as ReadyBody };
    },
  };
}

for (const backend of STORES) {
  describe(`worker readiness on ${backend.name}`, function () {
    this.timeout(30_000);

    it('ready with definitions scheduled and the store current; not ready once stopping, or without streams', async () => {
      const t = await backend.create();
      const running: Awaited<ReturnType<typeof serve>>[] = [];
      try {
        const ready = await serve(t.store, [def]);
        running.push(ready);
        const ok = await ready.probe();
        assert.equal(ok.status, 200);
        assert.equal(ok.body.status, 'ready');
        assert.deepEqual(Object.keys(ok.body.checks), ['scheduler', 'store', 'migrations', 'definitions']);
        assert.deepEqual(ok.body.checks.definitions, { ok: true, detail: '1 partner(s), 1 stream(s) scheduled' });
        assert.deepEqual(ok.body.checks.migrations, { ok: true, detail: `${MIGRATIONS.length} applied, none pending` });

        await ready.worker.stop(1_000);
        const stopping = await ready.probe();
        assert.equal(stopping.status, 503);
        assert.deepEqual(stopping.body.checks.scheduler, { ok: false, detail: 'stopping' });

        // One worker per SQLite file: the next starts once the first has stopped.
        const empty = await serve(t.store, []);
        running.push(empty);
        const none = await empty.probe();
        assert.equal(none.status, 503);
        assert.deepEqual(none.body.checks.definitions, { ok: false, detail: 'no stream scheduled: no valid connector definition is loaded' });
      } finally {
        for (const s of running) {
          await s.server.close();
          await s.worker.stop(0);
        }
        await t.drop();
      }
    });

    if (backend.name !== 'postgres') return;

    it('the store unreachable: /readyz 503 naming it, /healthz 200 (alive); ready again when it answers', async () => {
      const t = await backend.create();
      const target = new URL(t.url);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const store = await openStore({ url: proxy.through(t.url) });
      const s = await serve(store, [def]);
      try {
        await s.worker.scheduler.idle();
        assert.equal((await s.probe()).status, 200);
        await proxy.down();
        const down = await s.probe();
        assert.equal(down.status, 503);
        // A new connection is refused; a pooled one the proxy cut ends as the probe uses it, either while the
        // query runs (the driver names it) or as the pool hands it out (it does not): all are the store unreachable.
        assert.match(down.body.checks.store?.detail ?? '', /^unreachable: (connect ECONNREFUSED|(select 1 - )?Connection terminated unexpectedly)/);
        assert.equal(down.body.checks.scheduler?.ok, true);
        const live = await fetch(`${s.server.url}/healthz`);
        assert.equal(live.status, 200);
        await proxy.up();
        let again = await s.probe();
        for (let i = 0; i < 50 && again.status !== 200; i++) again = await s.probe();
        assert.equal(again.status, 200, JSON.stringify(again.body));
      } finally {
        await s.server.close();
        await s.worker.stop(0);
        await proxy.close();
        await store.close();
        await t.drop();
      }
    });
  });
}
