/**
 * The per-token request limit (spec §8: 1000 requests per minute per access token), over a
 * rolling minute counted in one-second buckets: a request is refused when the token's requests
 * of the last 60 seconds (this one included) would pass the limit. Refused requests do not count.
 * Retry-After is the number of seconds until enough of the oldest requests leave the window.
 * One process (SQLite store): counted in memory, exactly. Several processes on one PostgreSQL
 * store: StoreRateLimiter below.
 */
import type { Store } from '../store/store.js';
import { transactionLock } from '../store/transaction-lock.js';

export const RATE_LIMIT_PER_MINUTE = 1000;
export const WINDOW_S = 60;

export interface RateDecision {
  allowed: boolean;
  /** Seconds until a request would be allowed (0 when allowed). */
  retryAfterS: number;
}

export interface RateLimiter {
  readonly limit: number;
  take(key: string): RateDecision | Promise<RateDecision>;
  close(): Promise<void>;
}

/** Counts of one key per second of the window: a ring of WINDOW_S buckets stamped with their second. */
export class SecondBuckets {
  private readonly counts = new Int32Array(WINDOW_S);
  private readonly seconds = new Float64Array(WINDOW_S).fill(-1);

  add(second: number, n: number): void {
    const i = second % WINDOW_S;
    if (this.seconds[i] !== second) {
      this.seconds[i] = second;
      this.counts[i] = 0;
    }
    this.counts[i]! += n;
  }

  /** Sets the count of a second (from the shared store). */
  set(second: number, n: number): void {
    const i = second % WINDOW_S;
    this.seconds[i] = second;
    this.counts[i] = n;
  }

  get(second: number): number {
    const i = second % WINDOW_S;
    return this.seconds[i] === second ? this.counts[i]! : 0;
  }

  /** Requests in the window ending at `second` (the WINDOW_S seconds up to and including it). */
  total(second: number): number {
    let sum = 0;
    for (let i = 0; i < WINDOW_S; i++) {
      const s = this.seconds[i]!;
      if (s > second - WINDOW_S && s <= second) sum += this.counts[i]!;
    }
    return sum;
  }

  /** Seconds from `second` until the window holds at most limit - 1 requests. */
  retryAfter(second: number, limit: number): number {
    let excess = this.total(second) - (limit - 1);
    if (excess <= 0) return 0;
    for (let s = second - WINDOW_S + 1; s <= second; s++) {
      excess -= this.get(s);
      // The requests of second s leave the window at s + WINDOW_S.
      if (excess <= 0) return Math.max(1, s + WINDOW_S - second);
    }
    return WINDOW_S;
  }

  empty(second: number): boolean {
    return this.total(second) === 0;
  }
}

/** One process's limiter (the SQLite store: one `serve` process). */
export class MemoryRateLimiter implements RateLimiter {
  private readonly keys = new Map<string, SecondBuckets>();
  private sweptAt = 0;

  constructor(
    readonly limit: number = RATE_LIMIT_PER_MINUTE,
    private readonly nowMs: () => number = Date.now,
  ) {}

  take(key: string): RateDecision {
    const second = Math.floor(this.nowMs() / 1000);
    let buckets = this.keys.get(key);
    if (!buckets) this.keys.set(key, (buckets = new SecondBuckets()));
    if (buckets.total(second) + 1 > this.limit) return { allowed: false, retryAfterS: buckets.retryAfter(second, this.limit) };
    buckets.add(second, 1);
    if (second - this.sweptAt >= WINDOW_S) this.sweep(second);
    return { allowed: true, retryAfterS: 0 };
  }

  private sweep(second: number): void {
    this.sweptAt = second;
    for (const [key, b] of this.keys) if (b.empty(second)) this.keys.delete(key);
  }

  async close(): Promise<void> {}
}

interface Lease {
  key: string;
  second: number;
  left: number;
}

interface KeyState {
  lease?: Lease;
  claiming?: Promise<RateDecision | undefined>;
}

export interface StoreRateLimiterOptions {
  limit?: number;
  /** Requests one claim takes from the store at most (default limit / 50, at least 1). */
  chunk?: number;
  nowMs?: () => number;
  /** Called when a claim or a return fails (the request is then decided by this process alone). */
  onError?: (error: Error) => void;
}

/**
 * The limit held across every process on one PostgreSQL store. A process claims quota from the
 * store in small leases (api_rate_counts, per token and second, under a transaction advisory lock
 * per token) and admits requests from its lease without asking again; a lease lives until the end
 * of the second it was claimed in, and what it did not use is given back. So the store never
 * counts more than `limit` admitted requests in a rolling minute, whatever the number of
 * processes: the limit is never exceeded. It can refuse a little early, by at most the unused
 * leases of the other processes (at most `chunk` each) until they are given back (within a second).
 * Cost: one short transaction per `chunk` requests of a token in one process.
 */
export class StoreRateLimiter implements RateLimiter {
  readonly limit: number;
  private readonly chunk: number;
  private readonly nowMs: () => number;
  private readonly keys = new Map<string, KeyState>();
  private readonly returns = new Set<Promise<void>>();
  private readonly timer: NodeJS.Timeout;
  private sweptAt = 0;

  constructor(
    private readonly store: Store,
    private readonly options: StoreRateLimiterOptions = {},
  ) {
    this.limit = options.limit ?? RATE_LIMIT_PER_MINUTE;
    this.chunk = Math.max(1, options.chunk ?? Math.floor(this.limit / 50));
    this.nowMs = options.nowMs ?? Date.now;
    // Idle keys give their unused lease back within a second.
    this.timer = setInterval(() => this.expireLeases(), 500);
    this.timer.unref();
  }

  take(key: string): RateDecision | Promise<RateDecision> {
    const second = Math.floor(this.nowMs() / 1000);
    let state = this.keys.get(key);
    if (!state) this.keys.set(key, (state = {}));
    if (state.lease && state.lease.second === second && state.lease.left > 0) {
      state.lease.left--;
      return { allowed: true, retryAfterS: 0 };
    }
    return this.takeClaimed(key, state, second);
  }

  private async takeClaimed(key: string, state: KeyState, second: number): Promise<RateDecision> {
    // Requests arriving while a claim is under way wait for it, then use its lease.
    while (state.claiming) {
      const refusal = await state.claiming;
      if (refusal && !refusal.allowed) return refusal;
      if (state.lease && state.lease.second === second && state.lease.left > 0) {
        state.lease.left--;
        return { allowed: true, retryAfterS: 0 };
      }
    }
    // A lease of an earlier second goes back in the same transaction that claims the next one.
    const expired = state.lease;
    state.lease = undefined;
    const claiming = this.claim(key, second, expired).then(
      (result) => {
        if (result.granted === 0) return { allowed: false, retryAfterS: result.retryAfterS };
        state.lease = { key, second, left: result.granted };
        return undefined;
      },
      (error: unknown) => {
        this.options.onError?.(error as Error);
        // The store failed: admit this one request rather than refuse every partner.
        state.lease = { key, second, left: 1 };
        return undefined;
      },
    );
    state.claiming = claiming;
    const refusal = await claiming;
    state.claiming = undefined;
    if (refusal) return refusal;
    state.lease!.left--;
    return { allowed: true, retryAfterS: 0 };
  }

  /**
   * Takes quota for `key` in `second` from the store: up to `chunk` requests, and at most an
   * eighth of what is left, so that near the limit each process claims one request at a time and
   * no process sits on quota another one needs.
   */
  private async claim(key: string, second: number, expired: Lease | undefined): Promise<{ granted: number; retryAfterS: number }> {
    const result = await this.store.transaction(async (trx) => {
      await transactionLock(trx, `rate:${key}`);
      if (expired && expired.left > 0) {
        await trx('api_rate_counts').where({ token_id: key, second: expired.second }).update({ count: trx.raw('count - ?', [expired.left]) });
      }
      const rows: { second: number | string; count: number }[] = await trx('api_rate_counts')
        .where('token_id', key).andWhere('second', '>', second - WINDOW_S).select('second', 'count');
      const buckets = new SecondBuckets();
      for (const r of rows) buckets.set(Number(r.second), r.count);
      const room = this.limit - buckets.total(second);
      if (room <= 0) return { granted: 0, retryAfterS: buckets.retryAfter(second, this.limit) };
      const granted = Math.max(1, Math.min(this.chunk, Math.floor(room / 8)));
      await trx('api_rate_counts').insert({ token_id: key, second, count: granted })
        .onConflict(['token_id', 'second']).merge({ count: trx.raw('api_rate_counts.count + ?', [granted]) });
      return { granted, retryAfterS: 0 };
    });
    if (second - this.sweptAt >= WINDOW_S) {
      this.sweptAt = second;
      this.track(this.store.knex('api_rate_counts').where('second', '<=', second - 2 * WINDOW_S).delete().then(() => undefined));
    }
    return result;
  }

  /** Gives the unused part of the key's lease back to the store. */
  private giveBack(state: KeyState): void {
    const lease = state.lease;
    state.lease = undefined;
    if (!lease || lease.left <= 0) return;
    this.track(this.store.knex('api_rate_counts').where({ token_id: lease.key, second: lease.second })
      .update({ count: this.store.knex.raw('count - ?', [lease.left]) }).then(() => undefined));
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.options.onError?.(error as Error)).finally(() => this.returns.delete(tracked));
    this.returns.add(tracked);
  }

  private expireLeases(): void {
    const second = Math.floor(this.nowMs() / 1000);
    for (const [key, state] of this.keys) {
      if (state.claiming) continue;
      if (state.lease && state.lease.second !== second) this.giveBack(state);
      if (!state.lease) this.keys.delete(key);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    for (const state of this.keys.values()) this.giveBack(state);
    await Promise.all([...this.returns]);
  }
}
