/**
 * The 00:15 run of a day the partner answers nothing for (an outage behind an HTTP 200): the day
 * is not recorded as loaded, so the worker retries it every 15 minutes and the 06:00 freshness
 * breach fires; when the partner's rows arrive, the retry loads them. Injected time, the real
 * scheduler, runs and store, the sandbox partner over HTTP.
 */
import assert from 'node:assert/strict';
import { createSource } from '../../connectors/index.js';
import type { Source } from '../../connectors/source.js';
import { noRedaction } from '../../src/log.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { readState } from '../../src/store/sync-state.js';
import { fromStoreTimestamp } from '../../src/store/values.js';
import { startWorker } from '../../src/worker/worker.js';
import { SANDBOX_SECRET, exampleDefinition, storedByKey } from '../support/sandbox.js';
import { STORES } from '../support/stores.js';
import { FakeTimers, flushIo } from './support/fake-timers.js';
import { captureLogger } from './support/log-capture.js';

const DAY = '2026-11-22';
const EMPTY_DAY = '2026-11-21';
const ROWS_FROM = new Date(`${DAY}T07:00:00Z`);

for (const backend of STORES) {
  describe(`worker: an empty answer for the day due on ${backend.name}`, function () {
    this.timeout(300_000);
    const cleanups: (() => Promise<void> | void)[] = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });

    it('is retried every 15 minutes, breaches at 06:00 and loads when the rows come', async () => {
      const timers = new FakeTimers(`${DAY}T00:10:00Z`);
      const sandbox = await startSandbox({ port: 0, seed: 5, customers: 12, from: '2026-11-08', to: DAY, clock: timers.clock, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      cleanups.push(() => sandbox.close());
      const start = (yaml: string) => yaml.replace(/^( +)mode: cursor\b.*$/gm, '$&\n$1start: 2026-11-08T00:00:00Z').replace(/^( +)late_days: 2.*$/gm, '$&\n$1start: 2026-11-19');
      const casino = await exampleDefinition('igaming', sandbox.url, start);
      cleanups.push(casino.cleanup);
      const s = await backend.create(timers.clock);
      cleanups.push(() => s.drop());
      assert.ok(sandbox.data.activity('igaming', EMPTY_DAY).length > 0);

      // Until 07:00 the partner answers its activity endpoint for EMPTY_DAY with no rows (HTTP 200, empty list).
      const source: typeof createSource = (def, deps) => {
        const inner = createSource(def, deps);
        const quiet: Source = {
          get stats() {
            return inner.stats;
          },
          pages(stream, window) {
            const empty = stream.entity === 'activity' && window.kind === 'days' && window.from === EMPTY_DAY && timers.now() < ROWS_FROM;
            return empty ? (async function* () { yield* [] as unknown[][]; })() : inner.pages(stream, window);
          },
          close: () => inner.close?.() ?? Promise.resolve(),
        };
        return quiet;
      };

      const { logger, lines } = captureLogger({ level: 'info' });
      const worker = await startWorker({ store: s.store, definitions: [casino.def], logger, redact: noRedaction, timers, source });
      const settle = async () => {
        await flushIo(2);
        await worker.scheduler.idle();
        await worker.monitor.settled();
        await flushIo(1);
      };
      await timers.advanceTo(`${DAY}T08:00:00Z`, settle);
      const stopped = await worker.stop(1_000);
      assert.deepEqual(stopped.abandoned, []);

      const runs = (await s.store.knex('runs').where({ kind: 'run', stream: 'activity' }).orderBy('started_at')) as { status: string; started_at: string; error: string | null }[];
      const fromFire = runs.map((r) => ({ ...r, at: (fromStoreTimestamp(r.started_at) as string).slice(11, 19) })).filter((r) => r.at >= '00:15:00');
      // 00:15, then a retry every 15 minutes until the rows come at 07:00
      assert.deepEqual(fromFire.map((r) => r.at), Array.from({ length: 28 }, (_, i) => new Date(Date.parse(`${DAY}T00:15:00Z`) + i * 900_000).toISOString().slice(11, 19)));
      for (const r of fromFire.slice(0, -1)) {
        assert.equal(r.status, 'failed');
        assert.match(r.error ?? '', new RegExp(`^day replacement refused, nothing replaced: ${EMPTY_DAY}: no rows stored, 0 received, none loadable: not recorded as loaded\\.`));
      }
      assert.equal(fromFire.at(-1)?.status, 'succeeded', fromFire.at(-1)?.error ?? '');

      const events = lines.filter((l) => l.event === 'freshness_breach' || l.event === 'freshness_recovered');
      assert.deepEqual(events.map((l) => [l.event, l.partner, l.stream]), [['freshness_breach', 'sandbox-casino', 'activity'], ['freshness_recovered', 'sandbox-casino', 'activity']]);
      assert.match(events[0]?.message ?? '', new RegExp(`${EMPTY_DAY} not loaded, 0s past 06:00 UTC`));

      const state = (await readState(s.store.knex, 'sandbox-casino', 'activity')) as { days: Record<string, string> };
      assert.ok(fromStoreTimestamp(state.days[EMPTY_DAY] ?? '')! >= `${DAY}T07:00:00`);
      const stored = [...(await storedByKey(s.store, 'sandbox-casino', 'igaming', 'activity')).keys()].filter((k) => k.startsWith(EMPTY_DAY));
      assert.equal(stored.length, sandbox.data.activity('igaming', EMPTY_DAY).length);
    });
  });
}
