/**
 * The phase history job (src/reports/phase-history.ts): in each load transaction, the prop-trading
 * customers the batch applied add their observed phases to the history and rewrite their funnel
 * rows, so the funnel is current the moment the batch commits. Nothing is evaluated after the commit.
 */
import type { Store } from '../src/store/store.js';
import type { AfterLoadJob } from '../src/pipeline/jobs.js';
import { recordPhases } from '../src/reports/phase-history.js';

export function phaseHistoryJob(store: Store): AfterLoadJob {
  return {
    name: 'phases',
    async mark({ trx }, change) {
      if (change.variant !== 'prop-trading' || change.records.customers.length === 0) return;
      const now = store.now();
      await recordPhases(trx, change.partner, change.records.customers.map((record) => ({ record, loadedAt: now })), change.runId, now);
    },
  };
}
