/**
 * The worker daemon, assembled: connector definitions → one job per (partner, stream) → the
 * scheduler (cron in UTC, catch-up, retries, overlap and cross-worker locks) → runs through the
 * same code as `partner-sync run`; a freshness monitor (breach events, alert webhook); metrics.
 * The command line (src/cli/commands/worker.ts) adds signals, the HTTP endpoint and exit codes.
 */
import { startFxFeedSchedule } from './fx-feed-schedule.js';
import type { FeedConfig } from '../commission/fx-feed.js';
import { inferDeletes } from '../../jobs/infer-deletes.js';
import { takeUnalerted } from '../store/delete-holds.js';
import type { createSource } from '../../connectors/index.js';
import { keepMonthsAhead } from '../store/partitions.js';
import { createLoadHooks, resumeJobs } from '../../jobs/load-hooks.js';
import type { Plan } from '../commission/plans.js';
import type { FraudConfig } from '../fraud/config.js';
import type { PartnerDefinition } from '../config/definition.js';
import type { InvalidDefinition } from '../config/load-definitions.js';
import type { Logger, Redact } from '../log.js';
import { Loader } from '../pipeline/load.js';
import { specValidator } from '../spec/validator.js';
import type { DialectProfile } from '../store/dialects.js';
import { readiness, storeChecks, type Check, type Readiness } from '../store/readiness.js';
import type { Store } from '../store/store.js';
import type { Alerter } from './alert.js';
import { DEFAULT_THRESHOLDS, type Thresholds } from '../alerts/config.js';
import { storeConditions } from './alert-conditions.js';
import { FreshnessMonitor } from './freshness-monitor.js';
import { acquireInstanceLock, type InstanceLock } from './instance-lock.js';
import { jobsFromDefinitions } from './jobs.js';
import { locksFor, type StreamLocks } from '../store/stream-locks.js';
import { workerMetrics, type WorkerMetrics } from './metrics.js';
import { Scheduler, type SchedulerPorts, type StopResult } from './scheduler.js';
import { closeAbandonedRuns, readStates, storePorts } from './store-ports.js';
import { clockTimers, type Timers } from './timers.js';
import { startReconcileSchedule } from './reconcile-schedule.js';
import { startPurgeSchedule } from './purge-schedule.js';
import { DEFAULT_RETENTION, type Retention } from '../privacy/retention.js';

/** What the store's locking capability means for the worker. */
const WORKER_PROFILES: Record<DialectProfile['locking'], { instanceLock: boolean; maxConcurrentRuns: number }> = {
  // Several workers share the store; each runs a few streams at once on its connection pool.
  advisory: { instanceLock: false, maxConcurrentRuns: 4 },
  // One worker per file, and one connection: runs take turns (a day's transaction holds it).
  'single-process': { instanceLock: true, maxConcurrentRuns: 1 },
};

export interface WorkerOptions {
  store: Store;
  definitions: readonly PartnerDefinition[];
  /** Definition files that cannot load (and pull nothing): the freshness monitor counts their streams stopped. */
  invalid?: readonly InvalidDefinition[];
  /** Commission plans: the job runs after every loaded batch (none: no commissions). */
  plans?: readonly Plan[];
  /** Fraud rules (config/fraud.yaml): detection runs after every loaded batch (none: no detection). */
  fraud?: FraudConfig;
  logger: Logger;
  redact: Redact;
  /** Must tell the same time as the store's clock. */
  timers?: Timers;
  locks?: StreamLocks;
  /** Replaces the store-backed run and queries (tests). */
  ports?: SchedulerPorts;
  source?: typeof createSource;
  alerter?: Alerter;
  metrics?: WorkerMetrics;
  dailyRetryMs?: number;
  maxConcurrentRuns?: number;
  freshnessIntervalMs?: number;
  maxSleepMs?: number;
  /** How long the store has to answer a readiness probe (default READINESS_TIMEOUT_MS). */
  readinessTimeoutMs?: number;
  /** Backoff of the store probe during an outage (default 1 s doubling to 30 s). */
  storeRetry?: { initialMs: number; maxMs: number };
  /** The daily purge's retention (config/retention.yaml; default DEFAULT_RETENTION) and cron (default 03:30 UTC). */
  retention?: Retention;
  purgeSchedule?: string;
  /** The daily FX feed (config/fx-feed.yaml); absent: rates come by `fx import` only. */
  fxFeed?: FeedConfig;
  /** The fetch the FX feed reads with (tests: default the global one). */
  fxFetch?: typeof fetch;
  /** What makes a condition an alert (config/alerts.yaml's thresholds; default DEFAULT_THRESHOLDS). */
  alertThresholds?: Thresholds;
}

export interface Worker {
  readonly scheduler: Scheduler;
  readonly monitor: FreshnessMonitor;
  readonly metrics: WorkerMetrics;
  definitions(): PartnerDefinition[];
  /** Replaces the definitions (a reload): jobs are added, re-planned or dropped; `invalid` as in WorkerOptions. */
  setDefinitions(defs: readonly PartnerDefinition[], invalid?: readonly InvalidDefinition[]): void;
  plans(): readonly Plan[];
  /** Replaces the commission plans (a reload): batches committed from now on are evaluated with them. */
  setPlans(plans: readonly Plan[]): void;
  fraud(): FraudConfig | undefined;
  /** Replaces the fraud rules (a reload; none: no detection): batches committed from now on are judged by them. */
  setFraud(config: FraudConfig | undefined): void;
  /** Liveness: the scheduler loop turns. */
  health(): { ok: boolean; detail: string };
  /** Readiness: alive, the store answers within the bound, its migrations current, definitions scheduled. */
  ready(): Promise<Readiness>;
  /** No new runs; waits up to `timeoutMs` for running ones; frees the locks. */
  stop(timeoutMs: number): Promise<StopResult>;
}

export async function startWorker(options: WorkerOptions): Promise<Worker> {
  const { store, logger, redact } = options;
  // The store's clock unless told otherwise: the process's clock (a test's, in tests) for every schedule.
  const timers = options.timers ?? clockTimers(store.clock);
  const profile = WORKER_PROFILES[store.dialect.locking];
  const metrics = options.metrics ?? workerMetrics();
  let instanceLock: InstanceLock | undefined;
  if (profile.instanceLock && store.location.target !== ':memory:') instanceLock = acquireInstanceLock(store.location.target, timers.now());

  let definitions = [...options.definitions];
  let invalid = [...(options.invalid ?? [])];
  let plans: readonly Plan[] = [...(options.plans ?? [])];
  let fraud = options.fraud;
  const locks = options.locks ?? locksFor(store, logger);
  const loader = new Loader({ store, validator: specValidator(), ...createLoadHooks(store, { plans: () => plans, logger, fraud: () => fraud }) });
  // What a crash left between a batch's commit and its evaluation (fraud rules, commissions), before any new run.
  await resumeJobs(store, { plans, logger, fraud }).catch((error: unknown) => {
    logger.error(`commissions: resuming pending evaluations failed, they stay pending: ${(error as Error).message}`, { event: 'commissions_failed' });
  });
  const ports = options.ports ?? storePorts({ store, loader, logger, redact, source: options.source, definition: (p) => definitions.find((d) => d.partner === p) });

  const monitor = new FreshnessMonitor({
    timers,
    logger,
    locks,
    alerter: options.alerter,
    metrics,
    intervalMs: options.freshnessIntervalMs,
    streams: () => jobsFromDefinitions(definitions).map((j) => ({ partner: j.partner, stream: j.stream })),
    invalid: () => invalid,
    readStates: () => readStates(store),
    storeDown: () => scheduler.storeDown(),
    newDeleteHolds: () => takeUnalerted(store.knex, store.now()),
    conditions: (now) => storeConditions(store.knex, { streams: jobsFromDefinitions(definitions).map((j) => ({ partner: j.partner, stream: j.stream })), thresholds: options.alertThresholds ?? DEFAULT_THRESHOLDS, now, redact }),
  });

  let running = 0;
  const scheduler = new Scheduler({
    timers,
    logger,
    locks,
    ports,
    dailyRetryMs: options.dailyRetryMs,
    maxConcurrentRuns: options.maxConcurrentRuns ?? profile.maxConcurrentRuns,
    maxSleepMs: options.maxSleepMs,
    storeRetry: options.storeRetry,
    alerter: options.alerter,
    events: {
      runStarted() {
        metrics.running.set({}, ++running);
      },
      runFinished(job, _slot, r) {
        metrics.running.set({}, --running);
        const labels = { partner: job.partner, stream: job.stream };
        metrics.runs.inc({ ...labels, status: r.status });
        metrics.rowsPulled.inc(labels, r.counts.pulled);
        metrics.rowsLoaded.inc(labels, r.counts.loaded + r.counts.released);
        metrics.rowsRejected.inc(labels, r.counts.rejected);
        metrics.rowsWaiting.inc(labels, r.counts.waiting);
        metrics.rowsStale.inc(labels, r.counts.stale);
        metrics.throttled.inc(labels, r.counts.throttled);
        metrics.retries.inc(labels, r.counts.retries);
        metrics.pageRewalks.inc(labels, r.pageRewalks ?? 0);
        metrics.duration.observe(labels, r.durationMs / 1000);
        if (r.status === 'succeeded') metrics.lastSuccess.set(labels, timers.now().getTime() / 1000);
        // A run changes freshness: report a breach or a recovery now rather than at the next minute.
        void monitor.check();
      },
      skipped(job, _slot, reason) {
        metrics.skipped.inc({ partner: job.partner, stream: job.stream, reason });
      },
    },
  });
  scheduler.setJobs(jobsFromDefinitions(definitions));

  logger.info(`worker started: ${definitions.length} partner(s), ${scheduler.plan().length} stream(s) on ${store.description}`, {
    event: 'worker_started',
    streams: scheduler.plan().map((p) => ({ stream: p.key, next: p.next.at.toISOString() })),
  });
  scheduler.start();
  monitor.start();
  const partitions = keepMonthsAhead(store, timers, (created, error) => {
    if (error) logger.warn(`activity partitions: creating next months' failed, retried later: ${error.message}`, { event: 'partitions_failed' });
    else if (created.length > 0) logger.info(`activity partitions created ahead: ${created.join(', ')}`, { event: 'partitions_created', partitions: created });
  });
  const reconciles = startReconcileSchedule({ store, timers, logger, redact, locks, alerter: options.alerter, definitions: () => definitions, inferDeletes: (def, scan) => inferDeletes(loader, def, scan) });
  const purges = startPurgeSchedule({ store, timers, logger, locks, retention: options.retention ?? DEFAULT_RETENTION, schedule: options.purgeSchedule });
  const fxFeed = options.fxFeed ? startFxFeedSchedule({ store, timers, logger, locks, feed: options.fxFeed, plans: () => plans, alerter: options.alerter, fetch: options.fxFetch }) : undefined;
  metrics.up.set({}, 1);

  let stopped: Promise<StopResult> | undefined;
  return {
    scheduler,
    monitor,
    metrics,
    definitions: () => [...definitions],
    setDefinitions(defs, nowInvalid = []) {
      definitions = [...defs];
      invalid = [...nowInvalid];
      const change = scheduler.setJobs(jobsFromDefinitions(definitions));
      reconciles.refresh();
      logger.info(`definitions applied: ${definitions.length} partner(s); added ${change.added.join(', ') || 'none'}; removed ${change.removed.join(', ') || 'none'}; rescheduled ${change.rescheduled.join(', ') || 'none'}`, { event: 'definitions_reloaded' });
    },
    plans: () => plans,
    setPlans(next) {
      plans = [...next];
      logger.info(`commission plans applied: ${plans.length} plan(s); batches from now on are evaluated with them (commissions recompute --repair applies a change to history)`, { event: 'plans_reloaded', plans: plans.map((p) => p.id) });
    },
    fraud: () => fraud,
    setFraud(next) {
      fraud = next;
      logger.info(next ? 'fraud rules applied: batches from now on are judged by them (fraud scan applies a change to history)' : 'fraud rules: no config/fraud.yaml, no detection from now on', { event: 'fraud_rules_reloaded', detection: next !== undefined });
    },
    health: () => scheduler.health(),
    async ready() {
      const streams = scheduler.plan().length;
      const scheduled: Check = streams > 0
        ? { ok: true, detail: `${definitions.length} partner(s), ${streams} stream(s) scheduled` }
        : { ok: false, detail: 'no stream scheduled: no valid connector definition is loaded' };
      return readiness({ scheduler: scheduler.health(), ...(await storeChecks(store, options.readinessTimeoutMs)), definitions: scheduled });
    },
    stop(timeoutMs) {
      stopped ??= (async () => {
        metrics.up.set({}, 0);
        const result = await scheduler.stop(timeoutMs);
        await monitor.stop();
        await reconciles.stop();
        await purges.stop();
        await fxFeed?.stop();
        await partitions.stop();
        if (result.abandoned.length > 0) {
          // Best effort, briefly: the next worker to take each stream's lock closes them anyway.
          await Promise.race([
            Promise.all(result.abandoned.map((r) => closeAbandonedRuns(store, r.job.partner, r.job.stream).catch(() => 0))),
            new Promise((resolve) => timers.setTimeout(() => resolve(undefined), 1_000)),
          ]);
          // The locks stay held: the process must end now (the caller exits), and its sessions with it;
          // freeing them first would let another worker start while this run still writes.
          return result;
        }
        await locks.close();
        instanceLock?.release();
        return result;
      })();
      return stopped;
    },
  };
}
