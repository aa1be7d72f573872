/**
 * The report-facts job: after each batch (or day replacement) is written, the facts move by the
 * new versions' contributions minus those of the stored versions they replaced (./incremental.ts;
 * the replaced versions come with the batch's change set). It runs inside the load transaction, so
 * the facts commit with the batch: a report read after the commit includes it, and a crash loses
 * nothing.
 *
 * A run evaluated over its group (policy `group`) records instead what each batch touched, and its
 * evaluation recomputes those days from the stored rows, set-based (./deferred.ts).
 */
import type { AfterLoadJob, ChangeSet } from '../pipeline/jobs.js';
import type { Store } from '../store/store.js';
import { factsScopeOf, factsScopeOfRemoved, pendingFactsPartners, recomputeFacts, settleFacts, writeFactsPending } from './deferred.js';
import { updateFacts } from './incremental.js';
import { activityKey, ACTIVITY_VALUES, customerCell, CUSTOMER_CELL_COLUMNS, emptyPriors, storedTransaction, TX_READ, type ActivityValues, type PriorVersions } from './priors.js';

/** What the facts need of the stored versions a change set carries. */
function priorsOf(change: ChangeSet): PriorVersions {
  const priors = emptyPriors();
  for (const [id, row] of change.prior.customers) priors.customers.set(id, customerCell(row));
  for (const [id, row] of change.prior.transactions) priors.transactions.set(id, storedTransaction(row));
  for (const row of change.prior.activity.values()) priors.activity.set(activityKey(row as never), row as ActivityValues);
  return priors;
}

export function reportFactsJob(store: Store): AfterLoadJob {
  return {
    name: 'facts',
    // Started beside the customer-days' derivation, the facts took its time; started after the
    // fraud rules, they ran beside the commissions' booking, which an evaluation waits for last.
    after: ['commission:days'],
    priors(entity, variant, policy) {
      if (entity === 'customers') return CUSTOMER_CELL_COLUMNS;
      if (entity === 'transactions') return TX_READ;
      // Deferred: an activity row's old version counts in its own key's day; nothing to read.
      return variant === 'igaming' && policy !== 'group' ? ACTIVITY_VALUES : undefined;
    },
    async mark({ trx }, change) {
      if (change.deleted) {
        // Deleted at the source: the cells they counted in are recomputed without them.
        const scope = factsScopeOfRemoved(change);
        if (change.policy === 'group') await writeFactsPending(trx, change.partner, change.variant, scope, change.runId, store.now());
        else await recomputeFacts(trx, change.partner, change.variant, scope.days, scope.ftd);
        return;
      }
      const priors = priorsOf(change);
      if (change.policy === 'group') {
        await writeFactsPending(trx, change.partner, change.variant, factsScopeOf(change, priors), change.runId, store.now());
        return;
      }
      await updateFacts(trx, change, priors);
    },
    async evaluate({ change, after }) {
      if (change.policy === 'at-commit') return;
      await after;
      await settleFacts(store, change.partner);
    },
    pending: async (knex) => pendingFactsPartners(knex),
  };
}
