/**
 * The worker's FX feed (docs/commissions.md, The FX feed): daily at the configured UTC time, one
 * worker at a time (a lock), the configured source is read (jobs/fx-feed.ts) and its rates
 * written, releasing what waited for them. A read that fails after its retries writes nothing and
 * is an error event `fx_feed_failed` and one alert; the next read that succeeds after failures
 * sends `fx_feed_recovered`.
 */
import { fetchFxFeed, type FeedResult } from '../../jobs/fx-feed.js';
import type { Plan } from '../commission/plans.js';
import type { FeedConfig } from '../commission/fx-feed.js';
import type { Logger } from '../log.js';
import type { StreamLocks } from '../store/stream-locks.js';
import type { Store } from '../store/store.js';
import type { Alerter } from './alert.js';
import { parseCron } from './cron.js';
import type { TimerHandle, Timers } from './timers.js';

export interface FxFeedScheduleOptions {
  store: Store;
  timers: Timers;
  logger: Logger;
  locks: StreamLocks;
  feed: FeedConfig;
  plans: () => readonly Plan[];
  alerter?: Alerter;
  fetch?: typeof fetch;
}

export interface FxFeedSchedule {
  /** Reads the feed now (under the lock); undefined when another worker holds it or the read failed. */
  runNow(): Promise<FeedResult | undefined>;
  settled(): Promise<void>;
  stop(): Promise<void>;
}

export function startFxFeedSchedule(o: FxFeedScheduleOptions): FxFeedSchedule {
  const [hh, mm] = o.feed.at.split(':').map(Number);
  const cron = parseCron(`${mm} ${hh} * * *`);
  let timer: TimerHandle | undefined;
  let stopped = false;
  let failing = false;
  let running: Promise<FeedResult | undefined> = Promise.resolve(undefined);
  const sleep = (ms: number) => new Promise<void>((resolve) => o.timers.setTimeout(resolve, ms));
  const alert = (event: 'fx_feed_failed' | 'fx_feed_recovered', detail: string) => o.alerter?.send({ event, partner: '-', stream: 'fx', state: event === 'fx_feed_failed' ? 'failed' : 'ok', lag_seconds: null, target: `rates by ${o.feed.at} UTC daily`, detail, at: o.timers.now().toISOString() });

  async function once(): Promise<FeedResult | undefined> {
    const lease = await o.locks.tryAcquire('fx-feed').catch(() => undefined);
    if (lease === undefined) return undefined;
    try {
      const r = await fetchFxFeed(o.store, o.plans(), { format: o.feed.format, url: o.feed.url, retries: o.feed.retries, retryDelayMs: o.feed.retryDelayMs }, o.logger, { fetch: o.fetch, sleep });
      const days = r.days.map((d) => `${d.date} ${d.rates}${d.carriedFrom ? ` (carried from ${d.carriedFrom})` : ''}`).join(', ');
      o.logger.info(`fx feed: rates of ${r.publication}: ${days}; ${r.added} new, ${r.changed} changed; commissions: ${r.released} held entries released, ${r.lines} lines, ${r.stillHeld} still held`, { event: 'fx_feed_done', publication: r.publication, added: r.added, changed: r.changed, released: r.released });
      if (failing) await alert('fx_feed_recovered', `the FX feed answered again: rates of ${r.publication}`);
      failing = false;
      return r;
    } catch (error) {
      const detail = `the FX feed (${o.feed.format}) failed: ${(error as Error).message}; no rate was written, held commissions stay held. Run partner-sync fx fetch, or partner-sync fx import FILE.csv`;
      o.logger.error(detail, { event: 'fx_feed_failed' });
      if (!failing) await alert('fx_feed_failed', detail);
      failing = true;
      return undefined;
    } finally {
      await lease.release();
    }
  }

  const arm = () => {
    if (stopped) return;
    if (timer) o.timers.clearTimeout(timer);
    timer = o.timers.setTimeout(() => {
      running = running.catch(() => undefined).then(once);
      void running.then(arm);
    }, Math.max(0, cron.next(o.timers.now()).getTime() - o.timers.now().getTime()));
  };
  arm();

  return {
    runNow() {
      running = running.catch(() => undefined).then(once);
      return running;
    },
    settled: () => running.then(() => undefined, () => undefined),
    async stop() {
      stopped = true;
      if (timer) o.timers.clearTimeout(timer);
      await running.catch(() => undefined);
    },
  };
}
