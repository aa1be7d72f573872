/**
 * The worker's daily purge (docs/personal-data.md, "Retention"): at 03:30 UTC by default, what the
 * retention no longer keeps goes (src/privacy/retention.ts), one worker at a time (a lock), in
 * small transactions under a budget so that it never holds the load path; when the budget runs out
 * with rows still due, it goes on a few minutes later until nothing is due.
 */
import type { Logger } from '../log.js';
import { purge, type Purge, type Retention } from '../privacy/retention.js';
import type { StreamLocks } from '../store/stream-locks.js';
import type { Store } from '../store/store.js';
import { parseCron } from './cron.js';
import type { TimerHandle, Timers } from './timers.js';

export const DEFAULT_PURGE_SCHEDULE = '30 3 * * *';
/** How soon a purge whose budget ran out goes on. */
const AGAIN_MS = 5 * 60_000;

export interface PurgeScheduleOptions {
  store: Store;
  timers: Timers;
  logger: Logger;
  locks: StreamLocks;
  retention: Retention;
  /** Cron (UTC); default DEFAULT_PURGE_SCHEDULE. */
  schedule?: string;
  /** Budget of one purge (default 60 s). */
  budgetMs?: number;
}

export interface PurgeSchedule {
  /** Purges now (under the lock); undefined when another worker holds it or the purge failed. */
  runNow(): Promise<Purge | undefined>;
  stop(): Promise<void>;
}

export function startPurgeSchedule(o: PurgeScheduleOptions): PurgeSchedule {
  const cron = parseCron(o.schedule ?? DEFAULT_PURGE_SCHEDULE);
  let timer: TimerHandle | undefined;
  let stopped = false;
  let running: Promise<Purge | undefined> = Promise.resolve(undefined);

  async function once(): Promise<Purge | undefined> {
    const lease = await o.locks.tryAcquire('purge').catch(() => undefined);
    if (lease === undefined) return undefined;
    try {
      const result = await purge(o.store, o.retention, { budgetMs: o.budgetMs });
      const counts = Object.fromEntries(result.results.map((r) => [r.kind, r.purged]));
      o.logger.info(`purge: ${result.results.map((r) => `${r.kind} ${r.purged}`).join(', ')}${result.more ? '; rows still due, going on shortly' : ''}`, { event: 'purge_done', ...counts, more: result.more, duration_ms: Math.round(result.durationMs) });
      return result;
    } catch (error) {
      o.logger.error(`purge failed: ${(error as Error).message}`, { event: 'purge_failed' });
      return undefined;
    } finally {
      await lease.release();
    }
  }

  const arm = (ms: number) => {
    if (stopped) return;
    if (timer) o.timers.clearTimeout(timer);
    timer = o.timers.setTimeout(() => {
      running = running.catch(() => undefined).then(once);
      void running.then((r) => arm(r?.more ? AGAIN_MS : Math.max(0, cron.next(o.timers.now()).getTime() - o.timers.now().getTime())));
    }, ms);
  };
  arm(Math.max(0, cron.next(o.timers.now()).getTime() - o.timers.now().getTime()));

  return {
    runNow() {
      running = running.catch(() => undefined).then(once);
      return running;
    },
    async stop() {
      stopped = true;
      if (timer) o.timers.clearTimeout(timer);
      await running.catch(() => undefined);
    },
  };
}
