/**
 * Freshness breaches (spec §1): a customers or transactions stream more than 5 minutes behind,
 * or the previous UTC day's activity not loaded at 06:00 UTC. Pushed streams are covered too
 * (nothing pushed for 5 minutes, yesterday's activity not pushed by 06:00: src/push/freshness.ts). `status --check` and the worker
 * use the same rule. The worker checks every minute (at second 30, away from the minute marks
 * where five-minute schedules fire) and after each run, and reports a change (after a grace
 * period at start, while the catch-up runs are under way): a breach is an
 * error event in the log (`event: freshness_breach`), an alert to the webhook and a gauge; the
 * recovery is an info event and an alert. With several workers, only the one holding the
 * monitor lock reports, so one breach is one alert.
 */
import { invalidStreams } from '../config/invalid-streams.js';
import type { InvalidDefinition } from '../config/load-definitions.js';
import { DELTA_TARGET_MS, freshness, isBreach, type Freshness } from '../freshness.js';
import { streamFreshness, type PushedState } from '../push/freshness.js';
import type { Logger } from '../log.js';
import type { Entity } from '../types.js';
import type { Alerter, AlertEvent } from './alert.js';
import type { Condition } from '../alerts/message.js';
import { STORE_CONDITION_KINDS } from './alert-conditions.js';
import type { StreamLocks, Lease } from '../store/stream-locks.js';
import type { WorkerMetrics } from './metrics.js';
import type { Timers, TimerHandle } from './timers.js';

export type StreamState = { watermark?: string; last_day?: string; days?: Record<string, string>; halted?: { detail: string }; pushed?: PushedState };

export interface StreamFreshness {
  partner: string;
  stream: Entity;
  freshness: Freshness;
  breach: boolean;
}

const split = (key: string): { partner: string; stream: Entity } => {
  const cut = key.lastIndexOf('/');
  return { partner: key.slice(0, cut), stream: key.slice(cut + 1) as Entity };
};

/**
 * Freshness of each configured stream from its stored state. `broken`: the streams of definition
 * files that cannot load (`partner/stream` → why, src/config/invalid-streams.ts): not pulled, so
 * `stopped`, unless a configured definition still pulls them.
 */
export function assessStreams(streams: readonly { partner: string; stream: Entity }[], states: ReadonlyMap<string, StreamState>, now: Date, broken: ReadonlyMap<string, string> = new Map()): StreamFreshness[] {
  // Pulled streams (configured), streams of invalid definitions, then streams fed by pushes alone (src/push/freshness.ts).
  const pulled = new Set(streams.map((s) => `${s.partner}/${s.stream}`));
  const stopped = [...broken.keys()].filter((key) => !pulled.has(key));
  const pushedOnly = [...states].filter(([key, s]) => s.pushed && !pulled.has(key) && !broken.has(key)).map(([key]) => split(key));
  return [...streams, ...stopped.map(split), ...pushedOnly].map(({ partner, stream }) => {
    const key = `${partner}/${stream}`;
    const halted = pulled.has(key) ? undefined : broken.get(key);
    const state = halted === undefined ? states.get(key) : { ...states.get(key), halted: { detail: halted } };
    const f = streamFreshness(stream, state, now, pulled.has(key) || halted !== undefined)?.freshness ?? freshness(stream, undefined, now);
    return { partner, stream, freshness: f, breach: isBreach(f) };
  });
}

export interface FreshnessMonitorOptions {
  timers: Timers;
  logger: Logger;
  /** The configured streams (read at each check: a reload changes them). */
  streams(): { partner: string; stream: Entity }[];
  /** The definition files that cannot load and pull nothing (read at each check): their streams count as stopped. */
  invalid?(): readonly InvalidDefinition[];
  /** Stored state by `partner/stream`. */
  readStates(): Promise<Map<string, StreamState>>;
  locks: StreamLocks;
  alerter?: Alerter;
  metrics?: WorkerMetrics;
  /** Between checks (default 60 s); checks fall at `offsetMs` past the interval's marks. */
  intervalMs?: number;
  offsetMs?: number;
  /**
   * After start, checks only update the gauges for this long (default 5 minutes, the delta
   * target): the catch-up runs are under way, and a stream not yet reached is not news.
   */
  graceMs?: number;
  /** True during a store outage the scheduler has already reported: store failures here go to debug. */
  storeDown?(): boolean;
  /** Deletes the mass-delete guard held that no alert went out for yet (marked alerted as they are read). */
  newDeleteHolds?(): Promise<readonly { id: number; partner: string; entity: string; ids: readonly string[]; reason: string; learnedVia: string }[]>;
  /** The alert conditions read from the store (src/worker/alert-conditions.ts), handed to the alerter's `sync` at each check. */
  conditions?(now: Date): Promise<Condition[]>;
}

export const MONITOR_LOCK = 'freshness-monitor';

export class FreshnessMonitor {
  private readonly breached = new Map<string, boolean>();
  private timer: TimerHandle | undefined;
  private leader: Lease | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private reportFrom = 0;

  constructor(private readonly options: FreshnessMonitorOptions) {}

  start(): void {
    this.stopped = false;
    this.reportFrom = this.options.timers.now().getTime() + (this.options.graceMs ?? DELTA_TARGET_MS);
    this.arm();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.options.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.running.catch(() => undefined);
    await this.leader?.release();
    this.leader = undefined;
  }

  private arm(): void {
    if (this.stopped) return;
    const interval = this.options.intervalMs ?? 60_000;
    const offset = this.options.offsetMs ?? 30_000;
    const now = this.options.timers.now().getTime();
    let at = Math.floor((now - offset) / interval) * interval + offset + interval;
    if (at <= now) at += interval;
    this.timer = this.options.timers.setTimeout(() => {
      this.timer = undefined;
      void this.check().finally(() => this.arm());
    }, at - now);
  }

  /** Resolves when the checks under way have finished. */
  async settled(): Promise<void> {
    await this.running.catch(() => undefined);
  }

  /** Checks every configured stream now; reports changes; resolves to the assessment. */
  check(): Promise<StreamFreshness[]> {
    const next = this.running.catch(() => undefined).then(() => this.checkNow());
    this.running = next;
    return next;
  }

  private async isLeader(): Promise<boolean> {
    if (this.leader?.held) return true;
    await this.leader?.release();
    this.leader = undefined;
    try {
      this.leader = await this.options.locks.tryAcquire(MONITOR_LOCK);
    } catch (error) {
      this.options.logger.log(this.options.storeDown?.() ? 'debug' : 'warn', `freshness check: cannot take the monitor lock: ${(error as Error).message}`);
    }
    return this.leader !== undefined;
  }

  private async checkNow(): Promise<StreamFreshness[]> {
    const { logger, metrics, alerter } = this.options;
    let states: Map<string, StreamState>;
    try {
      states = await this.options.readStates();
    } catch (error) {
      logger.log(this.options.storeDown?.() ? 'debug' : 'error', `freshness check failed: cannot read the store: ${(error as Error).message}`, { event: 'freshness_check_failed' });
      return [];
    }
    const now = this.options.timers.now();
    const assessed = assessStreams(this.options.streams(), states, now, invalidStreams(this.options.invalid?.() ?? [], states.keys()));
    for (const a of assessed) {
      const labels = { partner: a.partner, stream: a.stream };
      metrics?.lag.set(labels, (a.freshness.lagMs ?? 0) / 1000);
      metrics?.breach.set(labels, a.breach ? 1 : 0);
    }
    // The grace is freshness's (a stream not reached yet by the catch-up is not news); what the
    // store says of runs, postbacks, holds and rates is news at once.
    if (now.getTime() < this.reportFrom) {
      if (this.options.conditions && (await this.isLeader())) await this.reportConditions(now);
      return assessed;
    }
    const leader = await this.isLeader();
    const current = new Set(assessed.map((a) => `${a.partner}/${a.stream}`));
    for (const key of [...this.breached.keys()]) if (!current.has(key)) this.breached.delete(key);
    for (const a of assessed) {
      const key = `${a.partner}/${a.stream}`;
      const was = this.breached.get(key) ?? false;
      // A worker that is not the reporter keeps quiet, and reports afresh if it becomes the reporter.
      if (!leader) {
        this.breached.delete(key);
        continue;
      }
      this.breached.set(key, a.breach);
      if (a.breach === was) continue;
      const event: AlertEvent = {
        event: a.breach ? 'freshness_breach' : 'freshness_recovered',
        partner: a.partner,
        stream: a.stream,
        state: a.freshness.state,
        lag_seconds: a.freshness.lagMs === null ? null : Math.round(a.freshness.lagMs / 1000),
        target: a.freshness.target,
        detail: a.freshness.detail,
        at: now.toISOString(),
      };
      const meta = { event: event.event, partner: a.partner, stream: a.stream, state: event.state, lag_ms: a.freshness.lagMs, target: event.target };
      if (a.breach) logger.error(`freshness breach: ${a.partner}/${a.stream}: ${a.freshness.detail} (target: ${a.freshness.target})`, meta);
      else logger.info(`freshness recovered: ${a.partner}/${a.stream}: ${a.freshness.detail}`, meta);
      if (alerter) await alerter.send(event);
    }
    if (leader) {
      await this.reportDeleteHolds(now);
      await this.reportConditions(now);
    }
    return assessed;
  }

  /** The store's alert conditions to the router (started, ended), then the repeats due. */
  private async reportConditions(now: Date): Promise<void> {
    const { alerter, logger } = this.options;
    if (alerter?.sync && this.options.conditions) {
      try {
        await alerter.sync(STORE_CONDITION_KINDS, await this.options.conditions(now), now);
      } catch (error) {
        logger.log(this.options.storeDown?.() ? 'debug' : 'warn', `alert conditions: cannot read the store: ${(error as Error).message}`, { event: 'alert_conditions_failed' });
      }
    }
    await alerter?.tick?.(now);
  }

  /** One error event and one alert per hold of the mass-delete guard, once. */
  private async reportDeleteHolds(now: Date): Promise<void> {
    const { logger, alerter } = this.options;
    const holds = await this.options.newDeleteHolds?.().catch((error: Error) => {
      logger.warn(`cannot read the held deletes: ${error.message}`);
      return [];
    }) ?? [];
    for (const h of holds) {
      const detail = `hold ${h.id}: ${h.ids.length} ${h.entity} deletes (${h.learnedVia}) held, ${h.reason}; nothing is deleted until partner-sync deletes apply ${h.id} (or discard ${h.id})`;
      logger.error(`deletes held: ${h.partner}/${h.entity}: ${detail}`, { event: 'deletes_held', partner: h.partner, stream: h.entity, hold: h.id, records: h.ids.length });
      if (alerter) await alerter.send({ event: 'deletes_held', partner: h.partner, stream: h.entity, state: 'held', lag_seconds: null, target: 'no mass delete', detail, at: now.toISOString() });
    }
  }
}
