/**
 * The per-token request limit (spec §8: 1000 requests per minute per access token), over a
 * rolling minute counted in one-second buckets: a request is refused when the token's requests
 * of the last 60 seconds (this one included) would pass the limit. Refused requests do not count.
 * Retry-After is the number of seconds until enough of the oldest requests leave the window.
 */
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
