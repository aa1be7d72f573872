/**
 * Which partner failures are repeated, how long we wait, and when we stop.
 *
 * - Network errors, timeouts, 408, 5xx and unparseable 2xx bodies: repeated at most
 *   `retries.max` times (each counted in `stats.retries`), waiting an exponential backoff with
 *   full jitter: a uniform draw between `min_delay_ms` and min(`max_delay_ms`,
 *   `min_delay_ms`·2^n) before retry n. A 503 with Retry-After waits at least that long.
 * - 429: waits for Retry-After (delta-seconds or an HTTP-date, read against the injected clock;
 *   absent or unreadable → the same backoff), capped at `max_retry_after_ms`. 429s have a bound of
 *   their own, also `retries.max` waits per request (each 429 counted in `stats.throttled`), so a
 *   partner that throttles forever cannot hold us forever either: one request makes at most
 *   1 + 2·`retries.max` attempts (plus one after an OAuth token renewal on 401).
 * - Every other status (4xx but 401/408/429, 3xx) fails at once with the status and body excerpt.
 * - Every wait goes through the run's budget: one that would end past the deadline throws
 *   BudgetExhausted instead of sleeping.
 *
 * p-retry runs the attempts; its own timers are switched off (delays 0) and the waits happen in
 * `onFailedAttempt`, through the injected sleep, so tests control time.
 */
import pRetry, { AbortError } from 'p-retry';
import type { RestSource } from '../../src/config/definition.js';
import type { Logger } from '../../src/log.js';
import { SourceError, type SourceStats } from '../source.js';
import type { Budget } from './budget.js';
import { bodyExcerpt, describeResponse, safeUrl, TransportError, type HttpResponse, type Scrubber } from './http.js';

export type RetryPolicy = RestSource['retries'];

/** An attempt failed in a way worth repeating (network, timeout, 408, 5xx, malformed body). */
export class RetryableFailure extends Error {
  constructor(
    readonly error: SourceError,
    readonly retryAfterMs?: number,
  ) {
    super(error.message);
    this.name = 'RetryableFailure';
  }
}

/** The partner answered 429. */
export class ThrottledFailure extends Error {
  constructor(
    readonly error: SourceError,
    readonly retryAfterMs?: number,
  ) {
    super(error.message);
    this.name = 'ThrottledFailure';
  }
}

export interface RetryDeps {
  policy: RetryPolicy;
  budget: Budget;
  stats: SourceStats;
  clock: () => Date;
  /** In [0, 1): the jitter. */
  random: () => number;
  logger: Logger;
}

/** Retry-After in ms from now: delta-seconds or an HTTP-date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP-date (IMF-fixdate, or the obsolete RFC 850 / asctime forms): has a weekday or month name and a year.
  if (!/[a-z]{3}/i.test(text) || !/\d{2}:\d{2}:\d{2}/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}

/** The wait before retry `n` (1-based): full jitter between min_delay_ms and an exponential ceiling capped at max_delay_ms. */
export function backoffDelay(n: number, policy: RetryPolicy, random: () => number): number {
  const floor = Math.min(policy.min_delay_ms, policy.max_delay_ms);
  const ceiling = Math.min(policy.max_delay_ms, policy.min_delay_ms * 2 ** n);
  return Math.round(floor + random() * Math.max(0, ceiling - floor));
}

/** Returns for a 2xx; otherwise throws a RetryableFailure, a ThrottledFailure or a (final) SourceError. */
export function checkStatus(response: HttpResponse, scrub: Scrubber, clock: () => Date): void {
  const { status } = response;
  if (status >= 200 && status < 300) return;
  const retryAfter = parseRetryAfter(response.headers['retry-after'], clock());
  const error = new SourceError(describeResponse(response, scrub), { status, body: bodyExcerpt(response.body, scrub) });
  if (status === 429) throw new ThrottledFailure(error, retryAfter);
  if (status === 408 || status >= 500) throw new RetryableFailure(error, retryAfter);
  if (status >= 300 && status < 400) {
    const location = response.headers.location;
    throw new SourceError(
      scrub(`${response.what}: HTTP ${status}: the partner redirects${location ? ` to ${safeUrl(location)}` : ''}; redirects are not followed (they could carry credentials elsewhere): set the final address in the definition`),
      { status },
    );
  }
  throw error;
}

function final(error: SourceError, note: string): SourceError {
  return new SourceError(`${error.message} (${note})`, { status: error.status, cause: error.cause });
}

/** Runs `attempt` until it succeeds, a failure is final, the retry bounds are reached or the budget would be passed. */
export async function withRetries<T>(attempt: () => Promise<T>, deps: RetryDeps): Promise<T> {
  const { policy, budget, stats, logger } = deps;
  let retries = 0;
  let throttles = 0;

  const run = async (): Promise<T> => {
    try {
      return await attempt();
    } catch (error) {
      if (error instanceof RetryableFailure || error instanceof ThrottledFailure) throw error;
      if (error instanceof TransportError) throw new RetryableFailure(error);
      // Anything else (4xx, a bad page, BudgetExhausted from the rate limiter) ends the request now.
      throw new AbortError(error instanceof Error ? error : new Error(String(error)));
    }
  };

  try {
    return await pRetry(run, {
      // An outer guard only; the counters below decide (and give the better message).
      retries: 2 * policy.max + 1,
      minTimeout: 0,
      maxTimeout: 0,
      onFailedAttempt: async ({ error }) => {
        if (error instanceof ThrottledFailure) {
          stats.throttled += 1;
          throttles += 1;
          if (throttles > policy.max) throw final(error.error, `still throttled after ${policy.max} waits`);
          const wait = error.retryAfterMs !== undefined ? Math.min(error.retryAfterMs, policy.max_retry_after_ms) : backoffDelay(throttles, policy, deps.random);
          const why = `${error.error.message}; ${error.retryAfterMs !== undefined ? 'Retry-After' : 'backoff (no Retry-After)'}`;
          logger.info(`${error.error.message}; throttled, waiting ${wait} ms (wait ${throttles} of at most ${policy.max})`, { wait_ms: wait });
          await budget.wait(wait, why);
          return;
        }
        if (error instanceof RetryableFailure) {
          if (retries >= policy.max) throw final(error.error, `gave up after ${retries} ${retries === 1 ? 'retry' : 'retries'}`);
          retries += 1;
          stats.retries += 1;
          let wait = backoffDelay(retries, policy, deps.random);
          if (error.retryAfterMs !== undefined) wait = Math.min(Math.max(wait, error.retryAfterMs), policy.max_retry_after_ms);
          logger.info(`${error.error.message}; retry ${retries} of ${policy.max} in ${wait} ms`, { wait_ms: wait });
          await budget.wait(wait, `${error.error.message}; backoff before retry ${retries}`);
          return;
        }
        throw error;
      },
    });
  } catch (error) {
    if (error instanceof RetryableFailure || error instanceof ThrottledFailure) throw error.error;
    throw error;
  }
}
