/**
 * The worker's HTTP endpoint (node:http): `/metrics` in the Prometheus text format, `/healthz`
 * for the container health check (200 while the scheduler loop is alive, 503 while stopping or
 * when the loop has stalled).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Health {
  ok: boolean;
  detail: string;
}

export interface MetricsServerOptions {
  port: number;
  host: string;
  render(): string;
  health(): Health;
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
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' }).end(req.method === 'HEAD' ? undefined : options.render());
      return;
    }
    if (path === '/healthz') {
      const h = options.health();
      res.writeHead(h.ok ? 200 : 503, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: h.ok ? 'ok' : 'unhealthy', detail: h.detail }) + '\n');
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found: /metrics and /healthz are served\n');
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
