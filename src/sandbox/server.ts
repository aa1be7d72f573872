/**
 * The sandbox partner: a local REST API that follows the spec's conventions (OAuth 2.0 client
 * credentials, Bearer tokens, the list envelope, page and cursor pagination, 1000 requests per
 * minute per token, 429 with Retry-After) over deterministic generated data, with fault injection.
 * It is the end-to-end test partner of the REST pull connector and the demo's partner.
 *
 * Endpoints (node:http, bound to 127.0.0.1 only):
 * - POST /oauth/token: form body grant_type=client_credentials, client_id, client_secret (or HTTP
 *   Basic client authentication) → { access_token, token_type: "Bearer", expires_in, scope: "read write" }.
 *   Wrong client → 401 invalid_client; other grant → 400 unsupported_grant_type; a body that is not
 *   a form (e.g. JSON) → 400 invalid_request.
 * - GET /api/v1/{igaming|prop-trading}/{customers|transactions|activity}: Authorization: Bearer
 *   required (401 otherwise); filters and sort order in api.ts; `page` + `per_page` or `cursor`
 *   (pagination.ts); envelope { data, meta: { total, page, per_page, next_cursor? } }.
 * - /_sandbox/...: statistics, faults and data changes for tests (admin.ts).
 *
 * A partner request goes: latency fault → token check (401) → rate limit (429) → throttle fault
 * (429) → error fault (5xx) → the endpoint (400/404/405/422 or 200) → malformed-body fault.
 * Errors are JSON { error, error_description } (a 502 fault answers HTML, as a gateway would).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLoopbackHost } from '../config/secure-url.js';
import { ADMIN_PREFIX, handleAdmin } from './admin.js';
import { API_PREFIX, handleApi } from './api.js';
import { DEFAULT_SEED, createSandboxData, type SandboxData } from './data.js';
import { createFaultInjector, defaultFaults, mergeFaults, type SandboxFaults } from './faults.js';
import { BodyTooLargeError, errorReply, mediaType, notFound, readBody, replyText, writeReply, type Reply } from './http.js';
import { createTokenService, defaultClients, type SandboxClient } from './oauth.js';
import { createRateLimiter } from './rate-limit.js';
import { createStatsCollector, type SandboxStats } from './stats.js';
import { partnerStyleBody, partnerStyleQuery, type SandboxStyle } from './partner-style.js';
import { systemClock } from '../kernel/clock.js';

export const DEFAULT_RATE_LIMIT_PER_MINUTE = 1000;
export const DEFAULT_TOKEN_TTL_SECONDS = 3600;
const TOKEN_BODY_LIMIT = 64 * 1024;
const ADMIN_BODY_LIMIT = 16 * 1024 * 1024;

export interface SandboxOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** Seed of the generated data and of the error fault's sequence; default 1. */
  seed?: number;
  /** Customers per variant; default 200. */
  customers?: number;
  /** Labelled fraud patterns: instances of each detection rule added to the clean data (src/sandbox/fraud-patterns.ts); default 0. */
  fraudPatterns?: number;
  /** First and last day (YYYY-MM-DD, UTC) of signups and activity; default the 30 days before the clock's day. */
  from?: string;
  to?: string;
  /** The sandbox's time: token expiry, rate-limit windows, mutation times, the default range. */
  clock?: () => Date;
  /** Accepted clients; default one from SANDBOX_CLIENT_ID / SANDBOX_CLIENT_SECRET or the demo credentials. */
  clients?: SandboxClient[];
  /** Requests per access token per rolling 60 s; default 1000 (spec §8). */
  rateLimitPerMinute?: number;
  /** Token lifetime; default 3600 (spec §5). */
  tokenTtlSeconds?: number;
  /** Faults switched on from the start. */
  faults?: Partial<SandboxFaults>;
  /** `partner`: records in a partner's own names, units and codes (partner-style.ts); default `spec`. */
  style?: SandboxStyle;
}

export interface Sandbox {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  data: SandboxData;
  /** Mutable at run time: assign its fields to switch faults on and off (the object itself stays). */
  readonly faults: SandboxFaults;
  stats(): SandboxStats;
  /** Zeroes the statistics. */
  resetStats(): void;
  close(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const port = options.port ?? 0;
  const seed = options.seed ?? DEFAULT_SEED;
  const rateLimit = options.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE;
  const tokenTtl = options.tokenTtlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS;
  const clients = options.clients ?? defaultClients();
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`sandbox: port must be an integer from 0 to 65535, got ${port}`);
  if (!Number.isInteger(rateLimit) || rateLimit < 1) throw new Error(`sandbox: rateLimitPerMinute must be a whole number ≥ 1, got ${rateLimit}`);
  if (!Number.isInteger(tokenTtl) || tokenTtl < 1) throw new Error(`sandbox: tokenTtlSeconds must be whole seconds ≥ 1, got ${tokenTtl}`);
  if (clients.length === 0) throw new Error('sandbox: at least one client is needed');

  const clock = options.clock ?? systemClock;
  // The partner's clock as its records are stamped: ours plus an offset set through /_sandbox/clock
  // (a partner whose clock runs behind or ahead). Tokens and rate limits keep the real clock.
  let recordClockOffsetMs = 0;
  const recordClock = () => new Date(clock().getTime() + recordClockOffsetMs);
  const data = createSandboxData({ seed, customers: options.customers, from: options.from, to: options.to, clock: recordClock, fraudPatterns: options.fraudPatterns });
  const faults = defaultFaults();
  const faultErrors = mergeFaults(faults, options.faults ?? {});
  if (faultErrors.length > 0) throw new Error(`sandbox: ${faultErrors.join('; ')}`);

  const injector = createFaultInjector(seed, faults);
  const tokens = createTokenService({ clients, clock, ttlSeconds: () => faults.tokenTtlSeconds ?? tokenTtl });
  const limiter = createRateLimiter(() => rateLimit);
  const stats = createStatsCollector();

  const retryAfter = (seconds: number): string =>
    faults.retryAfterAsDate ? new Date(Math.ceil((clock().getTime() + seconds * 1000) / 1000) * 1000).toUTCString() : String(seconds);

  async function partnerRequest(req: IncomingMessage, method: string, path: string, query: URLSearchParams): Promise<{ reply: Reply; text?: string }> {
    if (faults.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, faults.latencyMs));
    if (path === '/oauth/token') {
      const body = method === 'POST' ? await readBody(req, TOKEN_BODY_LIMIT) : '';
      return { reply: tokens.issue({ method, headers: req.headers, body }) };
    }
    if (!path.startsWith(API_PREFIX)) return { reply: notFound(path) };

    const check = tokens.verify(req.headers.authorization);
    if (!check.ok) return { reply: check.reply };
    const now = clock().getTime();
    const label = check.token.label;
    stats.tokenRequest(label, now);
    const decision = limiter.take(label, now);
    if (!decision.allowed) {
      stats.rateLimited();
      return {
        reply: errorReply(429, 'rate_limited', `more than ${rateLimit} requests per minute with this access token (spec §8); retry after ${decision.retryAfterSeconds} s`, {
          headers: { 'Retry-After': retryAfter(decision.retryAfterSeconds) },
        }),
      };
    }
    if (injector.throttle()) {
      stats.throttled();
      const seconds = faults.throttleRetryAfter;
      return { reply: errorReply(429, 'rate_limited', `too many requests; retry after ${seconds} s`, { headers: { 'Retry-After': retryAfter(seconds) } }) };
    }
    const failure = injector.serverError();
    if (failure !== undefined) {
      stats.serverErrorInjected();
      return { reply: injectedFailure(failure) };
    }

    const answer = handleApi({ data, faults }, method, path, options.style === 'partner' ? partnerStyleQuery(path, query) : query);
    const reply = options.style === 'partner' && answer.page === true ? { ...answer, body: partnerStyleBody(path, answer.body) } : answer;
    const text = replyText(reply);
    if (reply.page === true && injector.malformed()) {
      stats.malformedInjected();
      return { reply, text: text.slice(0, Math.max(1, Math.floor(text.length / 2))) };
    }
    return { reply, text };
  }

  async function adminRequest(req: IncomingMessage, method: string, path: string, query: URLSearchParams): Promise<Reply> {
    const remote = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    if (!isLoopbackHost(remote)) return errorReply(403, 'forbidden', '/_sandbox/ answers loopback clients only');
    let body: unknown;
    if (method !== 'GET' && method !== 'HEAD') {
      const text = await readBody(req, ADMIN_BODY_LIMIT);
      if (text.trim() !== '') {
        if (mediaType(req.headers['content-type']) !== 'application/json') {
          return errorReply(400, 'invalid_request', 'the body must be JSON (Content-Type: application/json)');
        }
        try {
          body = JSON.parse(text) as unknown;
        } catch (error) {
          return errorReply(400, 'invalid_request', `the body is not valid JSON: ${(error as Error).message}`);
        }
      }
    }
    const recordClockAdmin = { now: recordClock, offsetMs: () => recordClockOffsetMs, setOffsetMs: (ms: number) => void (recordClockOffsetMs = ms) };
    return handleAdmin({ data, faults, stats: () => stats.snapshot(tokens.issued()), resetStats: () => stats.reset(tokens.issued()), recordClock: recordClockAdmin }, { method, path, query, body });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const path = url.pathname.length > 1 && url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
    if (path === ADMIN_PREFIX || path.startsWith(`${ADMIN_PREFIX}/`)) {
      writeReply(res, await adminRequest(req, method, path, url.searchParams));
      return;
    }
    stats.request(path);
    res.on('finish', () => stats.response(res.statusCode));
    const { reply, text } = await partnerRequest(req, method, path, url.searchParams);
    writeReply(res, reply, text);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof BodyTooLargeError) writeReply(res, errorReply(413, 'invalid_request', error.message, { headers: { Connection: 'close' } }));
      else writeReply(res, errorReply(500, 'internal_error', `sandbox error: ${(error as Error).message ?? String(error)}`));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    data,
    faults,
    stats: () => stats.snapshot(tokens.issued()),
    resetStats: () => stats.reset(tokens.issued()),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** An injected server failure: 500 and 503 in JSON, 502 as the HTML page of a gateway. */
function injectedFailure(status: 500 | 502 | 503): Reply {
  switch (status) {
    case 500:
      return errorReply(500, 'server_error', 'internal server error (injected fault)');
    case 502:
      return {
        status,
        contentType: 'text/html; charset=utf-8',
        body: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>',
      };
    case 503:
      return errorReply(503, 'temporarily_unavailable', 'service temporarily unavailable (injected fault)');
  }
}
