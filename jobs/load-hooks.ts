/**
 * The jobs that run after every committed batch, whatever loaded it (run, backfill, import,
 * replay, the worker, a push): one composition, so every face of the service gets the same
 * ones. Each job contributes Loader hooks (src/pipeline/load.ts); they run in the order listed
 * here, each hook of each job in that order.
 *
 *   const loader = new Loader({ store, validator, ...createLoadHooks(store, { plans, logger }) });
 */
import type { Logger } from '../src/log.js';
import type { LoaderDeps } from '../src/pipeline/load.js';
import type { Store } from '../src/store/store.js';
import { pendingFactsPartners, settleFacts } from '../src/reports/deferred.js';
import { createReportFactsHook } from '../src/reports/hook.js';
import { createCommissionHook, resumePending, type PlanSource } from './commission.js';
import { createPhaseHistoryHook } from './phase-history.js';
import { createFraudHook, deferredFraudPartners, settleFraud, type FraudSource } from './fraud.js';
import { createPostbackHook } from './postbacks.js';

export type LoaderHooks = Pick<LoaderDeps, 'beforeWrite' | 'inTransaction' | 'afterCommit' | 'settle' | 'settleFailed'>;

export interface LoadHookOptions {
  /** The commission plans in force (a getter for a process that reloads them). */
  plans: PlanSource;
  logger: Logger;
  /** The fraud rules in force (config/fraud.yaml); none: no fraud detection. */
  fraud?: FraudSource;
}

/** Every after-load job's hooks, composed. */
export function createLoadHooks(store: Store, options: LoadHookOptions): LoaderHooks {
  const { settle: settleFacts, ...facts } = createReportFactsHook(store);
  const fraud = createFraudHook(store, options.fraud, options.logger);
  const { settleAfter, ...commission } = createCommissionHook(store, options.plans, options.logger);
  const parts: LoaderHooks[] = [
    // Before the commission job: the commission evaluation after the same commit sees the batch's flags.
    fraud,
    commission,
    createPhaseHistoryHook(store),
    facts,
    // After the phase history: its entries of this batch are what phase changes are read from.
    createPostbackHook(store),
  ];
  const combined = combineHooks(parts);
  const concurrent = store.profile.locking === 'advisory';
  // On a store with concurrent transactions, the commission evaluation derives the customer-days
  // while the fraud rules are judged, and reads the flags once they are (evaluateScope `after`).
  // The report facts are recomputed once the customer-days are derived (or the rules ended), while
  // the rules go on: started with the rules, they took the time of the customer-days; started
  // after the rules, they ran 1.5 s beside the commissions' booking, which the settle waits for last.
  const settle: LoaderHooks['settle'] = concurrent && parts.every((p) => p === fraud || p === commission || !p.settle)
    ? async (change) => {
      const rules = fraud.settle(change);
      let daysDerived = (): void => undefined;
      const derived = new Promise<void>((resolve) => { daysDerived = resolve; });
      const facts = Promise.race([derived, rules]).catch(() => undefined).then(() => settleFacts(change));
      const results = await Promise.allSettled([rules, settleAfter(change, rules, daysDerived), facts]);
      for (const r of results) if (r.status === 'rejected') throw r.reason;
    }
    : alongside(combined.settle, settleFacts, concurrent);
  return {
    ...combined,
    settle,
    settleFailed(change, error) {
      options.logger.warn(`${change.partner}: evaluating the fraud rules and commissions behind the commits failed; what waits stays pending for the next evaluation: ${(error as Error).message}`, {
        partner: change.partner, run_id: change.runId, event: 'evaluation_behind_failed',
      });
    },
  };
}

/**
 * Evaluates what a crash (or a failed evaluation) left to evaluate: the customers bulk runs
 * deferred for the fraud rules first, then every partner's pending commission scope, then the
 * report facts' days bulk runs left to recompute. What every
 * loading command and the worker run before they load.
 *
 * `later`: the partner the command is about to load. What a killed run of it left waits for the
 * command's own settle, after its loads (Loader.settleLeftovers): judged before them, a customer
 * whose first deposit loaded but whose play had not would get the CPA line the uninterrupted run
 * withholds, because the play opens a fraud flag first there. Resolves whether that partner has
 * anything left.
 */
export async function resumeJobs(store: Store, options: LoadHookOptions, later?: string): Promise<boolean> {
  let left = false;
  const now = (partner: string): boolean => {
    if (partner !== later) return true;
    left = true;
    return false;
  };
  for (const { partner } of await deferredFraudPartners(store.knex)) {
    if (!now(partner)) continue;
    const n = await settleFraud(store, options.fraud, options.logger, partner, `resume-${store.now()}`);
    if (n > 0) options.logger.info(`fraud: settled ${n} customers a bulk run of ${partner} left to evaluate`, { partner, event: 'fraud_resumed', customers: n });
  }
  const plans = typeof options.plans === 'function' ? options.plans() : options.plans;
  if (plans.length > 0) await resumePending(store, plans, options.logger, undefined, now);
  for (const partner of await pendingFactsPartners(store.knex)) {
    if (!now(partner)) continue;
    const days = await settleFacts(store, partner);
    if (days > 0) options.logger.info(`reports: recomputed the facts of ${days} days a bulk run of ${partner} left pending`, { partner, event: 'report_facts_resumed', days });
  }
  return left;
}

/**
 * The report facts' settle beside the other jobs' settles (when they are not the fraud rules and
 * commissions, composed above): neither reads what the other writes (the facts come from the
 * loaded rows alone), and each holds its own lock, so on a store with concurrent transactions
 * (PostgreSQL) the facts are recomputed on a second connection while the others run on the
 * first. On SQLite (one connection) they run one after the other. Both end before the settle
 * does; a failure of either is thrown after both ended.
 */
function alongside(first: LoaderHooks['settle'], second: LoaderHooks['settle'], concurrent: boolean): LoaderHooks['settle'] {
  if (!first || !second) return first ?? second;
  if (!concurrent) return async (change) => { await first(change); await second(change); };
  return async (change) => {
    const [a, b] = await Promise.allSettled([first(change), second(change)]);
    if (a.status === 'rejected') throw a.reason;
    if (b.status === 'rejected') throw b.reason;
  };
}

/** One set of hooks that calls each part's hook in order; a part without a hook is skipped. */
export function combineHooks(parts: readonly LoaderHooks[]): LoaderHooks {
  const before = parts.flatMap((p) => (p.beforeWrite ? [p.beforeWrite] : []));
  const inside = parts.flatMap((p) => (p.inTransaction ? [p.inTransaction] : []));
  const after = parts.flatMap((p) => (p.afterCommit ? [p.afterCommit] : []));
  const settle = parts.flatMap((p) => (p.settle ? [p.settle] : []));
  const combined: LoaderHooks = {};
  if (before.length > 0) combined.beforeWrite = async (trx, batch) => { for (const hook of before) await hook(trx, batch); };
  if (inside.length > 0) combined.inTransaction = async (trx, change) => { for (const hook of inside) await hook(trx, change); };
  if (after.length > 0) combined.afterCommit = async (changes) => { for (const hook of after) await hook(changes); };
  // In the same order: a bulk run's fraud flags are settled before its commissions read them.
  if (settle.length > 0) combined.settle = async (change) => { for (const hook of settle) await hook(change); };
  return combined;
}
