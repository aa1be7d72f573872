/**
 * The fraud rules forget what a customer deleted at the source counted for (docs/loading.md,
 * Deletes), on every store: a duplicate identity of two customers is withdrawn once one of them is
 * deleted, and comes back when the customer is sent again.
 */
import { strict as assert } from 'node:assert';
import { STORES } from '../support/stores.js';
import { cust, fraudHarness, type FraudHarness } from './harness.js';

for (const backend of STORES) {
  describe(`fraud rules after deletes at the source (${backend.name})`, function () {
    this.timeout(60_000);
    let h: FraudHarness;
    afterEach(async () => { await h.drop(); });

    it('a duplicate identity is withdrawn when one of its two customers is deleted, and opens again when it is sent again', async () => {
      h = await fraudHarness(backend, 'rules: {}');
      await h.load('customers', [cust('c1', 'aff-1', { email: 'a@x.com' }), cust('c2', 'aff-2', { email: 'a@x.com' })]);
      const open = async () => (await h.flags('duplicate_identity')).filter((f) => f.status === 'open').map((f) => f.customers);
      assert.deepEqual(await open(), [['c1', 'c2']]);
      await h.loader.remove({ partner: 'casino', variant: 'igaming', entity: 'customers', ids: ['c2'], learnedVia: 'push', runId: 'del-1' });
      assert.deepEqual(await open(), []);
      await h.load('customers', [cust('c2', 'aff-2', { email: 'a@x.com' })]);
      assert.deepEqual(await open(), [['c1', 'c2']]);
    });
  });
}
