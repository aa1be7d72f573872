/**
 * A simulated UTC day of the worker on injected time, end to end: the real scheduler, real runs
 * (runPartner → REST source → validate → load) against the sandbox partner and a real store,
 * every clock the same fake one. Two partners on the default schedules; the prop-trading
 * partner's activity endpoint answers 503 until 07:00 (a late partner).
 */
import assert from 'node:assert/strict';
import { createSource } from '../../connectors/index.js';
import { SourceError, type Source } from '../../connectors/source.js';
import { noRedaction } from '../../src/log.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { readState } from '../../src/store/sync-state.js';
import { fromStoreTimestamp } from '../../src/store/values.js';
import { startWorker } from '../../src/worker/worker.js';
import { SANDBOX_SECRET, exampleDefinition, storedByKey } from '../support/sandbox.js';
import { STORES } from '../support/stores.js';
import { FakeTimers, flushIo } from './support/fake-timers.js';
import { captureLogger } from './support/log-capture.js';

const DAY = '2026-11-22';
const LATE_UNTIL = new Date(`${DAY}T07:00:00Z`);

for (const backend of STORES) {
  describe(`worker: a simulated UTC day against the sandbox on ${backend.name}`, function () {
    this.timeout(300_000);
    let sandbox: Sandbox;
    const cleanups: (() => Promise<void> | void)[] = [];
    after(async () => {
      for (const c of cleanups.reverse()) await c();
    });

    it('every stream ran at its times, D-1 activity landed before 06:00, the late partner produced the breach event', async () => {
      const timers = new FakeTimers('2026-11-21T23:57:00Z');
      sandbox = await startSandbox({ port: 0, seed: 5, customers: 12, from: '2026-11-08', to: DAY, clock: timers.clock, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      cleanups.push(() => sandbox.close());
      // The late partner's D-1 holds a row once it answers (this seed's 12 traders have none that
      // day): an empty answer for the day due does not count as loaded (jobs/day-guard.ts).
      const trader = sandbox.data.customers('prop-trading')[0]?.customer_id as string;
      sandbox.data.putActivity('prop-trading', { date: '2026-11-21', customer_id: trader, instrument: 'EURUSD', lots_traded: 1.5, pnl: -20.25, currency: 'USD' });
      const start = (yaml: string) => yaml.replace(/^( +)mode: cursor\b.*$/gm, '$&\n$1start: 2026-11-08T00:00:00Z').replace(/^( +)late_days: 2.*$/gm, '$&\n$1start: 2026-11-19');
      const casino = await exampleDefinition('igaming', sandbox.url, start);
      const prop = await exampleDefinition('prop-trading', sandbox.url, start);
      cleanups.push(casino.cleanup, prop.cleanup);
      const s = await backend.create(timers.clock);
      cleanups.push(() => s.drop());

      // The late partner: its activity endpoint fails (503, retried and given up by the source) until 07:00.
      const source: typeof createSource = (def, deps) => {
        const inner = createSource(def, deps);
        if (def.partner !== 'sandbox-prop') return inner;
        const late: Source = {
          get stats() {
            return inner.stats;
          },
          pages(stream, window) {
            if (stream.entity !== 'activity' || timers.now() >= LATE_UNTIL) return inner.pages(stream, window);
            return (async function* () {
              yield* [] as unknown[][];
              throw new SourceError(`GET ${sandbox.url}/api/v1/prop-trading/activity?date=${window.from}: 503 Service Unavailable (the day is not closed yet)`, { status: 503 });
            })();
          },
          close: () => inner.close?.() ?? Promise.resolve(),
        };
        return late;
      };

      const { logger, lines } = captureLogger({ level: 'info' });
      const worker = await startWorker({ store: s.store, definitions: [casino.def, prop.def], logger, redact: noRedaction, timers, source });
      const settle = async () => {
        await flushIo(2);
        await worker.scheduler.idle();
        await worker.monitor.settled();
        await flushIo(1);
      };
      await timers.advanceTo(`2026-11-23T00:00:00Z`, settle);
      const stopped = await worker.stop(1_000);
      assert.deepEqual(stopped.abandoned, []);

      const runs = (await s.store.knex('runs').where({ kind: 'run' }).orderBy('started_at')) as { partner_id: string; stream: string; status: string; started_at: string; window_to: string | null; error: string | null }[];
      const startsOf = (partner: string, stream: string) => runs.filter((r) => r.partner_id === partner && r.stream === stream).map((r) => ({ ...r, started_at: fromStoreTimestamp(r.started_at) as string }));
      const ticks = Array.from({ length: 360 }, (_, i) => new Date(Date.parse(`${DAY}T00:00:00Z`) + i * 240_000).toISOString());
      for (const partner of ['sandbox-casino', 'sandbox-prop']) {
        for (const stream of ['customers', 'transactions']) {
          const mine = startsOf(partner, stream);
          assert.deepEqual(mine.filter((r) => r.started_at.startsWith(DAY)).map((r) => r.started_at.replace(/(\.\d{3})\d*Z$/, '$1Z')), ticks, `${partner}/${stream}`);
          assert.ok(mine.every((r) => r.status === 'succeeded'), `${partner}/${stream}: ${mine.find((r) => r.status !== 'succeeded')?.error}`);
        }
      }
      // The on-time partner: D-1 (11-21) loaded at 00:15, well before 06:00; its rows are the partner's.
      const casinoActivity = startsOf('sandbox-casino', 'activity').filter((r) => r.started_at.startsWith(DAY));
      assert.deepEqual(casinoActivity.map((r) => [r.started_at.slice(11, 19), r.status, r.window_to]), [['00:15:00', 'succeeded', '2026-11-21']]);
      const state = (await readState(s.store.knex, 'sandbox-casino', 'activity')) as { days: Record<string, string> } | undefined;
      const loadedAt = state?.days['2026-11-21'];
      assert.ok(loadedAt && fromStoreTimestamp(loadedAt)! < `${DAY}T06:00:00`, `D-1 loaded at ${loadedAt}`);
      const stored = await storedByKey(s.store, 'sandbox-casino', 'igaming', 'activity');
      const expected = sandbox.data.activity('igaming', '2026-11-21');
      assert.ok(expected.length > 0);
      assert.equal([...stored.keys()].filter((k) => k.startsWith('2026-11-21')).length, expected.length);

      // The late partner: failing since the worker started (its days not loaded), retried every
      // 15 minutes (00:00 still retries yesterday's fire), at 00:15 and after; loaded at 07:00.
      const propActivity = startsOf('sandbox-prop', 'activity').filter((r) => r.started_at.startsWith(DAY));
      assert.deepEqual(propActivity.map((r) => r.started_at.slice(11, 19)), Array.from({ length: 29 }, (_, i) => new Date(Date.parse(`${DAY}T00:00:00Z`) + i * 900_000).toISOString().slice(11, 19)));
      assert.ok(propActivity.slice(0, -1).every((r) => r.status === 'failed' && /503/.test(r.error ?? '')));
      assert.deepEqual([propActivity.at(-1)?.started_at.slice(11, 19), propActivity.at(-1)?.status], ['07:00:00', 'succeeded']);

      const events = lines.filter((l) => l.event === 'freshness_breach' || l.event === 'freshness_recovered');
      assert.deepEqual(events.map((l) => [l.level, l.event, l.partner, l.stream, l.state]), [
        // 'never': this store has no activity day of the late partner yet (a later day would say 'late').
        ['error', 'freshness_breach', 'sandbox-prop', 'activity', 'never'],
        ['info', 'freshness_recovered', 'sandbox-prop', 'activity', 'ok'],
      ]);
      assert.match(events[0]?.message ?? '', /freshness breach: sandbox-prop\/activity: 2026-11-21 not loaded, 0s past 06:00 UTC/); // at 06:00, after the failed retry
      assert.equal(await worker.metrics.breach.get({ partner: 'sandbox-prop', stream: 'activity' }), 0);
      // 28 failures on the day and the catch-up at 23:57 the day before
      assert.equal(await worker.metrics.runs.get({ partner: 'sandbox-prop', stream: 'activity', status: 'failed' }), 29);

      // Nothing lost over the day: every customer changed before the last delta run is stored.
      const lastWatermark = '2026-11-22T23:55:00.000Z';
      for (const [variant, partner] of [['igaming', 'sandbox-casino'], ['prop-trading', 'sandbox-prop']] as const) {
        const wanted = sandbox.data.customers(variant).filter((c) => String(c.last_modified_date) < lastWatermark).map((c) => String(c.customer_id)).sort();
        const have = [...(await storedByKey(s.store, partner, variant, 'customers')).keys()].sort();
        assert.deepEqual(have.filter((id) => wanted.includes(id)), wanted);
      }
    });
  });
}
