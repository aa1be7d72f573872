/**
 * The Loader every loading command uses (run, backfill, import, rejects --replay): the spec's
 * validator and every after-load job (jobs/load-hooks.ts). Before any load, what an earlier crash
 * left pending is evaluated; that of the partner the command loads (`loads`) is evaluated with the
 * command's own settle instead, after its loads (resumeJobs).
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
import type { Variant } from '../types.js';

export async function cliLoader(globals: GlobalOptions, io: Io, store: Store, logger: Logger, loads?: { partner: string; variant: Variant }): Promise<Loader> {
  const plans = await commissionPlans(globals, io, { quiet: true });
  const fraud = await fraudConfig(globals);
  const left = await resumeJobs(store, { plans, logger, fraud }, loads?.partner);
  const loader = new Loader({ store, validator: specValidator(), ...createLoadHooks(store, { plans, logger, fraud }) });
  if (left && loads) loader.settleLeftovers(loads.partner, loads.variant);
  return loader;
}
