/**
 * The REST source kind: a partner's REST API (spec §4) as a Source, pages of raw records per
 * stream and window. Wires the parts: HTTPS-only client, credentials, rate limiter, retries
 * within the run's budget, pagination.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { RestSource, RestStream } from '../../src/config/definition.js';
import type { Logger, Redact } from '../../src/log.js';
import type { Source, SourceStats } from '../source.js';
import { createAuthorizer } from './auth.js';
import { createBudget } from './budget.js';
import { createApiClient } from './client.js';
import { createHttpClient, createScrubber } from './http.js';
import { paginate } from './paginate.js';
import { createRateLimiter } from './rate-limiter.js';
import { withRetries } from './retry.js';

export interface RestSourceDeps {
  clock: () => Date;
  /** Every wait (rate limit, backoff, Retry-After) sleeps through this; injectable for tests. */
  sleep?: (ms: number) => Promise<void>;
  logger: Logger;
  /** The definitions' redactor; errors and log lines pass through it. */
  redact: Redact;
  /** Epoch ms: the run's budget end (default clock() + source.run_budget_ms). */
  deadline?: number;
  /** Jitter in [0, 1) (default Math.random). */
  random?: () => number;
}

export function createRestSource(source: RestSource, deps: RestSourceDeps): Source {
  const { clock, logger } = deps;
  // Live counters: `requests` counts every HTTP request sent (each attempt, token requests included).
  const stats: SourceStats = { requests: 0, retries: 0, throttled: 0, waitedMs: 0 };
  const budget = createBudget({
    clock,
    sleep: deps.sleep ?? ((ms) => delay(ms)),
    deadline: deps.deadline ?? clock().getTime() + source.run_budget_ms,
    stats,
  });
  const scrub = createScrubber(deps.redact);
  const http = createHttpClient(source, { logger, scrub, stats });
  const retry = <T>(attempt: () => Promise<T>): Promise<T> =>
    withRetries(attempt, { policy: source.retries, budget, stats, clock, random: deps.random ?? Math.random, logger });
  const auth = createAuthorizer(source.auth, source.base_url, { http, clock, retry });
  // Spec §8: the limit is per access token; one source holds one credential at a time, so one limiter.
  const limiter = createRateLimiter(source.requests_per_minute, { clock, budget });
  const client = createApiClient({ http, auth, limiter, retry, clock, logger });

  return {
    stats,
    pages(stream: RestStream, params: Record<string, string>): AsyncIterable<unknown[]> {
      return paginate(stream, params, (query) => client.getJson(stream.path, query), { logger });
    },
  };
}
