/**
 * `GET /metrics` of the HTTP API (Prometheus text, src/metrics.ts), and the hooks that feed it:
 * requests by route pattern (`/api/v1/igaming/customers/bulk`, never the raw URL with its query)
 * and status, request latency, and records pushed (accepted, loaded, waiting) per partner,
 * variant and entity, read from each committed push answer.
 *
 * The module applies its hooks to the whole app, also when registered as a plugin: it opts out of
 * encapsulation (`skip-override`, the Fastify plugin convention).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MetricsRegistry } from '../../metrics.js';
import type { RouteModule } from '../types.js';

/** Latency buckets (seconds): from 1 ms to 10 s. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The API's series, by name. */
export function apiMetrics(registry = new MetricsRegistry()) {
  return {
    registry,
    requests: registry.counter('partner_sync_api_requests_total', 'HTTP requests answered, by method, route pattern and status.', ['method', 'route', 'status']),
    duration: registry.histogram(
      'partner_sync_api_request_duration_seconds',
      'Time from receiving a request to sending its answer, by method, route pattern and status.',
      ['method', 'route', 'status'],
      LATENCY_BUCKETS,
    ),
    records: registry.counter(
      'partner_sync_api_records_total',
      'Pushed records by outcome: accepted (valid, in a committed request), loaded (written), waiting (parked until their customer arrives).',
      ['partner', 'variant', 'entity', 'outcome'],
    ),
    pushTransactions: registry.histogram(
      'partner_sync_push_transaction_seconds',
      'Load transactions of pushed requests (group commit), by entity: time from BEGIN to the answers, after-load jobs included.',
      ['entity'],
      LATENCY_BUCKETS,
    ),
    pushGroupRequests: registry.histogram(
      'partner_sync_push_transaction_requests',
      'Pushed requests written by one load transaction (group commit), by entity.',
      ['entity'],
      [1, 2, 5, 10, 20, 50, 100, 200, 500],
    ),
  };
}

export type ApiMetrics = ReturnType<typeof apiMetrics>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The API's metrics (src/api/routes/metrics.ts). */
    apiMetrics: ApiMetrics;
  }
}

const PUSH_ROUTE = /^\/api\/v1\/([^/]+)\/([^/]+?)(?:\/bulk)?$/;
/** Label of requests no route matched (404s): one series, not one per URL tried. */
const UNMATCHED = '(unmatched)';
const START = Symbol('metrics-start');

type Timed = FastifyRequest & { [START]?: bigint };

const routeOf = (request: FastifyRequest): string => request.routeOptions.url ?? UNMATCHED;

/** Variant and entity of a push route: its parameters when it has them, else its literal path. */
function pushTarget(request: FastifyRequest, route: string): { variant: string; entity: string } | undefined {
  const params = (request.params ?? {}) as Record<string, unknown>;
  if (typeof params.variant === 'string' && typeof params.entity === 'string') return { variant: params.variant, entity: params.entity };
  const m = PUSH_ROUTE.exec(route);
  return m && !m[1]?.startsWith(':') ? { variant: m[1] as string, entity: m[2] as string } : undefined;
}

function countPushed(metrics: ApiMetrics, request: FastifyRequest, payload: unknown): void {
  const target = pushTarget(request, routeOf(request));
  if (!target || typeof payload !== 'string') return;
  let body: { accepted?: unknown; loaded?: unknown; waiting?: unknown };
  try {
    body = JSON.parse(payload) as typeof body;
  } catch {
    return;
  }
  const partner = request.principal?.partner ?? '(unknown)';
  for (const outcome of ['accepted', 'loaded', 'waiting'] as const) {
    const n = body[outcome];
    if (typeof n === 'number' && n > 0) metrics.records.inc({ partner, ...target, outcome }, n);
  }
}

const metricsModule = (app: FastifyInstance): void => {
  const metrics = apiMetrics();
  app.decorate('apiMetrics', metrics);
  app.addHook('onRequest', async (request) => {
    (request as Timed)[START] = process.hrtime.bigint();
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.method === 'POST' && reply.statusCode === 200) countPushed(metrics, request, payload);
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: routeOf(request), status: String(reply.statusCode) };
    metrics.requests.inc(labels);
    const start = (request as Timed)[START];
    if (start !== undefined) metrics.duration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
  });
  app.get('/metrics', async (_request, reply) => {
    return reply.type(metrics.registry.contentType).send(await metrics.registry.render());
  });
};
// Hooks and the decorator belong to the whole app, not to a plugin scope.
(metricsModule as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

export const metricsRoutes: RouteModule = metricsModule;
