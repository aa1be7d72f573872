/**
 * `partner-sync worker`: the cron daemon for every partner in the config folder.
 *
 * - Schedules come from each stream's `schedule` (cron, UTC); see src/worker/scheduler.ts.
 * - SIGTERM / SIGINT: no new runs; running ones finish (each batch commits whole) within
 *   `--stop-timeout` seconds, else they are abandoned: the process exits, the open batch rolls
 *   back and no checkpoint moves. Exit 0 after a clean stop, 1 after abandoning. A second
 *   signal exits at once (1).
 * - SIGHUP: the definitions, the commission plans and the fraud rules are read and validated
 *   again; a definition file with errors keeps its partner's previous definition running, a plans
 *   or fraud rules file with errors keeps the previous ones, and the errors are logged.
 * - Commission plans (`<config>/commissions.yaml`): the commission job runs after every loaded
 *   batch; an invalid plans file at start is a usage error (exit 2), as for `run`.
 * - `--metrics-port N`: Prometheus text on /metrics, /healthz (liveness: the scheduler loop turns)
 *   and /readyz (readiness: the store answers, migrations current, definitions scheduled).
 * - ALERT_WEBHOOK_URL (or ALERT_WEBHOOK_URL_FILE): freshness breaches are POSTed there.
 * - Postbacks: with POSTBACK_SECRET_KEY set, the outbox's events are delivered (src/postbacks/start.ts).
 * Logs: JSON lines on stderr (readable lines on a terminal), level from LOG_LEVEL (default info).
 */
import { loadFeedConfig } from '../../commission/fx-feed.js';
import { insecureUrlReason } from '../../config/secure-url.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadRetention } from '../../privacy/retention.js';
import { formatPlanError, loadPlans, type LoadedPlans } from '../../commission/load-plans.js';
import { createRedactor } from '../../config/redact.js';
import { formatDefinitionError, loadDefinitions } from '../../config/load-definitions.js';
import { createLogger, type Logger } from '../../log.js';
import { alertSecrets, loadAlertConfig } from '../../alerts/config.js';
import { AlertRouter } from '../../alerts/router.js';
import { startMetricsServer, type MetricsServer } from '../../worker/http.js';
import { InstanceLockedError } from '../../worker/instance-lock.js';
import { mergeDefinitions } from '../../worker/reload.js';
import { DEFAULT_DAILY_RETRY_MS } from '../../worker/scheduler.js';
import { startWorker, type Worker } from '../../worker/worker.js';
import { withStore, type GlobalOptions } from '../context.js';
import { commissionPlans } from './commissions.js';
import { fraudConfig } from './fraud.js';
import { reloadFraudRules } from '../../../jobs/fraud.js';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';
import { startPostbackDelivery } from '../../postbacks/start.js';
import type { Delivery } from '../../postbacks/delivery-thread.js';
import { flushTracing } from '../../trace.js';

export interface WorkerCommandOptions {
  /** Serve /metrics, /healthz and /readyz on this port (0: any free port). No server when absent. */
  metricsPort?: number;
  /** Address the metrics server binds (default 127.0.0.1; 0.0.0.0 in a container). */
  metricsHost?: string;
  /** Seconds a stop waits for running runs before abandoning them (default 20). */
  stopTimeout?: number;
  /** Minutes between retries of a daily run whose day has not loaded (default 15). */
  retryInterval?: number;
  /** Runs at once in this worker (default: 4 on PostgreSQL, 1 on SQLite). */
  concurrency?: number;
}

export const DEFAULT_STOP_TIMEOUT_S = 20;

/** The process around the worker: signals, exit, environment (tests pass their own). */
export interface WorkerProcess {
  onSignal(signal: NodeJS.Signals, handler: () => void): () => void;
  exit(code: number): void;
  env: NodeJS.ProcessEnv;
}

export const nodeProcess = (): WorkerProcess => ({
  onSignal(signal, handler) {
    process.on(signal, handler);
    return () => process.off(signal, handler);
  },
  exit: (code) => process.exit(code),
  env: process.env,
});

/** Secrets known outside the definitions and the alert channels: a store URL's password. */
function extraSecrets(storeUrl: string | undefined): string[] {
  const out: string[] = [];
  if (storeUrl && /^postgres(ql)?:\/\//i.test(storeUrl)) {
    try {
      const password = decodeURIComponent(new URL(storeUrl).password);
      if (password) out.push(password);
    } catch {
      // not a parseable URL: the store reports it
    }
  }
  return out;
}

const flush = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

export async function workerCommand(globals: GlobalOptions, opts: WorkerCommandOptions, io: Io, proc: WorkerProcess = nodeProcess()): Promise<number> {
  const env = proc.env;
  const dir = join(globals.config, 'partners');
  const stopTimeoutMs = (opts.stopTimeout ?? DEFAULT_STOP_TIMEOUT_S) * 1000;
  const retryMs = opts.retryInterval === undefined ? DEFAULT_DAILY_RETRY_MS : opts.retryInterval * 60_000;
  if (!(retryMs > 0)) throw new CliError('--retry-interval must be at least 1 minute', EXIT_USAGE);
  if (opts.concurrency !== undefined && !(opts.concurrency >= 1)) throw new CliError('--concurrency must be at least 1', EXIT_USAGE);

  // Where alerts go (config/alerts.yaml, or ALERT_WEBHOOK_URL alone): a wrong file or a channel's unset variable stops the start.
  const alerts = await loadAlertConfig(join(globals.config, 'alerts.yaml'), env);
  if (alerts.errors.length > 0) throw new CliError(alerts.errors.join('\n'), EXIT_USAGE);
  const storeUrl = globals.store ?? env.STORE_URL;
  const loaded = await loadDefinitions(dir, env);
  const plansFile = join(globals.config, 'commissions.yaml');
  const readPlans = async (): Promise<LoadedPlans> => (existsSync(plansFile) ? loadPlans(plansFile) : { plans: [], errors: [] });
  // At start as for `run`: an invalid plans file is a usage error listing every problem.
  const plans = await commissionPlans(globals, io, { quiet: true });
  // Read at start (an invalid file is a usage error); SIGHUP reads it again.
  const fraud = await fraudConfig(globals);
  const fraudFile = join(globals.config, 'fraud.yaml');
  // The daily purge's retention (config/retention.yaml): a wrong file stops the start, as wrong plans do.
  const retention = await loadRetention(join(globals.config, 'retention.yaml'));
  if (!retention.retention) throw new CliError(retention.errors.join('\n'), EXIT_USAGE);
  // The daily FX feed (config/fx-feed.yaml), when configured: a wrong file stops the start too.
  const fxFeed = await loadFeedConfig(join(globals.config, 'fx-feed.yaml'), insecureUrlReason);
  if (fxFeed.errors.length > 0) throw new CliError(fxFeed.errors.join('\n'), EXIT_USAGE);

  // One redactor for every line, replaced when a reload brings new secrets (old ones stay covered).
  const secrets = new Set<string>([...extraSecrets(storeUrl), ...alertSecrets(alerts.config), ...loaded.definitions.flatMap((d) => d.secrets)]);
  let redactor = createRedactor([...secrets]);
  const redact = (text: string): string => redactor(text);
  const addSecrets = (more: readonly string[]): void => {
    const before = secrets.size;
    for (const s of more) secrets.add(s);
    if (secrets.size !== before) redactor = createRedactor([...secrets]);
  };
  const logger: Logger = createLogger({ redact, level: env.LOG_LEVEL ?? 'info' });

  for (const e of loaded.errors) logger.error(`invalid definition, not scheduled: ${formatDefinitionError(e)}`, { event: 'definition_error', file: e.file, path: e.path });
  if (loaded.definitions.length === 0) {
    const why = loaded.errors.length > 0 ? loaded.errors.map((e) => '  ' + formatDefinitionError(e)).join('\n') : `  no *.yaml connector definition in ${dir}`;
    throw new CliError(`nothing to schedule:\n${why}`, EXIT_USAGE);
  }

  return withStore(globals, async (store) => {
    let server: MetricsServer | undefined;
    const unsubscribe: (() => void)[] = [];
    let stopSignal: NodeJS.Signals | undefined;
    let requestStop!: () => void;
    const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));
    const onStop = (signal: NodeJS.Signals) => () => {
      if (stopSignal) {
        io.err(`partner-sync worker: second ${signal}: exiting now`);
        logger.error(`second ${signal}: exiting now, runs in progress abandoned (their open batches roll back)`, { event: 'worker_killed' });
        proc.exit(EXIT_FAILURE);
        return;
      }
      stopSignal = signal;
      requestStop();
    };
    // Before the worker starts: a stop signal in between must be a graceful stop, not the default kill.
    for (const signal of ['SIGTERM', 'SIGINT'] as const) unsubscribe.push(proc.onSignal(signal, onStop(signal)));

    // SIGHUP too, before the worker starts: its default action ends the process. A reload asked
    // for while the worker starts runs once it has started.
    let markStarted!: (w: Worker | undefined) => void;
    const started = new Promise<Worker | undefined>((resolve) => (markStarted = resolve));
    let reloading = Promise.resolve();
    const reload = async (): Promise<void> => {
      const worker = await started;
      if (!worker) return;
      const fresh = await loadDefinitions(dir, env);
      addSecrets(fresh.definitions.flatMap((d) => d.secrets));
      const merged = mergeDefinitions(worker.definitions(), fresh);
      for (const e of merged.errors) {
        logger.error(`reload: invalid definition: ${formatDefinitionError(e)}`, { event: 'definition_error', file: e.file, path: e.path });
      }
      for (const partner of merged.kept) logger.warn(`reload: partner ${partner} keeps its previous definition (its file has errors)`, { partner, event: 'definition_kept' });
      worker.setDefinitions(merged.definitions, merged.invalid);
      const freshPlans = await readPlans();
      if (freshPlans.errors.length > 0) {
        for (const e of freshPlans.errors) logger.error(`reload: invalid commission plans: ${formatPlanError(e)}`, { event: 'plans_error', file: e.file, path: e.path });
        logger.warn(`reload: the commission plans in force stay (${worker.plans().length} plan(s)): ${plansFile} has errors`, { event: 'plans_kept' });
      } else worker.setPlans(freshPlans.plans);
      const freshFraud = await reloadFraudRules(fraudFile, logger);
      if (freshFraud.ok) worker.setFraud(freshFraud.config);
    };
    unsubscribe.push(proc.onSignal('SIGHUP', () => {
      logger.info('SIGHUP: reading the definitions, commission plans and fraud rules again', { event: 'reload' });
      reloading = reloading.then(reload).catch((error: unknown) => {
        logger.error(`reload failed, nothing changed: ${(error as Error).message}`, { event: 'reload_failed' });
      });
    }));

    const router = alerts.config ? new AlertRouter({ config: alerts.config, logger, redact }) : undefined;
    let worker: Worker;
    try {
      worker = await startWorker({
        store,
        definitions: loaded.definitions,
        invalid: loaded.invalid,
        plans,
        fraud,
        logger,
        redact,
        alerter: router,
        ...(alerts.config ? { alertThresholds: alerts.config.thresholds } : {}),
        dailyRetryMs: retryMs,
        maxConcurrentRuns: opts.concurrency,
        retention: retention.retention,
        ...(fxFeed.config ? { fxFeed: fxFeed.config } : {}),
      });
    } catch (error) {
      markStarted(undefined);
      for (const off of unsubscribe) off();
      if (error instanceof InstanceLockedError) throw new CliError(error.message, EXIT_USAGE, { cause: error });
      throw error;
    }
    markStarted(worker);
    let deliverer: Delivery | undefined;
    try {
      deliverer = await startPostbackDelivery(store, logger, env, worker.metrics.registry);
    } catch (error) {
      await worker.stop(0);
      for (const u of unsubscribe) u();
      throw new CliError(`cannot deliver postbacks: ${(error as Error).message}`, EXIT_USAGE, { cause: error });
    }

    try {
      if (opts.metricsPort !== undefined) {
        server = await startMetricsServer({
          port: opts.metricsPort,
          host: opts.metricsHost ?? '127.0.0.1',
          render: () => worker.metrics.registry.render(),
          contentType: worker.metrics.registry.contentType,
          health: () => worker.health(),
          ready: () => worker.ready(),
        });
        logger.info(`metrics on ${server.url}/metrics, liveness on ${server.url}/healthz, readiness on ${server.url}/readyz`, { event: 'metrics_listening', port: server.port });
      }
    } catch (error) {
      await worker.stop(0);
      for (const u of unsubscribe) u();
      throw new CliError(`cannot serve metrics on ${opts.metricsHost ?? '127.0.0.1'}:${opts.metricsPort}: ${(error as Error).message}`, EXIT_USAGE, { cause: error });
    }

    await stopRequested;
    const running = worker.scheduler.running().filter((r) => r.phase === 'running');
    logger.info(`${stopSignal}: stopping; no new runs${running.length > 0 ? `; waiting up to ${stopTimeoutMs / 1000} s for ${running.map((r) => r.job.key).join(', ')}` : ''}`, { event: 'worker_stopping' });
    await reloading;
    await deliverer?.stop();
    const result = await worker.stop(stopTimeoutMs);
    await server?.close();
    router?.close();
    if (result.abandoned.length > 0) {
      logger.error(
        `stopped after ${stopTimeoutMs / 1000} s with ${result.abandoned.length} run(s) unfinished (${result.abandoned.map((r) => r.job.key).join(', ')}): abandoned; their open batches roll back and their checkpoints stay where they were`,
        { event: 'worker_stopped', abandoned: result.abandoned.map((r) => r.job.key) },
      );
      await flush();
      // The spans so far go out first: main's end, which exports them otherwise, is not reached.
      await flushTracing();
      // Runs still hold store connections mid-transaction: ending the process is what abandons them.
      proc.exit(EXIT_FAILURE);
      for (const u of unsubscribe) u();
      return EXIT_FAILURE;
    }
    for (const u of unsubscribe) u();
    logger.info('worker stopped', { event: 'worker_stopped' });
    return EXIT_OK;
  });
}
