/**
 * `serve`'s readiness apart from its liveness: /readyz answers 200 only while the store answers
 * within the bound and every migration is applied, 503 naming the failing check otherwise; /healthz
 * stays 200 through a store outage. On PostgreSQL the store is made unreachable for this API alone
 * (a local proxy in front of the server refuses, then stalls, then serves again).
 */
import assert from 'node:assert/strict';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { openStore } from '../../src/store/store.js';
import { startApi } from '../support/api.js';
import { STORES } from '../support/stores.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

interface ReadyBody {
  status: string;
  checks: Record<string, { ok: boolean; detail: string }>;
}

const probe = async (url: string): Promise<{ status: number; body: ReadyBody }> => {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as ReadyBody };
};

for (const backend of STORES) {
  describe(`serve readiness on ${backend.name}`, function () {
    this.timeout(60_000);

    it('ready with the store answering and every migration applied; a pending migration makes it not ready, named', async () => {
      const t = await backend.create();
      const api = await startApi(t.store);
      try {
        const ready = await probe(api.url);
        assert.equal(ready.status, 200);
        assert.equal(ready.body.status, 'ready');
        assert.deepEqual(Object.keys(ready.body.checks), ['api', 'store', 'migrations']);
        assert.match(ready.body.checks.store?.detail ?? '', /^answered in \d+ ms$/);
        assert.equal(ready.body.checks.migrations?.detail, `${MIGRATIONS.length} applied, none pending`);

        // A store restored from a backup older than this code: its latest migration is missing.
        const last = MIGRATIONS.at(-1)?.name as string;
        await t.store.knex('schema_migrations').where({ name: last }).delete();
        const behind = await probe(api.url);
        assert.equal(behind.status, 503);
        assert.deepEqual(behind.body.checks.migrations, { ok: false, detail: `1 pending (${last}): partner-sync migrate applies them` });
        assert.equal(behind.body.checks.store?.ok, true);
        assert.equal((await fetch(`${api.url}/healthz`)).status, 200);
      } finally {
        await api.close();
        await t.drop();
      }
    });

    if (backend.name !== 'postgres') return;

    it('the store refusing, then hanging: /readyz 503 with the reason within the bound, /healthz 200; ready again once it serves', async () => {
      const t = await backend.create();
      const target = new URL(t.url);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const store = await openStore({ url: proxy.through(t.url) });
      const api = await startApi(store, { readinessTimeoutMs: 300 });
      try {
        assert.equal((await probe(api.url)).status, 200);

        await proxy.down();
        const refused = await probe(api.url);
        assert.equal(refused.status, 503);
        assert.equal(refused.body.status, 'not ready');
        assert.match(refused.body.checks.store?.detail ?? '', /^unreachable: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
        const alive = await fetch(`${api.url}/healthz`);
        assert.deepEqual([alive.status, await alive.json()], [200, { status: 'ok' }]);

        await proxy.stall();
        const started = Date.now();
        const hung = await probe(api.url);
        assert.equal(hung.status, 503);
        assert.deepEqual(hung.body.checks.store, { ok: false, detail: 'no answer within 300 ms' });
        assert.ok(Date.now() - started < 3_000, `answered in ${Date.now() - started} ms`);

        await proxy.up();
        let again = await probe(api.url);
        for (let i = 0; i < 50 && again.status !== 200; i++) again = await probe(api.url);
        assert.equal(again.status, 200, JSON.stringify(again.body));
      } finally {
        await api.close();
        await proxy.close();
        await store.close();
        await t.drop();
      }
    });
  });
}
