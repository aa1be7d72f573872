/**
 * The REST source kind: a partner's REST API (spec §4) as a Source, pages of raw records per
 * stream and window. Wires the parts: HTTPS-only client, credentials, rate limiter, retries
 * within the run's budget, pagination.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { cursorBound } from '../../src/config/cursor-format.js';
import type { Incremental, RestSource, RestStream, StreamDefinition } from '../../src/config/definition.js';
import type { Logger, Redact } from '../../src/log.js';
import { PositionRefused, SourceError, type CursorWindow, type PositionedPage, type PullWindow, type Source, type SourceStats } from '../source.js';
import { createAuthorizer } from './auth.js';
import { createBudget } from './budget.js';
import { createApiClient, type AcceptBody } from './client.js';
import { createHttpClient, createScrubber } from './http.js';
import { paginate, paginateFrom } from './paginate.js';
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

/** The query parameters of a window: its bounds (cursor streams) or its day (daily streams). */
export function windowParams(incremental: Incremental, window: PullWindow): Record<string, string> {
  if (window.kind === 'days') {
    if (incremental.mode !== 'daily') throw new Error('a days window needs a daily stream');
    if (window.from !== window.to) throw new Error(`a REST daily stream reads one day per request, not ${window.from}..${window.to}`);
    return { [incremental.date_param ?? 'date']: window.from };
  }
  if (incremental.mode !== 'cursor') throw new Error('a cursor window needs a cursor stream');
  if (!incremental.from_param) throw new Error('a REST cursor stream needs incremental.from_param');
  const params: Record<string, string> = { [incremental.from_param]: cursorBound(window.from, incremental.cursor_format, 'from') };
  // An open window asks for every change since `from`: a record stamped ahead of our clock loads now.
  if (incremental.to_param && !window.open) params[incremental.to_param] = cursorBound(window.to, incremental.cursor_format, 'to');
  return params;
}

/** A REST source; `query` pages a stream with explicit query parameters (what `pages` does for a window). */
export interface RestSourceClient extends Source {
  query(stream: RestStream, params: Record<string, string>): AsyncIterable<unknown[]>;
  /** One authorized GET of `path` with its JSON body, retried like a page (discovery reads the envelope itself). */
  getJson(path: string, params: Record<string, string>): Promise<unknown>;
}

export function createRestSource(source: RestSource, deps: RestSourceDeps): RestSourceClient {
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

  const query = (stream: RestStream, params: Record<string, string>): AsyncIterable<unknown[]> =>
    paginate(stream, params, (q, accept) => client.getJson(stream.path, q, accept), { logger, stats });
  return {
    stats,
    query,
    getJson: async (path, params) => (await client.getJson(path, new URLSearchParams(params))).body,
    pages(definition: StreamDefinition, window: PullWindow): AsyncIterable<unknown[]> {
      const stream = definition as RestStream;
      return query(stream, windowParams(stream.incremental, window));
    },
    cursorPages(definition: StreamDefinition, window: CursorWindow, after?: string): AsyncIterable<PositionedPage> {
      const stream = definition as RestStream;
      let answered = after === undefined;
      // A stored page token the partner refuses on the first request (expired, unknown): 400, 404, 410 or 422.
      const fetchPage = async (q: URLSearchParams, accept?: AcceptBody) => {
        try {
          const response = await client.getJson(stream.path, q, accept);
          answered = true;
          return response;
        } catch (error) {
          if (!answered && error instanceof SourceError && [400, 404, 410, 422].includes(error.status ?? 0)) {
            throw new PositionRefused(`the partner refused the stored read position: ${error.message}`, { cause: error, status: error.status });
          }
          throw error;
        }
      };
      return paginateFrom(stream, windowParams(stream.incremental, window), fetchPage, { logger, after, stats });
    },
  };
}
