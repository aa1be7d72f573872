/**
 * Proactive rate limit per access token (spec §8: 1000 requests per minute). A sliding log of the
 * last N send times: a request goes out only when the N-th latest one is at least a window old, so
 * no rolling 60 s window ever holds more than N requests. (A fixed per-minute counter would allow
 * 2N across a minute boundary, and the partner answers that with 429s.)
 */
import type { Budget } from './budget.js';

export const RATE_WINDOW_MS = 60_000;

export interface RateLimiter {
  /** Resolves when one more request may be sent now (and records it); waits through the budget. */
  acquire(): Promise<void>;
}

export interface RateLimiterDeps {
  clock: () => Date;
  budget: Budget;
}

export function createRateLimiter(requestsPerWindow: number, deps: RateLimiterDeps, windowMs = RATE_WINDOW_MS): RateLimiter {
  if (!Number.isInteger(requestsPerWindow) || requestsPerWindow < 1) {
    throw new RangeError(`requests_per_minute must be a positive integer, got ${String(requestsPerWindow)}`);
  }
  /** Send times (epoch ms) of the latest requests, oldest first; never more than requestsPerWindow. */
  const sent: number[] = [];
  // Callers take turns (first come, first served), so parallel streams cannot both take the last slot.
  let queue: Promise<void> = Promise.resolve();

  async function take(): Promise<void> {
    for (;;) {
      const now = deps.clock().getTime();
      while (sent.length > 0 && (sent[0] as number) + windowMs <= now) sent.shift();
      if (sent.length < requestsPerWindow) {
        sent.push(now);
        return;
      }
      // The sleep lets the clock move on; the loop re-checks rather than trusting the arithmetic.
      await deps.budget.wait((sent[0] as number) + windowMs - now, `rate limit of ${requestsPerWindow} requests per ${windowMs / 1000} s`);
    }
  }

  return {
    acquire() {
      const turn = queue.then(take);
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}
