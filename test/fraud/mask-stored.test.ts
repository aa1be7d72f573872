/**
 * Identity keys stored in clear by an earlier version become the masked form with a digest, in
 * fraud_identities and in the duplicate_identity flags (instance key and evidence): the e-mail
 * address is nowhere left in them, and detection then finds the same instance again.
 */
import { strict as assert } from 'node:assert';
import { emailKey, nameKey } from '../../src/fraud/identity.js';
import { maskStoredIdentities } from '../../src/store/migrations/015-mask-identities.js';
import { STORES } from '../support/stores.js';
import { cust, fraudHarness } from './harness.js';

describe('identity keys stored in clear are masked (migration 015)', () => {
  it('rewrites fraud_identities and the flags; a second run changes nothing; the next batch updates the same flag', async () => {
    const h = await fraudHarness(STORES[0]!, 'rules: {}');
    try {
      await h.load('customers', [cust('c1', 'aff-1', { email: 'Mia.Stone+vip@GoogleMail.com' }), cust('c2', 'aff-2', { email: 'miastone@gmail.com' })]);
      const knex = h.t.store.knex;
      // As an earlier version stored them.
      await knex('fraud_identities').where({ kind: 'email' }).update({ value: 'miastone@gmail.com' });
      await knex('fraud_identities').insert({ partner_id: 'casino', customer_id: 'c1', kind: 'name', value: 'mia|stone|GB' });
      const [flag] = await h.flags();
      const evidence = { ...flag!.evidence, value: 'miastone@gmail.com' };
      await knex('fraud_flags').where('id', flag!.id).update({ instance_key: JSON.stringify(['email', 'miastone@gmail.com']), evidence: JSON.stringify(evidence) });

      assert.deepEqual(await maskStoredIdentities(knex), { identities: 3, flags: 1 });
      const stored = JSON.stringify(await knex('fraud_identities').select('*')) + JSON.stringify(await knex('fraud_flags').select('*'));
      assert.ok(!stored.includes('miastone@gmail.com') && !stored.includes('mia|stone'));
      assert.deepEqual((await knex('fraud_identities').orderBy(['customer_id', 'kind']).select('customer_id', 'kind', 'value')).map((r: { value: string }) => r.value),
        [emailKey('miastone@gmail.com'), nameKey('mia', 'stone', 'GB'), emailKey('miastone@gmail.com')]);
      assert.deepEqual(await maskStoredIdentities(knex), { identities: 0, flags: 0 });

      await h.load('customers', [cust('c3', 'aff-3', { email: 'MIASTONE+3@gmail.com' })]);
      const after = await h.flags();
      assert.deepEqual(after.map((f) => [f.id, JSON.parse(f.instance_key), f.customers]), [[flag!.id, ['email', emailKey('miastone@gmail.com')], ['c1', 'c2', 'c3']]]);
    } finally {
      await h.drop();
    }
  });
});
