/**
 * The worker's daily purge (src/worker/purge-schedule.ts): at 03:30 UTC it removes what the
 * retention no longer keeps, one worker at a time; a worker whose lock is held elsewhere purges
 * nothing; the result is in the log (`purge_done`).
 */
import { strict as assert } from 'node:assert';
import { DEFAULT_RETENTION } from '../../src/privacy/retention.js';
import { localLocks } from '../../src/store/stream-locks.js';
import { startPurgeSchedule } from '../../src/worker/purge-schedule.js';
import { fixedClock, STORES } from '../support/stores.js';
import { FakeTimers, flushIo } from './support/fake-timers.js';
import { captureLogger } from './support/log-capture.js';

for (const backend of STORES) {
  describe(`the worker's daily purge (${backend.name})`, () => {
    it('purges at 03:30 UTC what is past its retention, under a lock another worker holding it skips', async () => {
      const timers = new FakeTimers('2026-06-01T03:00:00.000Z');
      const t = await backend.create(fixedClock('2026-06-01T03:00:00.000Z'));
      const { logger, lines } = captureLogger();
      const locks = localLocks();
      const schedule = startPurgeSchedule({ store: t.store, timers, logger, locks, retention: DEFAULT_RETENTION });
      try {
        const run = (id: string, at: string) => ({ id, partner_id: 'casino', stream: 'customers', kind: 'run', status: 'succeeded', started_at: at, finished_at: at });
        await t.store.knex('runs').insert([run('r-2024', '2024-01-01T00:00:00.000Z'), run('r-2025', '2025-01-01T00:00:00.000Z'), run('r-2026', '2026-05-01T00:00:00.000Z')]);
        const held = await locks.tryAcquire('purge');
        assert.ok(held);
        assert.equal(await schedule.runNow(), undefined, 'another worker holds the purge');
        await held.release();
        assert.equal((await t.store.knex('runs').pluck('id')).length, 3);

        await timers.advanceTo('2026-06-01T03:29:00.000Z');
        assert.equal(lines.filter((l) => l.event === 'purge_done').length, 0, 'not before its hour');
        await timers.advanceTo('2026-06-01T03:31:00.000Z', () => flushIo(50));
        for (let i = 0; i < 100 && !lines.some((l) => l.event === 'purge_done'); i++) await new Promise((r) => setTimeout(r, 20));
        const done = lines.find((l) => l.event === 'purge_done');
        assert.ok(done, 'purged at 03:30');
        assert.equal(done.run_history, 2);
        assert.deepEqual(await t.store.knex('runs').pluck('id'), ['r-2026']);
      } finally {
        await schedule.stop();
        await t.drop();
      }
    });
  });
}
