/**
 * The deliverer: sends the outbox's events to the trackers. The worker and `serve` both run it
 * (the same code), and several of either may share one PostgreSQL store: claims (./claims.ts)
 * make each event go out from one process at a time.
 *
 * Rules it keeps:
 * - One lane per postback (destination): a lane sends its claimed events (one per customer at a
 *   time) no faster than the postback's rate, over keep-alive connections; lanes run side by side,
 *   so a slow or dead tracker delays only its own.
 * - A failed attempt that may succeed later (network, timeout, 408, 429, 5xx) is retried with
 *   exponential backoff and jitter; an event still failing `retryWindowMs` (default 24 h) after it
 *   was written (or replayed) is dead: kept, listed, replayable. An answer that will not change
 *   (another 4xx, a redirect, a refused destination) makes it dead at once.
 * - Nothing is lost to a crash: an attempt's result is written after it; a killed process's lease
 *   expires and the event is sent again with the same event id.
 */
import type { Logger } from '../log.js';
import { MetricsRegistry } from '../metrics.js';
import type { Store } from '../store/store.js';
import { claim, deliverySummary, duePostbacks, settle, settleDelivered, storeTime, type AttemptOutcome, type ClaimedEvent } from './claims.js';
import { getPostback, type PostbackDefinition } from './definitions.js';
import { deriveSecret } from './secret.js';
import { laneAgents, sendEvent, type AttemptResult } from './send.js';

export interface DeliveryOptions {
  /** One attempt's deadline (connect, send, answer). */
  timeoutMs: number;
  /** How long an event is retried before it is dead. */
  retryWindowMs: number;
  /** The first retry's delay; each next one doubles, up to maxDelayMs; each is jittered to 50-100%. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** How often due events are looked for. */
  pollMs: number;
  /** Events one lane claims at a time. */
  batch: number;
  /** Lanes (postbacks) one process sends to at once. */
  maxLanes: number;
  /** Added to a claim's lease past the time its attempts can take: how long a killed process's events wait before another takes them. */
  leaseMarginMs: number;
}

export const DEFAULT_DELIVERY: DeliveryOptions = {
  timeoutMs: 10_000, retryWindowMs: 24 * 3600_000, baseDelayMs: 10_000, maxDelayMs: 3600_000, pollMs: 500, batch: 50, maxLanes: 32, leaseMarginMs: 30_000,
};

const ENV: Record<keyof DeliveryOptions, string> = {
  timeoutMs: 'POSTBACK_TIMEOUT_MS', retryWindowMs: 'POSTBACK_RETRY_WINDOW_MS', baseDelayMs: 'POSTBACK_RETRY_BASE_MS', maxDelayMs: 'POSTBACK_RETRY_MAX_MS',
  pollMs: 'POSTBACK_POLL_MS', batch: 'POSTBACK_BATCH', maxLanes: 'POSTBACK_MAX_LANES', leaseMarginMs: 'POSTBACK_LEASE_MARGIN_MS',
};

/** The delivery settings: defaults, each replaceable by its POSTBACK_* variable; throws naming a bad one. */
export function deliveryOptionsFromEnv(env: NodeJS.ProcessEnv): DeliveryOptions {
  const out = { ...DEFAULT_DELIVERY };
  for (const [key, name] of Object.entries(ENV) as [keyof DeliveryOptions, string][]) {
    const text = env[name];
    if (text === undefined || text === '') continue;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number of at least 1, got ${JSON.stringify(text)}`);
    out[key] = n;
  }
  return out;
}

/** The delay before attempt `attempts + 1`: exponential, capped, jittered to [50%, 100%]. */
export function backoffMs(options: DeliveryOptions, attempts: number, random: () => number = Math.random): number {
  const full = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(full / 2 + random() * (full / 2));
}

/** How often the unsettled and lag gauges are read from the store. */
const SUMMARY_EVERY_MS = 10_000;

export function deliveryMetrics(registry: MetricsRegistry = new MetricsRegistry()) {
  return {
    delivered: registry.counter('partner_sync_postbacks_delivered_total', 'Postback events delivered (a 2xx answer), by event kind.', ['event']),
    failed: registry.counter('partner_sync_postbacks_failed_attempts_total', 'Postback attempts that failed (will be retried or are dead), by event kind.', ['event']),
    dead: registry.counter('partner_sync_postbacks_dead_total', 'Postback events given up on (dead; replayable), by event kind.', ['event']),
    pending: registry.gauge('partner_sync_postbacks_unsettled', 'Postback events pending or retrying in the store.'),
    lag: registry.gauge('partner_sync_postbacks_lag_seconds', 'Age of the oldest postback event not delivered yet (0 when none).'),
    latency: registry.histogram('partner_sync_postbacks_delivery_seconds', 'From an event\'s commit to its delivery.', ['event'], [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600]),
  };
}
export type DeliveryMetrics = ReturnType<typeof deliveryMetrics>;

export interface DelivererDeps {
  store: Store;
  logger: Logger;
  /** POSTBACK_SECRET_KEY (./secret.ts). */
  secretKey: string;
  options?: Partial<DeliveryOptions>;
  metrics?: DeliveryMetrics;
}

/** The fields of an attempt's log line. */
const attemptFields = (def: PostbackDefinition, event: ClaimedEvent, result: AttemptResult, state: string): Record<string, unknown> => ({
  event: 'postback_attempt', postback: def.id, event_id: event.eventId, kind: event.kind, status: result.status, attempt: event.attempts + 1, ms: result.ms, state,
});

export class Deliverer {
  private readonly options: DeliveryOptions;
  private readonly lanes = new Map<string, Promise<void>>();
  /** Per postback: a token bucket (tokens, when last filled). */
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private summarized = -Infinity;
  /** Looking for due events every pollMs (start). */
  private polling = false;
  /** Set by stop(): lanes send nothing more. */
  private stopped = false;
  readonly metrics: DeliveryMetrics;

  constructor(private readonly deps: DelivererDeps) {
    this.options = { ...DEFAULT_DELIVERY, ...deps.options };
    this.metrics = deps.metrics ?? deliveryMetrics();
  }

  /** Starts polling for due events. */
  start(): void {
    if (this.polling) return;
    this.polling = true;
    this.stopped = false;
    const loop = (): void => {
      if (this.stopped) return;
      this.ticking = this.tick().then(() => undefined, (error: unknown) => {
        this.deps.logger.error(`postbacks: delivery round failed: ${(error as Error).message}`, { event: 'postbacks_round_failed' });
      }).finally(() => {
        if (!this.stopped) this.timer = setTimeout(loop, this.options.pollMs);
      });
    };
    loop();
  }

  /** Stops polling and waits for the attempts in flight (each is bounded by the timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.polling = false;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    await Promise.all(this.lanes.values());
  }

  /** One round: starts a lane for each postback with due events not served yet; returns the lanes started. */
  async tick(): Promise<number> {
    const { store } = this.deps;
    const now = store.now();
    const free = this.options.maxLanes - this.lanes.size;
    let started = 0;
    if (free > 0) {
      for (const id of await duePostbacks(store.knex, now, this.options.maxLanes * 2)) {
        if (this.lanes.has(id) || this.lanes.size >= this.options.maxLanes) continue;
        const lane = this.runLane(id).catch((error: unknown) => this.laneFailed(id, error)).finally(() => this.lanes.delete(id));
        this.lanes.set(id, lane);
        started += 1;
      }
    }
    // The gauges count the whole outbox: refreshed now and then, not every round.
    if (performance.now() - this.summarized >= SUMMARY_EVERY_MS) {
      this.summarized = performance.now();
      const summary = await deliverySummary(store);
      this.metrics.pending.set({}, summary.states.pending + summary.states.retrying);
      this.metrics.lag.set({}, summary.lagSeconds);
    }
    return started;
  }

  /** Until nothing is due: delivers what every lane has, then returns (tests and one-off runs). */
  async drain(): Promise<void> {
    // Bounded: a lane that can send nothing (its postback gone) must not spin this forever.
    for (let round = 0; round < 10_000 && ((await this.tick()) > 0 || this.lanes.size > 0); round++) await Promise.all(this.lanes.values());
  }

  private async runLane(postbackId: string): Promise<void> {
    const { store } = this.deps;
    const def = await getPostback(store.knex, postbackId);
    if (!def || def.removedAt !== null) return;
    const secret = deriveSecret(this.deps.secretKey, def.secretSalt);
    // A claimed batch holds one event per customer at most (./claims.ts): its events go out side by
    // side, started no faster than the postback's rate, each bounded by the timeout.
    const leaseMs = this.options.timeoutMs + this.options.batch * Math.ceil(1000 / def.ratePerSecond) + this.options.leaseMarginMs;
    const agents = laneAgents(def);
    // Two batches at most are in flight: while one batch's answers and their write are awaited, the
    // next is claimed and sent. Events of one customer stay in order: an event is not claimed
    // while an earlier one of its customer is unsettled, in flight or not.
    let previous: Promise<void> | undefined;
    try {
      while (!this.stopped) {
        const events = await claim(store, postbackId, this.options.batch, leaseMs);
        if (events.length === 0) {
          if (!previous) return;
          // The batch in flight may hold the events that keep the next ones of their customers back.
          await previous;
          previous = undefined;
          continue;
        }
        const attempts: Promise<void>[] = [];
        // Delivered attempts are written together once the batch is done (one statement, not one
        // per event); failed ones at once, with their retry time.
        const delivered: { event: ClaimedEvent; result: AttemptResult }[] = [];
        for (const event of events) {
          if (this.stopped) break; // the leases expire; another round (or process) sends them
          await this.pace(def);
          attempts.push(sendEvent(def, secret, { eventId: event.eventId, kind: event.kind, occurredAt: event.createdAt, data: event.data }, this.options.timeoutMs,
            () => Math.floor(store.clock().getTime() / 1000), agents).then((result) => (result.delivered ? void delivered.push({ event, result }) : this.recordFailure(def, event, result))));
        }
        const batch = Promise.all(attempts).then(() => this.recordDelivered(def, delivered));
        batch.catch(() => undefined); // awaited below or in the next round; failing meanwhile is not unhandled
        await previous;
        previous = batch;
      }
    } finally {
      await previous?.catch((error: unknown) => this.laneFailed(postbackId, error));
      agents.http.destroy();
      agents.https.destroy();
    }
  }

  /**
   * Waits until the postback's rate allows the next request (per destination, in this process): a
   * token bucket that fills at the rate and holds a tenth of a second's worth (at least one), so
   * no second sees more than rate + rate/10 requests, and a busy lane is not held to one timer per
   * request (timers fire late on a loaded machine: a lane paced request by request fell far
   * below its rate).
   */
  private async pace(def: PostbackDefinition): Promise<void> {
    const burst = Math.max(1, Math.floor(def.ratePerSecond / 10));
    const now = performance.now();
    const b = this.buckets.get(def.id) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) * def.ratePerSecond) / 1000);
    b.at = now;
    this.buckets.set(def.id, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return;
    }
    const wait = ((1 - b.tokens) * 1000) / def.ratePerSecond;
    b.tokens -= 1;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }

  private leaseLost(event: ClaimedEvent, fields: Record<string, unknown>): void {
    this.deps.logger.warn(`postbacks: ${event.eventId} answered after its lease ran out; another attempt may follow (same event id)`, fields);
  }

  private laneFailed(postbackId: string, error: unknown): void {
    this.deps.logger.error(`postbacks: lane of ${postbackId} failed: ${(error as Error).message}`, { event: 'postbacks_lane_failed', postback: postbackId });
  }

  private async recordDelivered(def: PostbackDefinition, delivered: readonly { event: ClaimedEvent; result: AttemptResult }[]): Promise<void> {
    if (delivered.length === 0) return;
    const { store, logger } = this.deps;
    const kept = await settleDelivered(store, delivered.map(({ event, result }) => ({ event, status: result.status })));
    const nowMs = store.clock().getTime();
    for (const { event, result } of delivered) {
      const fields = attemptFields(def, event, result, 'delivered');
      if (!kept.has(event.seq)) {
        this.leaseLost(event, fields);
        continue;
      }
      const labels = { event: event.kind };
      this.metrics.delivered.inc(labels);
      this.metrics.latency.observe(labels, Math.max(0, (nowMs - Date.parse(event.createdAt)) / 1000));
      logger.debug(`postbacks: ${event.kind} ${event.eventId} delivered to ${def.id} (HTTP ${result.status}, ${result.ms} ms)`, fields);
    }
  }

  private async recordFailure(def: PostbackDefinition, event: ClaimedEvent, result: AttemptResult): Promise<void> {
    const { store, logger } = this.deps;
    const nowMs = store.clock().getTime();
    const next: AttemptOutcome['next'] = !result.retry || nowMs - Date.parse(event.windowStart) >= this.options.retryWindowMs
      ? { state: 'dead' }
      : { state: 'retrying', at: storeTime(nowMs + backoffMs(this.options, event.attempts + 1)) };
    const kept = await settle(store, event, { status: result.status, error: result.error, next });
    const fields = attemptFields(def, event, result, next.state);
    if (!kept) {
      this.leaseLost(event, fields);
      return;
    }
    const labels = { event: event.kind };
    this.metrics.failed.inc(labels);
    if (next.state === 'dead') {
      this.metrics.dead.inc(labels);
      logger.error(`postbacks: ${event.kind} ${event.eventId} to ${def.id} is dead after ${event.attempts + 1} attempt(s): ${result.error ?? ''} (postbacks replay ${event.eventId})`, { ...fields, error: result.error });
    } else {
      logger.warn(`postbacks: ${event.kind} ${event.eventId} to ${def.id} failed (${result.error ?? ''}); retry at ${next.at}`, { ...fields, error: result.error });
    }
  }
}
