/**
 * The Loader every loading command uses (run, backfill, import, rejects --replay): the spec's
 * validator and every after-load job (jobs/load-hooks.ts). Before any load, what an earlier crash
 * left pending is evaluated.
 */
import { createLoadHooks, resumeJobs } from '../../jobs/load-hooks.js';
import type { Logger } from '../log.js';
import { Loader } from '../pipeline/load.js';
import { specValidator } from '../spec/validator.js';
import type { Store } from '../store/store.js';
import { commissionPlans } from './commands/commissions.js';
import { fraudConfig } from './commands/fraud.js';
import type { GlobalOptions } from './context.js';
import type { Io } from './io.js';

export async function cliLoader(globals: GlobalOptions, io: Io, store: Store, logger: Logger): Promise<Loader> {
  const plans = await commissionPlans(globals, io, { quiet: true });
  const fraud = await fraudConfig(globals);
  await resumeJobs(store, { plans, logger, fraud });
  return new Loader({ store, validator: specValidator(), ...createLoadHooks(store, { plans, logger, fraud }) });
}
