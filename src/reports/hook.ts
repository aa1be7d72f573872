/**
 * The report-facts job's Loader hooks: before records replace their stored versions, those
 * versions are read (./priors.ts); after each batch (or day replacement) is written, the facts
 * move by the new versions' contributions minus the old ones' (./incremental.ts). Both run inside
 * the load transaction, so the facts commit with the batch: a report read after the commit
 * includes it, and a crash loses nothing.
 */
import type { Knex } from 'knex';
import type { LoaderDeps } from '../pipeline/load.js';
import type { Store } from '../store/store.js';
import { updateFacts } from './incremental.js';
import { emptyPriors, readActivityPriors, readPriors, type PriorVersions } from './priors.js';

export type ReportFactsHooks = Required<Pick<LoaderDeps, 'beforeWrite' | 'inTransaction'>>;

export function createReportFactsHook(store: Store): ReportFactsHooks {
  // The old versions read for the batch being written, per load transaction (taken by the batch's inTransaction).
  const pending = new WeakMap<Knex.Transaction, PriorVersions>();
  return {
    async beforeWrite(trx, batch) {
      if (batch.entity === 'activity' && batch.variant !== 'igaming') return;
      let priors = pending.get(trx);
      if (!priors) pending.set(trx, (priors = emptyPriors()));
      if (batch.entity === 'activity') await readActivityPriors(trx, batch.partner, batch.records, priors.activity);
      else await readPriors(trx, batch.partner, batch.entity, batch.records, priors);
    },
    async inTransaction(trx, change) {
      const priors = pending.get(trx) ?? emptyPriors();
      pending.delete(trx);
      await updateFacts(trx, {
        kind: store.profile.kind,
        partner: change.partner,
        variant: change.variant,
        customers: change.records.customers,
        transactions: change.records.transactions,
        activity: change.records.activity,
        replacedDays: change.replacedDays,
      }, priors);
    },
  };
}
