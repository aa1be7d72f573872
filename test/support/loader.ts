/**
 * The Loader the tests load through, built in one place: the spec validator and either every
 * after-load job, composed as every face of the service composes them (jobs/load-hooks.ts), or
 * the jobs a test names (none: the load alone).
 *
 *   const loader = loaderWithEveryJob(t.store, { plans: plansFrom(plansYaml(CPA)), fraud });
 *   const bare = loaderWith(t.store, []);
 *   const spied = loaderWith(t.store, waitingFor(spy, everyJob(t.store, { plans })));
 */
import { afterLoadJobs, createLoadHooks } from '../../jobs/load-hooks.js';
import type { PlanSource } from '../../jobs/commission.js';
import type { FraudSource } from '../../jobs/fraud.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { Loader, type LoaderDeps } from '../../src/pipeline/load.js';
import type { AfterLoadJob } from '../../src/pipeline/jobs.js';
import { specValidator } from '../../src/spec/validator.js';
import type { Store } from '../../src/store/store.js';

/** A Loader's settings besides its store and jobs; the validator defaults to the spec's. */
export type LoaderOptions = Partial<Omit<LoaderDeps, 'store' | 'jobs'>>;

export interface JobOptions {
  /** The commission plans in force; default none. */
  plans?: PlanSource;
  /** The fraud rules in force; default none (no fraud detection). */
  fraud?: FraudSource;
  /** Default: a silent logger. */
  logger?: Logger;
}

/** A Loader with these after-load jobs only (`[]`: the load alone). */
export function loaderWith(store: Store, jobs: readonly AfterLoadJob[], options: LoaderOptions = {}): Loader {
  return new Loader({ validator: specValidator(), ...options, store, jobs });
}

/** Every after-load job, as jobs/load-hooks.ts composes them. */
export function everyJob(store: Store, options: JobOptions = {}): AfterLoadJob[] {
  return afterLoadJobs(store, { plans: options.plans ?? [], logger: options.logger ?? silentLogger(), fraud: options.fraud });
}

/** A Loader with every after-load job, as a run, an import, the API and the worker build it. */
export function loaderWithEveryJob(store: Store, options: JobOptions & Omit<LoaderOptions, 'logger'> = {}): Loader {
  const { plans = [], fraud, logger = silentLogger(), ...deps } = options;
  return new Loader({ validator: specValidator(), ...deps, store, ...createLoadHooks(store, { plans, logger, fraud }) });
}

/** `first` and then `jobs`, each of those that evaluates waiting for `first` to evaluate (a spy or a gate before every job). */
export function waitingFor(first: AfterLoadJob, jobs: readonly AfterLoadJob[]): AfterLoadJob[] {
  return [first, ...jobs.map((j) => (j.evaluate ? { ...j, after: [...(j.after ?? []), first.name] } : j))];
}
