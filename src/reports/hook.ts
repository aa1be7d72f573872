/**
 * The report-facts job's Loader hooks: before records replace their stored versions, those
 * versions are read (./priors.ts); after each batch (or day replacement) is written, the facts
 * move by the new versions' contributions minus the old ones' (./incremental.ts). Both run inside
 * the load transaction, so the facts commit with the batch: a report read after the commit
 * includes it, and a crash loses nothing.
 *
 * A bulk run that defers the facts (Loader.deferJobs with `facts`) records instead what each batch
 * touched, and its settle recomputes those days (./deferred.ts).
 */
import type { Knex } from 'knex';
import type { LoaderDeps } from '../pipeline/load.js';
import type { Store } from '../store/store.js';
import { factsScopeOf, settleFacts, writeFactsPending } from './deferred.js';
import { updateFacts } from './incremental.js';
import { emptyPriors, readActivityPriors, readPriors, type PriorVersions } from './priors.js';

export type ReportFactsHooks = Required<Pick<LoaderDeps, 'beforeWrite' | 'inTransaction' | 'settle'>>;

export function createReportFactsHook(store: Store): ReportFactsHooks {
  // The old versions read for the batch being written, per load transaction (taken by the batch's inTransaction).
  const pending = new WeakMap<Knex.Transaction, PriorVersions>();
  return {
    async beforeWrite(trx, batch) {
      if (batch.entity === 'activity' && batch.variant !== 'igaming') return;
      // Deferred: an activity row's old version counts in its own key's day; nothing to read.
      if (batch.entity === 'activity' && batch.factsDeferred) return;
      let priors = pending.get(trx);
      if (!priors) pending.set(trx, (priors = emptyPriors()));
      if (batch.entity === 'activity') await readActivityPriors(trx, batch.partner, batch.records, priors.activity);
      else await readPriors(trx, batch.partner, batch.entity, batch.records, priors);
    },
    async inTransaction(trx, change) {
      const priors = pending.get(trx) ?? emptyPriors();
      pending.delete(trx);
      if (change.factsDeferred) {
        await writeFactsPending(trx, change.partner, change.variant, factsScopeOf(change, priors), change.runId, store.now());
        return;
      }
      await updateFacts(trx, {
        partner: change.partner,
        variant: change.variant,
        customers: change.records.customers,
        transactions: change.records.transactions,
        activity: change.records.activity,
        replacedDays: change.replacedDays,
      }, priors);
    },
    async settle(change) {
      await settleFacts(store, change.partner);
    },
  };
}
