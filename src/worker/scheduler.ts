/**
 * The scheduler: when each (partner, stream) runs, and what a run is told.
 *
 * Each job has slots: the fire times of its cron expression (UTC) and, for a daily job, retry
 * slots every `dailyRetryMs` after a fire until the next one. A slot is pure arithmetic on the
 * expression, so every worker computes the same slots, and "has this slot been run?" is a question
 * to the store (a run that started at or after the slot), not to local memory. At a slot:
 *
 * - the job still running here from an earlier slot: the tick is skipped, logged (overlap);
 * - a retry slot of a daily job whose day has loaded: nothing to do;
 * - otherwise the (partner, stream) lock is tried: held elsewhere, the tick is skipped (another
 *   worker runs it); a run already started since the slot (another worker was quicker): skipped;
 * - else the run, told the fire time it was scheduled for (the daily window comes from it).
 *
 * On start, each job's latest slot is fired at once (catch-up): a delta stream whose last run is
 * older than its last fire time runs now; a daily stream whose previous day has not loaded runs
 * now, and its missed days come with it (the window reaches back to the last loaded day).
 * Late wake-ups (a suspended machine, a blocked loop) fire the latest due slot once, not each one.
 * A tick whose store steps fail is held and run once when the store answers again (store-outage.ts).
 *
 * Stop: no new runs; running ones are awaited up to a bound, then reported as abandoned (the
 * caller ends the process; an unfinished batch is rolled back and its checkpoint does not move).
 */
import type { StreamRunResult } from '../../jobs/sync-stream.js';
import type { Alerter } from '../alerts/router.js';
import type { Logger } from '../log.js';
import { emptyCounts } from '../store/runs.js';
import { requiredDay, type StreamJob } from './jobs.js';
import type { StreamLocks } from '../store/stream-locks.js';
import type { Slot } from './slot.js';
import { StoreOutage } from './store-outage.js';
import type { TimerHandle, Timers } from './timers.js';

export type SkipReason = 'overlap' | 'locked' | 'done' | 'loaded';

export interface SchedulerPorts {
  /** One run of the job's (partner, stream), scheduled for `scheduledFor`. */
  run(job: StreamJob, scheduledFor: Date): Promise<StreamRunResult>;
  /** Whether a scheduled run of the stream started at or after `since`, in any worker. */
  ranSince(job: StreamJob, since: Date): Promise<boolean>;
  /** Whether a daily stream has loaded this UTC day. */
  dayLoaded(job: StreamJob, day: string): Promise<boolean>;
  /** With the lock held, before the run (e.g. close run rows a dead worker left `running`). */
  beforeRun?(job: StreamJob): Promise<void>;
  /** With the lock still held, after the run. */
  afterRun?(job: StreamJob, result: StreamRunResult): Promise<void>;
  /** Resolves when the store answers (asked while ticks are held by an outage). */
  ping?(): Promise<void>;
}

export interface SchedulerEvents {
  runStarted?(job: StreamJob, slot: Slot): void;
  runFinished?(job: StreamJob, slot: Slot, result: StreamRunResult): void;
  skipped?(job: StreamJob, slot: Slot, reason: SkipReason): void;
}

export interface SchedulerOptions {
  timers: Timers;
  logger: Logger;
  locks: StreamLocks;
  ports: SchedulerPorts;
  events?: SchedulerEvents;
  /** Between retries of a daily run whose day has not loaded (default 15 minutes). */
  dailyRetryMs?: number;
  /** Runs at once in this worker (default unlimited); more wait their turn. */
  maxConcurrentRuns?: number;
  /** The loop wakes at least this often (default 60 s), so a stalled loop or a clock jump is noticed. */
  maxSleepMs?: number;
  /** Backoff of the store probe while it does not answer (default 1 s doubling to 30 s). */
  storeRetry?: { initialMs: number; maxMs: number };
  /** Told when a store outage starts and ends. */
  alerter?: Alerter;
}

export interface RunningJob {
  job: StreamJob;
  slot: Slot;
  phase: 'waiting' | 'running';
  since: Date;
}

interface JobState {
  job: StreamJob;
  next: Slot;
  busy?: RunningJob;
}

export interface StopResult {
  /** Runs still going when the bound passed. */
  abandoned: RunningJob[];
}

export const DEFAULT_DAILY_RETRY_MS = 15 * 60_000;

/** A bounded number of permits; waiters are let go (with no permit) when it is drained. */
class Permits {
  private waiters: ((granted: boolean) => void)[] = [];
  private drained = false;
  constructor(private free: number) {}

  acquire(): Promise<boolean> {
    if (this.drained) return Promise.resolve(false);
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next(true);
    else this.free += 1;
  }

  drain(): void {
    this.drained = true;
    for (const w of this.waiters.splice(0)) w(false);
  }
}

export class Scheduler {
  private readonly jobs = new Map<string, JobState>();
  private readonly active = new Set<Promise<void>>();
  private readonly idleWaiters: (() => void)[] = [];
  private readonly permits: Permits;
  private readonly retryMs: number;
  private readonly maxSleepMs: number;
  private timer: TimerHandle | undefined;
  private started = false;
  private stopping = false;
  private lastWake: Date | undefined;
  private readonly outage: StoreOutage;

  constructor(private readonly options: SchedulerOptions) {
    this.outage = new StoreOutage({
      timers: options.timers,
      logger: options.logger,
      ping: options.ports.ping?.bind(options.ports),
      ...options.storeRetry,
      recovered: (held) => {
        for (const [key, slot] of held) {
          const state = this.jobs.get(key);
          if (state) this.fire(state, { ...slot, reason: 'recovery' });
        }
      },
      track: (work) => this.track(work),
      alerter: options.alerter,
    });
    this.retryMs = options.dailyRetryMs ?? DEFAULT_DAILY_RETRY_MS;
    this.maxSleepMs = options.maxSleepMs ?? 60_000;
    if (!(this.retryMs > 0)) throw new Error('dailyRetryMs must be positive');
    this.permits = new Permits(options.maxConcurrentRuns ?? Number.POSITIVE_INFINITY);
  }

  /** The slot after `after` (exclusive). */
  nextSlot(job: StreamJob, after: Date): Slot {
    const fire = job.schedule.next(after);
    if (job.mode === 'daily') {
      const last = job.schedule.previous(after);
      if (last) {
        const k = Math.floor((after.getTime() - last.getTime()) / this.retryMs) + 1;
        const retry = new Date(last.getTime() + k * this.retryMs);
        if (retry < fire) return { at: retry, scheduledFor: last, reason: 'retry' };
      }
    }
    return { at: fire, scheduledFor: fire, reason: 'schedule' };
  }

  /** The latest slot at or before `at`. */
  latestSlot(job: StreamJob, at: Date): Slot | undefined {
    const last = job.schedule.previous(at);
    if (!last) return undefined;
    if (job.mode === 'delta') return { at: last, scheduledFor: last, reason: 'schedule' };
    const k = Math.floor((at.getTime() - last.getTime()) / this.retryMs);
    return k === 0 ? { at: last, scheduledFor: last, reason: 'schedule' } : { at: new Date(last.getTime() + k * this.retryMs), scheduledFor: last, reason: 'retry' };
  }

  /** Sets the jobs (start, or a reload): new ones are added (and caught up when running), changed schedules re-planned, removed ones dropped (a run in progress finishes). */
  setJobs(jobs: readonly StreamJob[]): { added: string[]; removed: string[]; rescheduled: string[] } {
    const now = this.options.timers.now();
    const added: string[] = [];
    const rescheduled: string[] = [];
    const wanted = new Set(jobs.map((j) => j.key));
    const removed = [...this.jobs.keys()].filter((k) => !wanted.has(k));
    for (const key of removed) this.jobs.delete(key);
    for (const job of jobs) {
      const state = this.jobs.get(job.key);
      if (state) {
        const changed = state.job.schedule.expression !== job.schedule.expression || state.job.mode !== job.mode;
        state.job = job;
        if (changed) {
          state.next = this.nextSlot(job, now);
          rescheduled.push(job.key);
        }
        continue;
      }
      const fresh: JobState = { job, next: this.nextSlot(job, now) };
      this.jobs.set(job.key, fresh);
      added.push(job.key);
      if (this.started && !this.stopping) this.catchUp(fresh, now);
    }
    if (this.started) this.arm();
    return { added, removed, rescheduled };
  }

  /** Starts the loop: catch-up runs now, then slots as they come. */
  start(): void {
    if (this.started) return;
    this.started = true;
    const now = this.options.timers.now();
    this.lastWake = now;
    for (const state of this.jobs.values()) this.catchUp(state, now);
    this.arm();
  }

  /** Whether ticks are held for a store that does not answer (reported once, by the scheduler). */
  storeDown(): boolean {
    return this.outage.active;
  }

  /** What runs (or waits for a permit) now. */
  running(): RunningJob[] {
    return [...this.jobs.values()].flatMap((s) => (s.busy ? [s.busy] : []));
  }

  /** Next slot of each job. */
  plan(): { key: string; next: Slot }[] {
    return [...this.jobs.values()].map((s) => ({ key: s.job.key, next: s.next }));
  }

  /** Alive: not stopping and the loop woke recently. */
  health(): { ok: boolean; detail: string } {
    if (this.stopping) return { ok: false, detail: 'stopping' };
    if (!this.started || !this.lastWake) return { ok: false, detail: 'not started' };
    const silentMs = this.options.timers.now().getTime() - this.lastWake.getTime();
    const outage = this.outage.describe();
    return silentMs <= 3 * this.maxSleepMs
      ? { ok: true, detail: `${this.jobs.size} streams scheduled, ${this.running().length} running${outage ? `; ${outage}` : ''}` }
      : { ok: false, detail: `the scheduler loop has not woken for ${Math.round(silentMs / 1000)} s` };
  }

  /** Resolves when no run is in progress or waiting. */
  idle(): Promise<void> {
    if (this.active.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** No new runs; waits for running ones up to `timeoutMs`; reports those still running then. */
  async stop(timeoutMs: number): Promise<StopResult> {
    this.stopping = true;
    this.outage.stop();
    if (this.timer) this.options.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.permits.drain();
    if (this.active.size === 0) return { abandoned: [] };
    let handle: TimerHandle | undefined;
    const timedOut = await Promise.race([
      this.idle().then(() => false),
      new Promise<boolean>((resolve) => (handle = this.options.timers.setTimeout(() => resolve(true), timeoutMs))),
    ]);
    if (handle) this.options.timers.clearTimeout(handle);
    return { abandoned: timedOut ? this.running().filter((r) => r.phase === 'running') : [] };
  }

  private log(job: StreamJob): Logger {
    return this.options.logger.child({ partner: job.partner, stream: job.stream });
  }

  private catchUp(state: JobState, now: Date): void {
    const slot = this.latestSlot(state.job, now);
    if (slot) this.fire(state, { ...slot, reason: 'catch-up' });
  }

  private arm(): void {
    if (this.timer) this.options.timers.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopping) return;
    const now = this.options.timers.now().getTime();
    let soonest = now + this.maxSleepMs;
    for (const s of this.jobs.values()) soonest = Math.min(soonest, s.next.at.getTime());
    this.timer = this.options.timers.setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, Math.max(0, soonest - now));
  }

  private wake(): void {
    if (this.stopping) return;
    const now = this.options.timers.now();
    this.lastWake = now;
    for (const state of this.jobs.values()) {
      if (state.next.at > now) continue;
      // Woken late (a suspended machine): the latest due slot stands for the ones missed.
      const latest = this.latestSlot(state.job, now);
      const slot = latest && latest.at >= state.next.at ? latest : state.next;
      state.next = this.nextSlot(state.job, now);
      this.fire(state, slot);
    }
    this.arm();
  }

  private fire(state: JobState, slot: Slot): void {
    const { job } = state;
    if (this.stopping) return;
    if (this.outage.active) return this.outage.hold(job, slot);
    if (state.busy) {
      // A retry slot while the run is still going: the run is the retry (as for a held tick).
      if (slot.reason === 'retry' || slot.reason === 'recovery') return;
      const b = state.busy;
      this.log(job).warn(
        `tick skipped: the previous run (scheduled for ${b.slot.scheduledFor.toISOString()}) is still ${b.phase === 'running' ? `running since ${b.since.toISOString()}` : 'waiting for a free slot'}`,
        { scheduled_for: slot.scheduledFor.toISOString(), skip: 'overlap' },
      );
      this.options.events?.skipped?.(job, slot, 'overlap');
      return;
    }
    const busy: RunningJob = { job, slot, phase: 'waiting', since: this.options.timers.now() };
    state.busy = busy;
    this.track(
      this.execute(state, busy)
        .catch((error: unknown) => {
          this.log(job).error(`scheduled run failed to start: ${(error as Error).message ?? String(error)}`, { scheduled_for: slot.scheduledFor.toISOString() });
        })
        .finally(() => {
          if (state.busy === busy) state.busy = undefined;
        }),
    );
  }

  /** Work idle() waits for: runs, and probes of the store during an outage. */
  private track(work: Promise<void>): void {
    const tracked = work.finally(() => {
      this.active.delete(tracked);
      if (this.active.size === 0) for (const w of this.idleWaiters.splice(0)) w();
    });
    this.active.add(tracked);
  }

  private async execute(state: JobState, busy: RunningJob): Promise<void> {
    const { job, slot } = busy;
    const { ports, locks, events, timers } = this.options;
    const log = this.log(job);
    const scheduledFor = slot.scheduledFor.toISOString();
    const day = job.mode === 'daily' ? requiredDay(slot.scheduledFor) : undefined;
    // A store step that fails holds the tick until the store answers (store-outage.ts).
    const held = (error: unknown): void => this.outage.failed(job, slot, error);
    let loaded = false;
    try {
      loaded = day !== undefined && slot.reason !== 'schedule' && (await ports.dayLoaded(job, day));
    } catch (error) {
      return held(error);
    }
    if (loaded) {
      events?.skipped?.(job, slot, 'loaded');
      return;
    }
    if (!(await this.permits.acquire())) return;
    try {
      if (this.stopping) return;
      let lease;
      try {
        lease = await locks.tryAcquire(job.key);
      } catch (error) {
        return held(error);
      }
      if (!lease) {
        log.info('tick skipped: another worker is running this stream', { scheduled_for: scheduledFor, skip: 'locked' });
        events?.skipped?.(job, slot, 'locked');
        return;
      }
      try {
        let ran: boolean;
        try {
          ran = await ports.ranSince(job, slot.at);
        } catch (error) {
          return held(error);
        }
        if (ran) {
          log.debug(`tick skipped: a run started since ${slot.at.toISOString()} (another worker)`, { scheduled_for: scheduledFor, skip: 'done' });
          events?.skipped?.(job, slot, 'done');
          return;
        }
        if (this.stopping) return;
        busy.phase = 'running';
        busy.since = timers.now();
        try {
          await ports.beforeRun?.(job);
        } catch (error) {
          return held(error);
        }
        events?.runStarted?.(job, slot);
        let result: StreamRunResult;
        try {
          result = await ports.run(job, slot.scheduledFor);
        } catch (error) {
          const message = (error as Error).message ?? String(error);
          log.error(`run failed: ${message}`, { scheduled_for: scheduledFor });
          result = { partner: job.partner, stream: job.stream, runId: '', kind: 'run', status: 'failed', windows: '', counts: emptyCounts(), error: message, durationMs: timers.now().getTime() - busy.since.getTime() };
        }
        try {
          await ports.afterRun?.(job, result);
        } catch (error) {
          log.warn(`after the run: ${(error as Error).message}`, { run_id: result.runId });
        }
        events?.runFinished?.(job, slot, result);
        if (day !== undefined && !(await ports.dayLoaded(job, day))) {
          const next = this.nextSlot(job, timers.now());
          log.warn(
            `${day} not loaded yet (run ${result.status}${result.error ? `: ${result.error}` : ''}); ${next.reason === 'retry' ? `retrying at ${next.at.toISOString()}` : `next run at ${next.at.toISOString()}`}`,
            { run_id: result.runId, scheduled_for: scheduledFor, day },
          );
        }
      } finally {
        await lease.release();
      }
    } finally {
      this.permits.release();
    }
  }
}
