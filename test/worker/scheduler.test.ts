/**
 * The scheduler on injected time (fake timers) against an in-memory partner world: a simulated
 * UTC day of the default schedules, overlap, catch-up after downtime, two workers sharing locks,
 * graceful stop, reload.
 */
import assert from 'node:assert/strict';
import { FreshnessMonitor } from '../../src/worker/freshness-monitor.js';
import { parseCron } from '../../src/worker/cron.js';
import type { StreamJob } from '../../src/worker/jobs.js';
import { jobKey, localLocks } from '../../src/store/stream-locks.js';
import { Scheduler, type SkipReason } from '../../src/worker/scheduler.js';
import { sleep } from '../../src/worker/timers.js';
import type { Entity } from '../../src/types.js';
import { FakeTimers, flushIo } from './support/fake-timers.js';
import { deferred, FakeWorld } from './support/fake-world.js';
import { captureLogger } from './support/log-capture.js';

const job = (partner: string, stream: Entity, schedule?: string): StreamJob => ({
  key: jobKey(partner, stream),
  partner,
  stream,
  mode: stream === 'activity' ? 'daily' : 'delta',
  schedule: parseCron(schedule ?? (stream === 'activity' ? '15 0 * * *' : '*/5 * * * *')),
});
const streamsOf = (partners: string[]) => partners.flatMap((p) => (['customers', 'transactions', 'activity'] as const).map((s) => job(p, s)));
const iso = (d: Date | undefined) => d?.toISOString();

describe('worker scheduler on injected time', function () {
  this.timeout(60_000);

  it('a simulated UTC day: every stream runs at its times, D-1 activity lands before 06:00, a late partner breaches', async () => {
    const timers = new FakeTimers('2026-11-21T23:57:00Z');
    const world = new FakeWorld(timers);
    const { logger, lines } = captureLogger();
    // Both partners were fresh before the worker started: deltas at 23:55, activity through 11-20.
    for (const p of ['casino', 'late-prop']) {
      world.states.set(`${p}/customers`, { watermark: '2026-11-21T23:55:00.000Z' });
      world.states.set(`${p}/transactions`, { watermark: '2026-11-21T23:55:00.000Z' });
      world.states.set(`${p}/activity`, { last_day: '2026-11-20', days: { '2026-11-20': '2026-11-21T00:15:00.000Z' } });
    }
    // The late partner's activity endpoint fails until 07:00 on the 22nd.
    world.behaviour = (j, _for, now) => (j.key === 'late-prop/activity' && now < new Date('2026-11-22T07:00:00Z') ? 'fail' : 'succeed');
    const locks = localLocks();
    const jobs = streamsOf(['casino', 'late-prop']);
    const scheduler = new Scheduler({ timers, logger, locks, ports: world.ports() });
    const monitor = new FreshnessMonitor({ timers, logger, locks, streams: () => jobs, readStates: world.readStates });
    scheduler.setJobs(jobs);
    const settle = async () => {
      await flushIo(2);
      await scheduler.idle();
      await monitor.check().then(() => undefined); // after each step, as the worker does after each run
      await flushIo(2);
    };
    scheduler.start();
    monitor.start();
    await timers.advanceTo('2026-11-23T00:00:00Z', settle);
    await scheduler.stop(0);
    await monitor.stop();

    // Deltas: every five minutes of the day, on the minute, and never a tick missed.
    const expected = Array.from({ length: 288 }, (_, i) => new Date(Date.parse('2026-11-22T00:00:00Z') + i * 300_000).toISOString());
    for (const key of ['casino/customers', 'casino/transactions', 'late-prop/customers', 'late-prop/transactions']) {
      const starts = world.runsOf(key).map((r) => iso(r.startedAt)).filter((t) => t?.startsWith('2026-11-22'));
      assert.deepEqual(starts, expected, key);
      assert.ok(world.runsOf(key).every((r) => iso(r.startedAt) === iso(r.scheduledFor) || r.startedAt.toISOString() === '2026-11-21T23:57:00.000Z'));
    }
    // On-time activity: one run at 00:15, scheduled for 00:15, its window ending on D-1, loaded long before 06:00.
    const casino = world.runsOf('casino/activity');
    assert.deepEqual(casino.map((r) => [iso(r.startedAt), iso(r.scheduledFor), r.status]), [['2026-11-22T00:15:00.000Z', '2026-11-22T00:15:00.000Z', 'succeeded']]);
    assert.equal(casino[0]?.days?.at(-1), '2026-11-21');
    assert.ok(world.states.get('casino/activity')?.days?.['2026-11-21'] as string < '2026-11-22T06:00:00');
    // Late activity: 00:15, then a retry every 15 minutes, all scheduled for 00:15, until it loads at 07:00; nothing after.
    const late = world.runsOf('late-prop/activity');
    assert.equal(late.length, 28);
    assert.equal(iso(late[0]?.startedAt), '2026-11-22T00:15:00.000Z');
    assert.equal(iso(late.at(-1)?.startedAt), '2026-11-22T07:00:00.000Z');
    assert.ok(late.every((r, i) => r.startedAt.getTime() === Date.parse('2026-11-22T00:15:00Z') + i * 900_000 && iso(r.scheduledFor) === '2026-11-22T00:15:00.000Z'));
    assert.deepEqual(late.map((r) => r.status).filter((s) => s === 'succeeded'), ['succeeded']);
    assert.ok(lines.some((l) => l.level === 'warn' && l.stream === 'activity' && /2026-11-21 not loaded yet .*retrying at 2026-11-22T00:30:00.000Z/.test(l.message)));

    // Freshness: exactly one breach, the late partner's D-1 at the first check after 06:00, then its recovery.
    const events = lines.filter((l) => l.event === 'freshness_breach' || l.event === 'freshness_recovered');
    assert.deepEqual(events.map((l) => [l.level, l.event, l.partner, l.stream, l.state]), [
      ['error', 'freshness_breach', 'late-prop', 'activity', 'late'],
      ['info', 'freshness_recovered', 'late-prop', 'activity', 'ok'],
    ]);
    const breach = events[0] as { timestamp?: string; message: string };
    assert.match(breach.message, /2026-11-21 not loaded, 0s past 06:00 UTC|2026-11-21 not loaded, 30s past 06:00 UTC/);
    assert.equal(lines.filter((l) => l.level === 'error').length, 1, JSON.stringify(lines.filter((l) => l.level === 'error')));
  });

  it('a slow run makes the next tick skip, logged; the tick after runs', async () => {
    const timers = new FakeTimers('2026-11-22T10:01:00Z');
    const world = new FakeWorld(timers);
    world.states.set('casino/customers', { watermark: '2026-11-22T10:00:00.000Z' });
    world.runs.push({ key: 'casino/customers', worker: 'earlier', startedAt: new Date('2026-11-22T10:00:00Z'), finishedAt: new Date('2026-11-22T10:00:01Z'), scheduledFor: new Date('2026-11-22T10:00:00Z') });
    const slow = deferred<'succeed'>();
    world.behaviour = (_j, _f, now) => (now.toISOString() === '2026-11-22T10:05:00.000Z' ? slow.promise : 'succeed');
    const { logger, lines } = captureLogger();
    const skips: SkipReason[] = [];
    const scheduler = new Scheduler({ timers, logger, locks: localLocks(), ports: world.ports(), events: { skipped: (_j, _s, r) => skips.push(r) } });
    scheduler.setJobs([job('casino', 'customers')]);
    scheduler.start();
    await timers.advanceTo('2026-11-22T10:12:00Z');
    assert.deepEqual(scheduler.running().map((r) => [r.job.key, r.phase]), [['casino/customers', 'running']]);
    slow.resolve('succeed');
    await flushIo();
    await timers.advanceTo('2026-11-22T10:16:00Z');
    await scheduler.stop(0);
    assert.deepEqual(world.runsOf('casino/customers').map((r) => iso(r.startedAt)), ['2026-11-22T10:00:00.000Z', '2026-11-22T10:05:00.000Z', '2026-11-22T10:15:00.000Z']);
    // The catch-up at start found the 10:00 tick already run; 10:10 came while 10:05 still ran.
    assert.deepEqual(skips, ['done', 'overlap']);
    const skipped = lines.find((l) => l.skip === 'overlap');
    assert.equal(skipped?.level, 'warn');
    assert.equal(skipped?.partner, 'casino');
    assert.equal(skipped?.stream, 'customers');
    assert.equal(skipped?.scheduled_for, '2026-11-22T10:10:00.000Z');
    assert.match(skipped?.message ?? '', /previous run \(scheduled for 2026-11-22T10:05:00.000Z\) is still running since 2026-11-22T10:05:00.000Z/);
  });

  it('after downtime it catches up on start: delta streams at once, the missed activity days pulled', async () => {
    const timers = new FakeTimers('2026-11-22T03:02:00Z');
    const world = new FakeWorld(timers);
    world.states.set('casino/customers', { watermark: '2026-11-22T00:00:00.000Z' });
    world.states.set('casino/activity', { last_day: '2026-11-18', days: { '2026-11-18': '2026-11-19T00:15:00.000Z' } });
    const scheduler = new Scheduler({ timers, logger: captureLogger().logger, locks: localLocks(), ports: world.ports() });
    scheduler.setJobs([job('casino', 'customers'), job('casino', 'activity')]);
    scheduler.start();
    await timers.advanceTo('2026-11-22T03:02:00Z', () => scheduler.idle());
    await scheduler.stop(0);
    const customers = world.runsOf('casino/customers');
    assert.deepEqual(customers.map((r) => [iso(r.startedAt), iso(r.scheduledFor)]), [['2026-11-22T03:02:00.000Z', '2026-11-22T03:00:00.000Z']]);
    const activity = world.runsOf('casino/activity');
    // Scheduled for today's 00:15 fire (not the wall clock): D-1 and every day missed since the 18th.
    assert.deepEqual(activity.map((r) => [iso(r.startedAt), iso(r.scheduledFor), r.days]), [
      ['2026-11-22T03:02:00.000Z', '2026-11-22T00:15:00.000Z', ['2026-11-19', '2026-11-20', '2026-11-21']],
    ]);
  });

  it('two workers sharing the locks: each tick runs once, a (partner, stream) never twice at once', async () => {
    const timers = new FakeTimers('2026-11-22T09:56:00Z');
    const world = new FakeWorld(timers);
    // Runs take 90 s of (simulated) time: longer than the gap between two workers' reactions.
    world.behaviour = async (): Promise<'succeed'> => {
      await sleep(timers, 90_000);
      return 'succeed';
    };
    const locks = localLocks();
    const skips: [string, SkipReason][] = [];
    const make = (name: string) => new Scheduler({ timers, logger: captureLogger().logger, locks, ports: world.ports(name), events: { skipped: (j, _s, r) => skips.push([name, r]) } });
    const workers = [make('w1'), make('w2'), make('w3')];
    for (const w of workers) w.setJobs([job('casino', 'customers'), job('casino', 'transactions')]);
    // Staggered starts, as processes start.
    for (const w of workers) {
      w.start();
      await timers.advance(7_000);
    }
    await timers.advanceTo('2026-11-22T11:00:00Z');
    await timers.advance(120_000);
    for (const w of workers) await w.stop(0);
    for (const key of ['casino/customers', 'casino/transactions']) {
      const runs = world.runsOf(key).sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
      for (let i = 1; i < runs.length; i++) {
        assert.ok((runs[i - 1]?.finishedAt as Date) <= (runs[i] as { startedAt: Date }).startedAt, `${key}: runs overlap at ${iso(runs[i]?.startedAt)}`);
      }
      // One catch-up at the first start, then one run per five-minute tick from 10:00 to 11:00.
      const ticks = runs.filter((r) => r.startedAt >= new Date('2026-11-22T10:00:00Z')).map((r) => iso(r.startedAt));
      assert.deepEqual(ticks, Array.from({ length: 13 }, (_, i) => new Date(Date.parse('2026-11-22T10:00:00Z') + i * 300_000).toISOString()), key);
    }
    assert.ok(skips.some(([, r]) => r === 'locked'));
  });

  it('stop waits for the running run within the bound, and reports it abandoned past the bound', async () => {
    const timers = new FakeTimers('2026-11-22T10:04:59Z');
    const world = new FakeWorld(timers);
    world.runs.push({ key: 'casino/customers', worker: 'x', startedAt: new Date('2026-11-22T10:00:00Z'), scheduledFor: new Date('2026-11-22T10:00:00Z') });
    const first = deferred<'succeed'>();
    world.behaviour = () => first.promise;
    const scheduler = new Scheduler({ timers, logger: captureLogger().logger, locks: localLocks(), ports: world.ports() });
    scheduler.setJobs([job('casino', 'customers')]);
    scheduler.start();
    await timers.advanceTo('2026-11-22T10:05:00Z');
    assert.equal(scheduler.running().length, 1);
    let result: Awaited<ReturnType<Scheduler['stop']>> | undefined;
    const stopping = scheduler.stop(30_000).then((r) => (result = r));
    await timers.advance(10_000);
    assert.equal(result, undefined, 'still waiting for the run');
    assert.equal(scheduler.health().ok, false);
    first.resolve('succeed');
    await stopping;
    assert.deepEqual(result, { abandoned: [] });
    await timers.advanceTo('2026-11-22T10:30:00Z');
    assert.equal(world.runsOf('casino/customers').length, 2, 'no run after the stop');

    // A run that does not end within the bound is reported abandoned.
    const timers2 = new FakeTimers('2026-11-22T10:05:00Z');
    const world2 = new FakeWorld(timers2);
    world2.behaviour = () => new Promise(() => undefined);
    const s2 = new Scheduler({ timers: timers2, logger: captureLogger().logger, locks: localLocks(), ports: world2.ports() });
    s2.setJobs([job('casino', 'customers')]);
    s2.start();
    await flushIo();
    const stopped = s2.stop(20_000);
    await timers2.advance(20_000);
    const r2 = await stopped;
    assert.deepEqual(r2.abandoned.map((r) => r.job.key), ['casino/customers']);
  });

  it('a reload re-plans a changed schedule, adds new streams (caught up at once) and drops removed ones', async () => {
    const timers = new FakeTimers('2026-11-22T10:00:30Z');
    const world = new FakeWorld(timers);
    for (const s of ['customers', 'transactions']) world.runs.push({ key: `casino/${s}`, worker: 'x', startedAt: new Date('2026-11-22T10:00:00Z'), scheduledFor: new Date('2026-11-22T10:00:00Z') });
    const scheduler = new Scheduler({ timers, logger: captureLogger().logger, locks: localLocks(), ports: world.ports() });
    scheduler.setJobs([job('casino', 'customers'), job('casino', 'transactions')]);
    scheduler.start();
    await timers.advanceTo('2026-11-22T10:01:00Z');
    const change = scheduler.setJobs([job('casino', 'customers', '*/2 * * * *'), job('prop', 'customers')]);
    assert.deepEqual(change, { added: ['prop/customers'], removed: ['casino/transactions'], rescheduled: ['casino/customers'] });
    await timers.advanceTo('2026-11-22T10:06:00Z');
    await scheduler.stop(0);
    assert.deepEqual(world.runsOf('casino/customers').slice(1).map((r) => iso(r.startedAt)), ['2026-11-22T10:02:00.000Z', '2026-11-22T10:04:00.000Z', '2026-11-22T10:06:00.000Z']);
    assert.deepEqual(world.runsOf('casino/transactions').length, 1);
    assert.deepEqual(world.runsOf('prop/customers').map((r) => iso(r.startedAt)), ['2026-11-22T10:01:00.000Z', '2026-11-22T10:05:00.000Z']);
  });
});
