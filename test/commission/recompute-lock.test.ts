/**
 * A repairing recompute and a load of the same partner do not interleave (PostgreSQL, where
 * they can): the recompute waits for the load's lock, then rebuilds with the load's data and
 * takes the load's pending scope with it. SQLite has one writer, so there is nothing to race.
 */
import assert from 'node:assert/strict';
import { recompute } from '../../src/commission/recompute.js';
import { CPA, plansYaml, planWith } from '../support/plans.js';
import { raw } from '../support/records.js';
import { STORES } from '../support/stores.js';
import { harness, igCustomer, tx } from './harness.js';

// Advisory locks are per database, not per schema: a partner name no other test uses.
const PARTNER = `casino-lock-${process.pid}`;
const PLANS = plansYaml(planWith(CPA, { partner: PARTNER }));

for (const backend of STORES.filter((b) => b.name === 'postgres')) {
  describe(`commissions recompute under the partner's load lock, on ${backend.name}`, () => {
    it('waits for a load in progress, then includes it and takes its pending scope', async () => {
      const h = await harness(backend, PLANS);
      try {
        await h.load('customers', [igCustomer('c1'), igCustomer('c2')], { partner: PARTNER });
        await h.load('transactions', [tx('t1', 'c1', 'deposit', 50)], { partner: PARTNER });
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let written!: () => void;
        const holding = new Promise<void>((resolve) => (written = resolve));
        // A load that has written c2's deposit (and its pending scope) and has not committed yet.
        const load = h.loader.transaction(async (t) => {
          await t.load({ partner: PARTNER, variant: 'igaming', entity: 'transactions', runId: 'slow', records: raw([tx('t2', 'c2', 'deposit', 50)]) });
          written();
          await gate;
        });
        await holding;
        let done = false;
        const repair = recompute(h.t.store, h.plans, { partner: PARTNER, repair: true, runId: 'recompute-test' }).then((r) => {
          done = true;
          return r;
        });
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const waited = !done;
        release();
        await load;
        const [result] = await repair;
        assert.equal(waited, true, 'the recompute must wait for the load in progress');
        assert.equal(result?.partner, PARTNER);
        // Whoever booked it, c2's CPA is paid once, and nothing is left pending or different.
        assert.deepEqual((await h.lines()).map((l) => [l.customer_id, l.amount_usd]).sort(), [['c1', '100.00'], ['c2', '100.00']]);
        assert.equal(Number((await h.t.store.knex('commission_pending').count({ n: '*' }))[0]?.n), 0);
        await h.agrees();
      } finally {
        await h.drop();
      }
    });
  });
}
