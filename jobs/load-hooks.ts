/**
 * The after-load jobs, whatever loaded the batch (run, backfill, import, replay, the worker, a
 * push): one list, so every face of the service gets the same ones. Each is one module implementing
 * the contract of src/pipeline/jobs.ts; the order and what runs side by side follow from what each
 * declares (`after`), not from this list.
 *
 *   const loader = new Loader({ store, validator, ...createLoadHooks(store, { plans, logger }) });
 */
import type { Logger } from '../src/log.js';
import type { LoaderDeps } from '../src/pipeline/load.js';
import { orderJobs, type AfterLoadJob } from '../src/pipeline/jobs.js';
import type { Store } from '../src/store/store.js';
import type { Variant } from '../src/types.js';
import { reportFactsJob } from '../src/reports/hook.js';
import { commissionJob, type PlanSource } from './commission.js';
import { phaseHistoryJob } from './phase-history.js';
import { fraudJob, type FraudSource } from './fraud.js';
import { postbackJob } from './postbacks.js';

export interface LoadHookOptions {
  /** The commission plans in force (a getter for a process that reloads them). */
  plans: PlanSource;
  logger: Logger;
  /** The fraud rules in force (config/fraud.yaml); none: no fraud detection. */
  fraud?: FraudSource;
}

/** Every after-load job. */
export function afterLoadJobs(store: Store, options: LoadHookOptions): AfterLoadJob[] {
  return [
    fraudJob(store, options.fraud, options.logger),
    commissionJob(store, options.plans, options.logger),
    phaseHistoryJob(store),
    reportFactsJob(store),
    postbackJob(store),
  ];
}

/** What a Loader takes to run every after-load job (spread into its deps). */
export function createLoadHooks(store: Store, options: LoadHookOptions): Pick<LoaderDeps, 'jobs' | 'logger'> {
  return { jobs: afterLoadJobs(store, options), logger: options.logger };
}

/**
 * Evaluates what a crash (or a failed evaluation) left to evaluate: every partner some job has a
 * scope on disk for, each job over it in its declared order (as a group's settle: what bulk runs
 * deferred). What every loading command and the worker run before they load.
 *
 * `later`: the partner the command is about to load. What a killed run of it left waits for the
 * command's own settle, after its loads (Loader.settleLeftovers): judged before them, a customer
 * whose first deposit loaded but whose play had not would get the CPA line the uninterrupted run
 * withholds, because the play opens a fraud flag first there. Resolves whether that partner has
 * anything left.
 */
export async function resumeJobs(store: Store, options: LoadHookOptions, later?: string): Promise<boolean> {
  const jobs = orderJobs(afterLoadJobs(store, options));
  const partners = new Map<string, { variant: Variant; jobs: Set<string> }>();
  for (const job of jobs) {
    for (const { partner, variant } of (await job.pending?.(store.knex)) ?? []) {
      let p = partners.get(partner);
      if (!p) partners.set(partner, (p = { variant, jobs: new Set() }));
      p.jobs.add(job.name);
    }
  }
  const runId = `resume-${store.now()}`;
  for (const [partner, { variant, jobs: waiting }] of [...partners].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (partner === later) continue;
    // One job after another, each after those it comes after: the same order as a group's settle.
    for (const job of jobs) {
      if (!job.evaluate) continue;
      await job.evaluate({ change: { partner, variant, runId, policy: 'group' }, after: Promise.resolve(), reached: () => undefined });
    }
    options.logger.info(`resumed what earlier runs of ${partner} left to evaluate (${[...waiting].join(', ')})`, { partner, run_id: runId, event: 'jobs_resumed', jobs: [...waiting] });
  }
  return later !== undefined && partners.has(later);
}
