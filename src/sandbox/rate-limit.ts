/**
 * Per-token request accounting over a rolling 60-second window, on the injected clock: the rate
 * limit (spec §8: 1000 requests per minute per access token) and the statistic of the most
 * requests any token made in a window (what a test checks a client against).
 */

export const WINDOW_MS = 60_000;

/** Times in one rolling window: those in (now − 60 s, now]. */
class Window {
  private readonly times: number[] = [];
  private head = 0;

  prune(now: number): void {
    while (this.head < this.times.length && (this.times[this.head] as number) <= now - WINDOW_MS) this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times.splice(0, this.head);
      this.head = 0;
    }
  }

  add(now: number): void {
    this.times.push(now);
  }

  get count(): number {
    return this.times.length - this.head;
  }

  get oldest(): number | undefined {
    return this.times[this.head];
  }
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimiter {
  /** Takes one request of `key` at `now` (ms) if the window has room; else when to retry. */
  take(key: string, now: number): RateDecision;
}

/** At most `perMinute` accepted requests per key in any rolling 60 s; refused ones do not count. */
export function createRateLimiter(perMinute: () => number): RateLimiter {
  const windows = new Map<string, Window>();
  return {
    take(key, now) {
      let window = windows.get(key);
      if (window === undefined) {
        window = new Window();
        windows.set(key, window);
      }
      window.prune(now);
      if (window.count < perMinute()) {
        window.add(now);
        return { allowed: true };
      }
      // Room comes back when the oldest accepted request leaves the window.
      const oldest = window.oldest ?? now;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000)) };
    },
  };
}

export interface WindowPeaks {
  /** Counts a request of `key` at `now` (ms). */
  record(key: string, now: number): void;
  /** The most requests seen in any rolling 60 s window, per key. */
  peaks(): Record<string, number>;
  reset(): void;
}

/** The peak number of requests per key in any rolling 60 s window, all requests counted. */
export function createWindowPeaks(): WindowPeaks {
  const windows = new Map<string, Window>();
  const peaks = new Map<string, number>();
  return {
    record(key, now) {
      let window = windows.get(key);
      if (window === undefined) {
        window = new Window();
        windows.set(key, window);
      }
      window.prune(now);
      window.add(now);
      peaks.set(key, Math.max(peaks.get(key) ?? 0, window.count));
    },
    peaks: () => Object.fromEntries(peaks),
    reset() {
      windows.clear();
      peaks.clear();
    },
  };
}
