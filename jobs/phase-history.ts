/**
 * The phase history job (src/reports/phase-history.ts): in each load transaction, the prop-trading
 * customers the batch applied add their observed phases to the history and rewrite their funnel
 * rows, so the funnel is current the moment the batch commits; customers deleted at the source leave
 * it. Nothing is evaluated after the commit.
 */
import type { Store } from '../src/store/store.js';
import type { AfterLoadJob } from '../src/pipeline/jobs.js';
import { forgetPhases, recordPhases } from '../src/reports/phase-history.js';

export function phaseHistoryJob(store: Store): AfterLoadJob {
  return {
    name: 'phases',
    async mark({ trx }, change) {
      // Customers deleted at the source leave the funnel.
      if (change.deleted && change.variant === 'prop-trading' && change.removed.customers.length > 0) {
        await forgetPhases(trx, change.partner, change.removed.customers.map((c) => String(c.customer_id)));
        return;
      }
      if (change.variant !== 'prop-trading' || change.records.customers.length === 0) return;
      const now = store.now();
      await recordPhases(trx, change.partner, change.records.customers.map((record) => ({ record, loadedAt: now })), change.runId, now);
    },
  };
}
