/**
 * The postback job: in each load transaction, the facts the batch brings become outbox events
 * (src/postbacks/), so an event commits with its change or not at all. What the store held for
 * the batch's keys comes with its change set (a re-sent record is no new fact). It costs one small
 * read per load transaction while no postback is defined. Delivery is not here: the worker and
 * `serve` run the deliverer (src/postbacks/deliverer.ts).
 */
import type { AfterLoadJob } from '../src/pipeline/jobs.js';
import type { Store } from '../src/store/store.js';
import { definitionsFor } from '../src/postbacks/definitions.js';
import type { Fact } from '../src/postbacks/events.js';
import { deletedDeposits, phaseChanges, priorState, registrations, transactionFacts } from '../src/postbacks/load-facts.js';
import { writeEvents } from '../src/postbacks/outbox.js';

export function postbackJob(store: Store): AfterLoadJob {
  return {
    name: 'postbacks',
    // Phase changes are read from the history the phase job wrote for the batch.
    after: ['phases', 'commission'],
    priors: (entity) => (entity === 'customers' ? [] : entity === 'transactions' ? ['status'] : undefined),
    async mark(tx, change) {
      const defs = await tx.once('postbacks:definitions', () => definitionsFor(tx.trx));
      if (defs.length === 0) return;
      if (change.deleted) {
        // Deleted at the source: an approved deposit's reversal is announced (docs/postbacks.md).
        const tombstones = new Map(change.deleted.tombstones.filter((t) => t.entity === 'transactions').map((t) => [t.key, t.id]));
        await writeEvents(tx.trx, await deletedDeposits(tx.trx, change.partner, change.removed, (id) => tombstones.get(id)), defs, store.now());
        return;
      }
      const prior = priorState(change.prior);
      const facts: Fact[] = [];
      const { customers, transactions } = change.records;
      if (customers.length > 0) facts.push(...registrations(change.partner, customers, prior));
      if (change.variant === 'prop-trading' && customers.length > 0 && defs.some((d) => d.events.includes('phase_change'))) {
        facts.push(...(await phaseChanges(tx.trx, change.partner, customers, change.runId)));
      }
      if (transactions.length > 0) facts.push(...(await transactionFacts(tx.trx, change.partner, transactions, prior)));
      await writeEvents(tx.trx, facts, defs, store.now());
    },
  };
}
