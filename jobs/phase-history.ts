/**
 * The phase history job (src/reports/phase-history.ts): in each load transaction, the prop-trading
 * customers the batch applied add their observed phases to the history and rewrite their funnel
 * rows, so the funnel is current the moment the batch commits. Nothing runs after the commit.
 */
import type { Store } from '../src/store/store.js';
import type { LoaderDeps } from '../src/pipeline/load.js';
import { recordPhases } from '../src/reports/phase-history.js';

export function createPhaseHistoryHook(store: Store): Required<Pick<LoaderDeps, 'inTransaction'>> {
  return {
    async inTransaction(trx, change) {
      if (change.variant !== 'prop-trading' || change.records.customers.length === 0) return;
      const now = store.now();
      await recordPhases(trx, change.partner, change.records.customers.map((record) => ({ record, loadedAt: now })), change.runId, now);
    },
  };
}
