/**
 * The worker's HTTP endpoint (node:http): `/metrics` in the Prometheus text format (src/metrics.ts), `/healthz`
 * for liveness, the container health check (200 while the scheduler loop is alive, 503 while
 * stopping or when the loop has stalled), and `/readyz` for readiness (200 when the store answers,
 * its migrations are current and the definitions are scheduled; 503 with the failing check else:
 * src/store/readiness.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readiness } from '../store/readiness.js';

export interface Health {
  ok: boolean;
  detail: string;
}

export interface MetricsServerOptions {
  port: number;
  host: string;
  /** The exposition (src/metrics.ts MetricsRegistry.render). */
  render(): Promise<string> | string;
  /** Its Content-Type; the Prometheus text format 0.0.4 when absent. */
  contentType?: string;
  health(): Health;
  /** Readiness: /readyz answers 404 without it. */
  ready?(): Promise<Readiness>;
}

export interface MetricsServer {
  port: number;
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    if (path === '/metrics') {
      const type = options.contentType ?? 'text/plain; version=0.0.4; charset=utf-8';
      Promise.resolve()
        .then(() => options.render())
        .then(
          (text) => res.writeHead(200, { 'Content-Type': type }).end(req.method === 'HEAD' ? undefined : text),
          (error: unknown) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`cannot render metrics: ${(error as Error).message}\n`),
        );
      return;
    }
    if (path === '/healthz') {
      const h = options.health();
      res.writeHead(h.ok ? 200 : 503, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: h.ok ? 'ok' : 'unhealthy', detail: h.detail }) + '\n');
      return;
    }
    const ready = options.ready;
    if (path === '/readyz' && ready) {
      ready().then(
        (r) => res.writeHead(r.ok ? 200 : 503, { 'Content-Type': 'application/json' }).end(JSON.stringify(r.body) + '\n'),
        (error: unknown) => res.writeHead(503, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'not ready', detail: (error as Error).message }) + '\n'),
      );
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`not found: /metrics, /healthz${ready ? ' and /readyz' : ''} are served\n`);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    port,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
