/**
 * The HTTP API of `partner-sync serve`: one fastify app with the token endpoint, the route
 * modules (./routes/index.ts), /healthz (liveness) and /readyz (readiness: the store answers
 * within a bound, migrations current), and the rules every route shares:
 * - bodies: JSON only on the API's routes (415 otherwise), at most `bodyLimit` bytes (413; 5 MiB
 *   holds a bulk of 1000 realistic records several times over), malformed JSON 400, nesting
 *   deeper than MAX_JSON_DEPTH 400 before parsing (./json-body.ts);
 * - query strings: every route's query is checked by one schema before its handler (a route may
 *   declare its own; the default is ANY_QUERY: each parameter a single string), so a repeated
 *   parameter (`?campaign=a&campaign=b`) is 400 `invalid_parameter` naming it on every route, and
 *   no handler ever meets an array it did not declare;
 * - errors are JSON `{error, message}`, never a stack trace; unknown routes 404 JSON;
 * - one access-log line per request (method, route, status, duration, client id); headers are
 *   never logged, so neither bearer tokens nor client secrets reach a log line.
 */
import { randomUUID } from 'node:crypto';
import fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Clock } from '../kernel/clock.js';
import { readiness, storeChecks } from '../store/readiness.js';
import { Authenticator, requireAnyToken } from './auth.js';
import { BodyError, MAX_JSON_DEPTH, parseJsonBody } from './json-body.js';
import { oauthRoutes } from './oauth.js';
import { MemoryRateLimiter, RATE_LIMIT_PER_MINUTE, StoreRateLimiter, type RateLimiter } from './rate-limit.js';
import { queryErrorBody } from './query-errors.js';
import { API_ROUTE_MODULES } from './routes/index.js';
import { signingKey } from './tokens.js';
import type { ApiDeps, RouteModule } from './types.js';

/**
 * The query schema of a route that declares none: any parameters, each given once. (Fastify's
 * validator coerces a parameter given once to a string and refuses one given twice.)
 */
export const ANY_QUERY = { type: 'object', additionalProperties: { type: 'string' } } as const;

/** Largest body read and discarded after a 413 so that the client can read the answer. */
export const MAX_DRAINED_BYTES = 64 * 1024 * 1024;

/** Longest wait for the rest of a refused body before answering anyway. */
const MAX_DRAIN_MS = 10_000;

/**
 * Reads and discards the rest of a body refused as too large, resolving once the client has sent
 * it all (or the bounds are reached: MAX_DRAINED_BYTES, MAX_DRAIN_MS). Answering before that and
 * closing made Node's fetch meet EPIPE while still sending (12 of 20 tries), never reading the 413.
 */
function drainBounded(request: FastifyRequest): Promise<void> {
  const raw = request.raw;
  const declared = Number(raw.headers['content-length'] ?? NaN);
  if (raw.readableEnded || (Number.isFinite(declared) && declared > MAX_DRAINED_BYTES)) return Promise.resolve();
  return new Promise((resolve) => {
    let read = 0;
    const timer = setTimeout(done, MAX_DRAIN_MS);
    function done() {
      clearTimeout(timer);
      raw.removeListener('data', onData);
      resolve();
    }
    function onData(chunk: Buffer) {
      read += chunk.length;
      if (read > MAX_DRAINED_BYTES) done();
    }
    raw.on('data', onData);
    raw.once('end', done);
    raw.once('close', done);
    raw.once('error', done);
    raw.resume();
  });
}

/** Largest request body: a 1000-record bulk of realistic records is about 0.5 MB. */
export const DEFAULT_BODY_LIMIT = 5 * 1024 * 1024;

export interface ApiOptions {
  /** Clock of token issue and expiry (default: the store's). */
  clock?: Clock;
  bodyLimit?: number;
  /** Requests per rolling minute per access token (default RATE_LIMIT_PER_MINUTE, spec §8). */
  rateLimitPerMinute?: number;
  /** The rate limiter (default: counted in the store on PostgreSQL, in memory on SQLite). */
  limiter?: RateLimiter;
  /** How long a process trusts its last look at a client's revocation (default 5 s). */
  revocationCacheMs?: number;
  /** Behind a TLS-terminating proxy: client address and protocol from X-Forwarded-*. */
  trustProxy?: boolean;
  https?: { key: string | Buffer; cert: string | Buffer };
  /** Environment for PARTNER_SYNC_JWT_SECRET (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Client secret verifications at once on /oauth/token; more are answered 503 with Retry-After (default 16). */
  maxConcurrentHashes?: number;
  /** How long the store has to answer a readiness probe (default READINESS_TIMEOUT_MS). */
  readinessTimeoutMs?: number;
  /** Route modules (default API_ROUTE_MODULES; `serve` adds the web console's: src/cli/server.ts). */
  routes?: readonly RouteModule[];
}

export async function buildApi(deps: ApiDeps, options: ApiOptions = {}): Promise<FastifyInstance> {
  const { store, logger } = deps;
  const clock = options.clock ?? store.clock;
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const key = await signingKey(store, options.env ?? process.env);
  const limiter = options.limiter ?? (await defaultLimiter(deps, options.rateLimitPerMinute ?? RATE_LIMIT_PER_MINUTE));

  const app = fastify({
    logger: false,
    bodyLimit,
    trustProxy: options.trustProxy ?? false,
    genReqId: () => randomUUID(),
    ...(options.https ? { https: options.https } : {}),
  }) as unknown as FastifyInstance;

  // One query schema per route (ANY_QUERY unless the route declares its own).
  app.addHook('onRoute', (route) => {
    route.schema = { ...(route.schema ?? {}) };
    route.schema.querystring ??= ANY_QUERY;
  });

  app.decorate('apiAuth', new Authenticator({ store, key, clock, limiter, revocationCacheMs: options.revocationCacheMs }));
  app.decorateRequest('principal', undefined);
  app.decorateRequest('oauthClientId', undefined);
  app.addHook('onClose', async () => limiter.close());
  // Once closing, answers in flight end their connection: a kept-alive socket would hold the
  // close (and the process) until its idle timeout.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) reply.header('connection', 'close');
    return payload;
  });

  // JSON only: no text/plain fallback, and our own parser (keeps __proto__ keys, limits depth).
  app.removeAllContentTypeParsers();
  // As bytes: a string body would have been decoded with U+FFFD for bytes that are not UTF-8.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer, MAX_JSON_DEPTH));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? '(no route)';
    const clientId = request.principal?.clientId ?? request.oauthClientId;
    const durationMs = Math.round(reply.elapsedTime * 100) / 100;
    logger.info(`${request.method} ${route} ${reply.statusCode} ${durationMs} ms`, {
      event: 'http_request', method: request.method, route, status: reply.statusCode, duration_ms: durationMs,
      ...(clientId ? { client_id: clientId } : {}), request_id: request.id,
    });
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error instanceof BodyError) return reply.code(400).send({ error: error.code, message: error.message });
    if (error.validation && error.validationContext === 'querystring') return reply.code(400).send(queryErrorBody(error));
    switch (error.code) {
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send({ error: 'unsupported_media_type', message: `send Content-Type: application/json (got ${request.headers['content-type'] ?? 'none'})` });
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        // The client is still sending: the rest is read and discarded first (bounded), then the
        // 413 goes out and the connection closes, so the client reads the answer (drainBounded).
        await drainBounded(request);
        reply.header('connection', 'close');
        return reply.code(413).send({ error: 'payload_too_large', message: `the request body is larger than ${bodyLimit} bytes` });
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return reply.code(400).send({ error: 'malformed_json', message: 'the request body is empty; send a JSON document' });
    }
    const status = error.statusCode ?? 500;
    if (status < 500) return reply.code(status).send({ error: 'bad_request', message: error.message });
    logger.error(`${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}: ${error.message}`, { event: 'http_error', request_id: request.id });
    return reply.code(500).send({ error: 'internal_error', message: `internal error (request ${request.id})` });
  });

  // Under /api/ the caller authenticates first (401 before 404, and the request counts against
  // the token's rate limit): paths do not reveal themselves to callers without a token.
  const apiPrefix = async (request: FastifyRequest, reply: FastifyReply) => (request.url.startsWith('/api/') ? requireAnyToken.call(app, request, reply) : undefined);
  app.setNotFoundHandler({ preHandler: apiPrefix }, (request, reply) => reply.code(404).send({ error: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` }));

  // The route modules first: hooks they add to the app (metrics) then cover the token endpoint's
  // scope too, which copies the app's hooks when it is registered.
  for (const register of options.routes ?? API_ROUTE_MODULES) await register(app, deps);
  await oauthRoutes(app, { store, key, clock, maxConcurrentHashes: options.maxConcurrentHashes });

  // Liveness apart from readiness (src/store/readiness.ts): a store outage makes this process
  // not ready (no traffic), not dead (no restart).
  app.get('/healthz', async (_request, reply) => (closing ? reply.code(503).send({ status: 'stopping' }) : { status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const checks = await storeChecks(store, options.readinessTimeoutMs);
    const r = readiness({ api: closing ? { ok: false, detail: 'stopping' } : { ok: true, detail: 'serving' }, ...checks });
    return reply.code(r.ok ? 200 : 503).send(r.body);
  });

  return app;
}

/** Counted in the store when several processes may share it (PostgreSQL), else in this process. */
async function defaultLimiter(deps: ApiDeps, perMinute: number): Promise<RateLimiter> {
  if (!deps.store.dialect.concurrent) return new MemoryRateLimiter(perMinute);
  return new StoreRateLimiter(deps.store, {
    limit: perMinute,
    onError: (error) => deps.logger.warn(`rate limit: the store's counter failed, deciding locally: ${error.message}`, { event: 'rate_limit_store_error' }),
  });
}
