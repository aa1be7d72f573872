/**
 * The partner's erasure request through the API (`POST /api/v1/{variant}/customers/{id}/erasure`,
 * erase scope): the same erasure as the command line, recorded with the client; a token without the
 * scope, or of the other variant, is refused and erases nothing.
 */
import { strict as assert } from 'node:assert';
import { createClient } from '../../src/access/api-clients.js';
import { listErasures } from '../../src/store/erasures.js';
import { cust } from '../fraud/harness.js';
import { startApi } from '../support/api.js';
import { raw } from '../support/records.js';
import { STORES } from '../support/stores.js';

for (const backend of STORES) {
  describe(`POST /api/v1/{variant}/customers/{id}/erasure (${backend.name})`, () => {
    it('erases with the erase scope; without it 403 insufficient_scope, with the other variant 403 wrong_variant, nothing erased', async () => {
      const t = await backend.create();
      const api = await startApi(t.store);
      try {
        await api.deps.loader.load({ partner: 'acme', variant: 'igaming', entity: 'customers', runId: 'r1', records: raw([cust('c1', 'aff-1', { email: 'ana.vale@example.org', first_name: 'Ana', last_name: 'Vale' })]) });
        const token = async (scopes: ('read' | 'write' | 'erase')[]) => {
          const c = await createClient(t.store, { partner: 'acme', variant: 'igaming', scopes });
          return api.token({ client_id: c.clientId, client_secret: c.clientSecret });
        };
        const erase = (bearer: string, variant = 'igaming', id = 'c1') => fetch(`${api.url}/api/v1/${variant}/customers/${id}/erasure`, { method: 'POST', headers: { authorization: `Bearer ${bearer}` } });

        const writer = await token(['read', 'write']);
        const refused = await erase(writer);
        assert.equal(refused.status, 403);
        assert.equal(((await refused.json()) as { error: string }).error, 'insufficient_scope');
        const eraser = await token(['erase']);
        const wrong = await erase(eraser, 'prop-trading');
        assert.equal(wrong.status, 403);
        assert.equal(((await wrong.json()) as { error: string }).error, 'wrong_variant');
        assert.deepEqual(await listErasures(t.store.knex), []);

        const done = await erase(eraser);
        assert.equal(done.status, 200);
        const body = (await done.json()) as { customer_id: string; found: boolean; erased: boolean; tables: Record<string, number>; request_id: string };
        assert.deepEqual([body.customer_id, body.found, body.erased, body.tables.customers], ['c1', true, true, 1]);
        assert.ok(body.request_id);
        assert.deepEqual(await t.store.knex('customers').where('customer_id', 'c1').first('email', 'first_name', 'last_name'), { email: null, first_name: null, last_name: null });
        const unknown = (await (await erase(eraser, 'igaming', 'never-seen')).json()) as { found: boolean };
        assert.equal(unknown.found, false);
        assert.deepEqual((await listErasures(t.store.knex)).map((e) => [e.customerId, e.via, e.requestedBy.startsWith('api:ps_')]), [['c1', 'api', true], ['never-seen', 'api', true]]);
      } finally {
        await api.close();
        await t.drop();
      }
    });
  });
}
