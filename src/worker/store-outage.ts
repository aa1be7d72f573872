/**
 * A store outage as the scheduler lives through it. A tick whose store steps fail (the stream
 * lock, "has this slot run?", "has the day loaded?") is not lost: it is held, and run once when
 * the store answers again, so a 20-second outage costs 20 seconds of freshness, not a whole
 * schedule period. While the store is down no tick tries it: due ticks are held too (the latest
 * slot per stream stands for the ones before it, as after a late wake-up), and one probe asks the
 * store with a bounded backoff (1 s, 2 s, 4 s ... at most 30 s). One line when the outage starts,
 * one when it ends; nothing per stream per tick.
 *
 * A store that answers the probe but fails the held ticks again (flapping) starts a new outage
 * whose backoff continues where the last one stopped, so the lines stay bounded too.
 */
import type { Alerter } from '../alerts/router.js';
import type { Logger } from '../log.js';
import type { StreamJob } from './jobs.js';
import type { Slot } from './slot.js';
import type { TimerHandle, Timers } from './timers.js';

export const DEFAULT_STORE_RETRY = { initialMs: 1_000, maxMs: 30_000 };

export interface StoreOutageOptions {
  timers: Timers;
  logger: Logger;
  /** Resolves when the store answers (none: the held ticks are the probe). */
  ping?: () => Promise<void>;
  initialMs?: number;
  maxMs?: number;
  /** The store answers again: run each held slot once (keys are job keys). */
  recovered(held: ReadonlyMap<string, Slot>): void;
  /** Work in progress (a probe), for the scheduler's idle(). */
  track(work: Promise<void>): void;
  /** Told when an outage starts and when it ends (the alert router). */
  alerter?: Alerter;
}

interface Outage {
  since: Date;
  error: string;
  attempts: number;
  held: Map<string, Slot>;
  timer?: TimerHandle;
}

const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`;

export class StoreOutage {
  private current: Outage | undefined;
  private lastRecovery: { at: number; attempts: number } | undefined;
  private stopped = false;
  private readonly initialMs: number;
  private readonly maxMs: number;

  constructor(private readonly options: StoreOutageOptions) {
    this.initialMs = options.initialMs ?? DEFAULT_STORE_RETRY.initialMs;
    this.maxMs = Math.max(options.maxMs ?? DEFAULT_STORE_RETRY.maxMs, this.initialMs);
  }

  get active(): boolean {
    return this.current !== undefined;
  }

  /** For the health detail: since when, and how many ticks wait. */
  describe(): string | undefined {
    const o = this.current;
    return o && `the store has not answered since ${o.since.toISOString()} (${o.error}); ${o.held.size} tick(s) held`;
  }

  /** A due tick while the store is down: kept (the latest per stream) for when it answers. */
  hold(job: StreamJob, slot: Slot): void {
    const o = this.current;
    if (!o) return;
    const before = o.held.get(job.key);
    if (!before || slot.at >= before.at) o.held.set(job.key, slot);
    this.options.logger.debug('tick held: the store does not answer', { partner: job.partner, stream: job.stream, scheduled_for: slot.scheduledFor.toISOString(), event: 'tick_held' });
  }

  /** A store step of a tick failed: the tick is held, and an outage starts unless one is under way. */
  failed(job: StreamJob, slot: Slot, error: unknown): void {
    if (this.stopped) return;
    if (!this.current) {
      const now = this.options.timers.now();
      const message = (error as Error)?.message ?? String(error);
      // Flapping: a new outage soon after the last one keeps its backoff.
      const last = this.lastRecovery;
      const attempts = last && now.getTime() - last.at < this.maxMs * 2 ? last.attempts + 1 : 0;
      this.current = { since: now, error: message, attempts, held: new Map() };
      this.options.logger.error(
        `the store does not answer (${message}): ticks are held and run once when it answers again; asking it again in ${seconds(this.delay(attempts))}, then backing off to at most ${seconds(this.maxMs)}`,
        { event: 'store_unreachable', partner: job.partner, stream: job.stream, scheduled_for: slot.scheduledFor.toISOString() },
      );
      this.armProbe();
      void this.options.alerter?.send({ event: 'store_outage', partner: '-', stream: '-', state: 'down', lag_seconds: null, target: 'the store answers', detail: `the store does not answer (${message}); scheduled runs are held and run once when it answers again`, at: now.toISOString() });
    }
    this.hold(job, slot);
  }

  stop(): void {
    this.stopped = true;
    if (this.current?.timer) this.options.timers.clearTimeout(this.current.timer);
    this.current = undefined;
  }

  private delay(attempts: number): number {
    return Math.min(this.initialMs * 2 ** Math.min(attempts, 30), this.maxMs);
  }

  private armProbe(): void {
    const o = this.current;
    if (!o || this.stopped) return;
    o.timer = this.options.timers.setTimeout(() => {
      o.timer = undefined;
      this.options.track(this.probe(o));
    }, this.delay(o.attempts));
  }

  private async probe(o: Outage): Promise<void> {
    try {
      await this.options.ping?.();
    } catch (error) {
      if (this.current !== o) return;
      o.attempts += 1;
      this.options.logger.debug(`the store still does not answer: ${(error as Error).message}`, { event: 'store_probe_failed', attempt: o.attempts });
      this.armProbe();
      return;
    }
    if (this.current !== o || this.stopped) return;
    const now = this.options.timers.now();
    this.current = undefined;
    this.lastRecovery = { at: now.getTime(), attempts: o.attempts };
    const keys = [...o.held.keys()];
    this.options.logger.info(
      `the store answers again after ${seconds(now.getTime() - o.since.getTime())} (down since ${o.since.toISOString()}): running the ${keys.length} held tick(s) once: ${keys.join(', ') || 'none'}`,
      { event: 'store_recovered', down_since: o.since.toISOString(), held: keys },
    );
    void this.options.alerter?.send({ event: 'store_recovered', partner: '-', stream: '-', state: 'ok', lag_seconds: null, target: 'the store answers', detail: `the store answers again after ${seconds(now.getTime() - o.since.getTime())}; ${keys.length} held run(s) started`, at: now.toISOString() });
    this.options.recovered(o.held);
  }
}
