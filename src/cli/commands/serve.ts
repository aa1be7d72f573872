/**
 * `partner-sync serve`: the HTTP API and the web console (src/cli/server.ts) on one store, loading
 * through the one Loader composition (src/cli/loader.ts).
 * - Transport: HTTPS with --tls-cert and --tls-key; plain HTTP only on a loopback address, or
 *   with --trust-proxy behind a TLS-terminating proxy. Anything else is a usage error (exit 2):
 *   spec §5.5, all requests use HTTPS.
 * - One line on stderr when listening: `partner-sync serve: listening on <url>` (port 0 picks a
 *   free port; the line names the one bound).
 * - SIGTERM / SIGINT: stop accepting, let requests in flight finish and commit (route modules
 *   drain their queues in onClose hooks), close the store, exit 0. A second signal exits at once (1).
 * - Postbacks: with POSTBACK_SECRET_KEY set, it delivers the outbox's events too (src/postbacks/start.ts).
 * Logs: JSON lines on stderr (readable on a terminal), one per request; level from LOG_LEVEL (info).
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../log.js';
import { listClients } from '../../access/api-clients.js';
import { policyProblems } from '../../spec/personal-data.js';
import type { Store } from '../../store/store.js';
import { withStore, type GlobalOptions } from '../context.js';
import { loadConfig } from '../definitions.js';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';
import { cliLoader } from '../loader.js';
import { buildApi } from '../server.js';
import { nodeProcess, type WorkerProcess } from './worker.js';
import { startPostbackDelivery } from '../../postbacks/start.js';
import type { Delivery } from '../../postbacks/delivery-thread.js';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;

export interface ServeOptions {
  host?: string;
  port?: number;
  tlsCert?: string;
  tlsKey?: string;
  trustProxy?: boolean;
}

/** 127.0.0.0/8, ::1 and localhost: reachable from this machine only. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
  return false;
}

/**
 * An API client whose personal-data policy hashes (clients add --personal-data email=hash) needs
 * the hash key: without it every push of that client would fail, so serve refuses to start (exit
 * 2), naming the clients and the variable, as a definition's policy does for pulls.
 */
async function hashingClientsNeedTheKey(store: Store, env: NodeJS.ProcessEnv): Promise<void> {
  const hashing = (await listClients(store)).filter((c) => c.revokedAt === undefined && c.personalData && Object.values(c.personalData).includes('hash'));
  if (hashing.length === 0) return;
  const problems = policyProblems(hashing[0]?.personalData, env);
  if (problems.length === 0) return;
  throw new CliError(`cannot start the API: API client(s) ${hashing.map((c) => c.clientId).join(', ')} hash personal fields (clients add --personal-data), and ${problems[0]?.message}`, EXIT_USAGE);
}

function portFrom(env: NodeJS.ProcessEnv): number {
  const text = env.PORT;
  if (text === undefined || text === '') return DEFAULT_PORT;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new CliError(`PORT must be a port number, got ${JSON.stringify(text)}`, EXIT_USAGE);
  return n;
}

/**
 * PARTNER_SYNC_RATE_LIMIT_PER_MINUTE: a lower limit for tests of several processes (the spec's
 * limit, 1000, is the default and what production runs with).
 */
function rateLimitFrom(env: NodeJS.ProcessEnv): number | undefined {
  const text = env.PARTNER_SYNC_RATE_LIMIT_PER_MINUTE;
  if (text === undefined || text === '') return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`PARTNER_SYNC_RATE_LIMIT_PER_MINUTE must be a whole number of at least 1, got ${JSON.stringify(text)}`, EXIT_USAGE);
  return n;
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new CliError(`cannot read the TLS ${what} ${file}: ${(error as Error).message}`, EXIT_USAGE);
  }
}

export async function serveCommand(globals: GlobalOptions, opts: ServeOptions, io: Io, proc: WorkerProcess = nodeProcess()): Promise<number> {
  const env = proc.env;
  const host = opts.host ?? DEFAULT_HOST;
  const port = opts.port ?? portFrom(env);
  if (port > 65535) throw new CliError(`--port must be at most 65535, got ${port}`, EXIT_USAGE);
  if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined)) throw new CliError('--tls-cert and --tls-key go together: give both for HTTPS', EXIT_USAGE);
  const https = opts.tlsCert !== undefined && opts.tlsKey !== undefined ? { cert: readPem(opts.tlsCert, 'certificate'), key: readPem(opts.tlsKey, 'key') } : undefined;
  if (!https && !opts.trustProxy && !isLoopback(host)) {
    throw new CliError(`refusing plain HTTP on ${host}, which is not a loopback address: give --tls-cert and --tls-key for HTTPS, or --trust-proxy when a TLS-terminating proxy stands in front`, EXIT_USAGE);
  }

  const config = await loadConfig(globals);
  // A line per request: batched into one write per turn of the event loop (src/log.ts).
  const logger = createLogger({ redact: config.redact, level: env.LOG_LEVEL ?? 'info', batched: true });

  return withStore(globals, async (store) => {
    await hashingClientsNeedTheKey(store, env);
    const loader = await cliLoader(globals, io, store, logger);
    let app;
    try {
      app = await buildApi({ store, loader, logger, config: { dir: globals.config, definitions: config.definitions, invalid: config.invalid, redact: config.redact } }, { https, trustProxy: opts.trustProxy, env, rateLimitPerMinute: rateLimitFrom(env) });
    } catch (error) {
      throw new CliError(`cannot start the API: ${(error as Error).message}`, EXIT_USAGE, { cause: error });
    }

    let stopSignal: NodeJS.Signals | undefined;
    let requestStop!: () => void;
    const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));
    const unsubscribe = (['SIGTERM', 'SIGINT'] as const).map((signal) => proc.onSignal(signal, () => {
      if (stopSignal) {
        io.err(`partner-sync serve: second ${signal}: exiting now`);
        proc.exit(EXIT_FAILURE);
        return;
      }
      stopSignal = signal;
      requestStop();
    }));

    try {
      await app.listen({ host, port });
    } catch (error) {
      for (const off of unsubscribe) off();
      await app.close();
      throw new CliError(`cannot listen on ${host}:${port}: ${(error as Error).message}`, EXIT_USAGE, { cause: error });
    }
    const address = app.server.address() as AddressInfo;
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `${https ? 'https' : 'http'}://${shownHost}:${address.port}`;
    io.err(`partner-sync serve: listening on ${url}`);
    logger.info(`listening on ${url}`, { event: 'api_listening', port: address.port });
    let deliverer: Delivery | undefined;
    try {
      deliverer = await startPostbackDelivery(store, logger, env, app.apiMetrics.registry);
    } catch (error) {
      for (const off of unsubscribe) off();
      await app.close();
      throw new CliError(`cannot deliver postbacks: ${(error as Error).message}`, EXIT_USAGE, { cause: error });
    }

    await stopRequested;
    logger.info(`${stopSignal}: no new connections; finishing the requests in flight`, { event: 'api_stopping' });
    await deliverer?.stop();
    await app.close();
    for (const off of unsubscribe) off();
    logger.info('API stopped', { event: 'api_stopped' });
    return EXIT_OK;
  });
}
