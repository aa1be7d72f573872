/**
 * The scheduler through a store outage on injected time, against an in-memory partner world whose
 * store steps fail on demand: the probe's backoff doubles up to its bound, the held tick runs once
 * when the store answers, and a store that answers the probe but fails the ticks again (flapping)
 * keeps backing off instead of logging twice a second.
 */
import assert from 'node:assert/strict';
import { parseCron } from '../../src/worker/cron.js';
import type { StreamJob } from '../../src/worker/jobs.js';
import { jobKey, localLocks } from '../../src/store/stream-locks.js';
import { Scheduler } from '../../src/worker/scheduler.js';
import { FakeTimers } from './support/fake-timers.js';
import { FakeWorld } from './support/fake-world.js';
import { captureLogger } from './support/log-capture.js';

const customers: StreamJob = { key: jobKey('casino', 'customers'), partner: 'casino', stream: 'customers', mode: 'delta', schedule: parseCron('*/5 * * * *') };
const refused = () => new Error('connect ECONNREFUSED 127.0.0.1:5432');
const clock = (d: Date) => d.toISOString().slice(11, 19);

describe('scheduler through a store outage (injected time)', () => {
  it('probes at 1, 2, 4 ... s up to the bound; the held tick runs once when the store answers; flapping keeps the backoff', async () => {
    const timers = new FakeTimers('2026-11-22T10:01:00Z');
    const world = new FakeWorld(timers);
    world.runs.push({ key: customers.key, worker: 'earlier', startedAt: new Date('2026-11-22T10:00:00Z'), scheduledFor: new Date('2026-11-22T10:00:00Z') });
    let pingDown = false;
    let stepsDown = false;
    const pings: string[] = [];
    const ports = world.ports();
    const ranSince = ports.ranSince;
    ports.ranSince = async (job, since) => {
      if (stepsDown) throw refused();
      return ranSince(job, since);
    };
    ports.ping = async () => {
      pings.push(clock(timers.now()));
      if (pingDown) throw refused();
    };
    const { logger, lines } = captureLogger();
    const scheduler = new Scheduler({ timers, logger, locks: localLocks(), ports, storeRetry: { initialMs: 1_000, maxMs: 16_000 } });
    scheduler.setJobs([customers]);
    scheduler.start();
    const settle = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      await scheduler.idle();
    };

    // Down from just before 10:05 to 10:05:40.
    await timers.advanceTo('2026-11-22T10:04:59Z', settle);
    pingDown = stepsDown = true;
    await timers.advanceTo('2026-11-22T10:05:40Z', settle);
    assert.deepEqual(pings, ['10:05:01', '10:05:03', '10:05:07', '10:05:15', '10:05:31']);
    assert.equal(scheduler.storeDown(), true);
    assert.deepEqual(world.runsOf(customers.key).map((r) => clock(r.startedAt)), ['10:00:00']);
    pingDown = stepsDown = false;
    await timers.advanceTo('2026-11-22T10:09:00Z', settle);
    // The 10:05 tick, held, ran at the first probe after the store came back (10:05:31 + 16 s).
    assert.deepEqual(pings.slice(5), ['10:05:47']);
    assert.deepEqual(world.runsOf(customers.key).map((r) => [clock(r.startedAt), clock(r.scheduledFor)]), [['10:00:00', '10:00:00'], ['10:05:47', '10:05:00']]);
    assert.deepEqual(lines.filter((l) => l.level === 'error' || l.level === 'warn').map((l) => l.event), ['store_unreachable']);
    assert.equal(lines.filter((l) => l.event === 'store_recovered').length, 1);

    // Flapping: the probe is answered, the ticks' store steps fail again. The outages that follow
    // keep the backoff reached: a few lines a minute at most, never one a second.
    stepsDown = true;
    const before = lines.length;
    await timers.advanceTo('2026-11-22T10:11:00Z', settle);
    const outages = lines.slice(before).filter((l) => l.event === 'store_unreachable');
    assert.deepEqual(pings.slice(6), ['10:10:01', '10:10:03', '10:10:07', '10:10:15', '10:10:31', '10:10:47']);
    // The 10:10 tick's, then one after each answered probe: 7 in the minute, farther and farther apart.
    assert.equal(outages.length, 7);
    assert.equal(world.runsOf(customers.key).length, 2, 'no run while the steps fail');
    stepsDown = false;
    await timers.advanceTo('2026-11-22T10:11:10Z', settle);
    assert.deepEqual(world.runsOf(customers.key).map((r) => [clock(r.startedAt), clock(r.scheduledFor)]).at(-1), ['10:11:03', '10:10:00']);
    assert.equal(scheduler.storeDown(), false);
    await scheduler.stop(0);
  });
});
