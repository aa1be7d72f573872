/**
 * `partner-sync sandbox [--port N] [--seed N] [--customers N] [--error-rate F] [--latency MS]
 * [--throttle-every N] [--token-ttl S] [--duplicates] [--fraud-patterns N]`: runs the local sandbox
 * partner API until SIGINT or SIGTERM. Its client secret is never printed. `--fraud-patterns N`
 * adds N labelled instances of each fraud rule to the clean data (GET /_sandbox/fraud-patterns
 * lists them).
 */
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import type { SandboxFaults } from '../../sandbox/faults.js';
import { defaultClients } from '../../sandbox/oauth.js';
import { CliError, EXIT_OK, type Io } from '../io.js';
import type { Clock } from '../../kernel/clock.js';

export interface SandboxCommandOptions {
  port: number;
  seed?: number;
  customers?: number;
  errorRate?: number;
  latencyMs?: number;
  throttleEvery?: number;
  tokenTtl?: number;
  duplicates?: boolean;
  fraudPatterns?: number;
  /** `partner`: records in a partner's own names, units and codes. */
  style?: 'spec' | 'partner';
  /** The process's clock: the generated months end yesterday by it. */
  clock?: Clock;
}

/**
 * Starts the sandbox, prints where it listens, and resolves to 0 once a signal (or `stop`, for
 * tests running it in-process) has closed it.
 */
export async function sandboxCommand(opts: SandboxCommandOptions, io: Io, stop?: AbortSignal): Promise<number> {
  const whole = (name: string, value: number | undefined, min: number, max = Number.MAX_SAFE_INTEGER) => {
    if (value !== undefined && (!Number.isInteger(value) || value < min || value > max)) {
      throw new CliError(`${name} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}, got ${value}`);
    }
  };
  whole('--port', opts.port, 0, 65535);
  whole('--seed', opts.seed, 0);
  whole('--customers', opts.customers, 0);
  whole('--fraud-patterns', opts.fraudPatterns, 0);
  whole('--latency', opts.latencyMs, 0);
  whole('--throttle-every', opts.throttleEvery, 0);
  whole('--token-ttl', opts.tokenTtl, 1);
  if (opts.errorRate !== undefined && !(opts.errorRate >= 0 && opts.errorRate <= 1)) {
    throw new CliError(`--error-rate must be a fraction from 0 to 1, got ${opts.errorRate}`);
  }

  const faults: Partial<SandboxFaults> = {};
  if (opts.errorRate !== undefined) faults.errorRate = opts.errorRate;
  if (opts.latencyMs !== undefined) faults.latencyMs = opts.latencyMs;
  if (opts.throttleEvery !== undefined) faults.throttleEvery = opts.throttleEvery;
  if (opts.duplicates === true) faults.duplicateAcrossPages = true;

  const clients = defaultClients();
  let sandbox: Sandbox;
  try {
    sandbox = await startSandbox({
      port: opts.port,
      seed: opts.seed,
      customers: opts.customers,
      fraudPatterns: opts.fraudPatterns,
      tokenTtlSeconds: opts.tokenTtl,
      clients,
      faults,
      style: opts.style,
      clock: opts.clock,
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new CliError(`port ${opts.port} on 127.0.0.1 is in use; pick another with --port`, 1, { cause: error });
    throw error;
  }

  const clientId = clients[0]?.client_id ?? '';
  io.out(`sandbox partner API listening on ${sandbox.url} (client id ${clientId}; secret from SANDBOX_CLIENT_SECRET or the demo default)`);
  if (opts.fraudPatterns) io.out(`fraud patterns: ${sandbox.data.patterns.length} labelled instances added (${opts.fraudPatterns} per rule): GET ${sandbox.url}/_sandbox/fraud-patterns`);

  await new Promise<void>((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      stop?.removeEventListener('abort', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
    if (stop?.aborted === true) done();
    else stop?.addEventListener('abort', done, { once: true });
  });
  await sandbox.close();
  return EXIT_OK;
}
