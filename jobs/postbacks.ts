/**
 * The postback job: in each load transaction, the facts the batch brings become outbox events
 * (src/postbacks/), so an event commits with its change or not at all. `beforeWrite` reads what
 * the store held for the batch's keys (a re-sent record is no new fact), `inTransaction` turns
 * what was written into facts. It costs one small read per batch while no postback is defined.
 * Delivery is not here: the worker and `serve` run the deliverer (src/postbacks/deliverer.ts).
 */
import type { Knex } from 'knex';
import type { LoaderDeps } from '../src/pipeline/load.js';
import type { Store } from '../src/store/store.js';
import { definitionsFor, type PostbackDefinition } from '../src/postbacks/definitions.js';
import type { Fact } from '../src/postbacks/events.js';
import { emptyPrior, phaseChanges, readPrior, registrations, transactionFacts, type PriorState } from '../src/postbacks/load-facts.js';
import { writeEvents } from '../src/postbacks/outbox.js';

export function createPostbackHook(store: Store): Required<Pick<LoaderDeps, 'beforeWrite' | 'inTransaction'>> {
  // Per transaction and partner: the prior state of the batch being written (consumed by inTransaction).
  const priors = new WeakMap<Knex.Transaction, Map<string, PriorState>>();
  const defined = new WeakMap<Knex.Transaction, PostbackDefinition[]>();
  const definitions = async (trx: Knex.Transaction): Promise<PostbackDefinition[]> => {
    let defs = defined.get(trx);
    if (!defs) defined.set(trx, (defs = await definitionsFor(trx)));
    return defs;
  };
  return {
    async beforeWrite(trx, batch) {
      if (batch.entity === 'activity' || (await definitions(trx)).length === 0) return;
      let byPartner = priors.get(trx);
      if (!byPartner) priors.set(trx, (byPartner = new Map()));
      let prior = byPartner.get(batch.partner);
      if (!prior) byPartner.set(batch.partner, (prior = emptyPrior()));
      await readPrior(trx, batch.partner, batch.entity, batch.records, prior);
    },
    async inTransaction(trx, change) {
      // No beforeWrite for the batch: the store held none of its keys.
      const prior = priors.get(trx)?.get(change.partner) ?? emptyPrior();
      priors.get(trx)?.delete(change.partner);
      const defs = await definitions(trx);
      if (defs.length === 0) return;
      const facts: Fact[] = [];
      const { customers, transactions } = change.records;
      if (customers.length > 0) facts.push(...registrations(change.partner, customers, prior));
      if (change.variant === 'prop-trading' && customers.length > 0 && defs.some((d) => d.events.includes('phase_change'))) {
        facts.push(...(await phaseChanges(trx, change.partner, customers, change.runId)));
      }
      if (transactions.length > 0) facts.push(...(await transactionFacts(trx, change.partner, transactions, prior)));
      await writeEvents(trx, facts, defs, store.now());
    },
  };
}
