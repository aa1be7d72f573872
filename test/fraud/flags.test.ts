import { strict as assert } from 'node:assert';
import { decideFlag, decisionsOf, DecisionError, getFlag, listFlags, upsertFlag, type Finding } from '../../src/fraud/flags.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

const finding = (customers: string[], evidence: Record<string, unknown>): Finding => ({
  partner: 'acme', variant: 'igaming', rule: 'duplicate_identity', instanceKey: 'email:a@x.com', affiliateId: null,
  severity: 'high', evidence, customers,
});

for (const backend of STORES) {
  describe(`fraud flags (${backend.name})`, () => {
    let t: TestStore;
    const clock = fixedClock('2026-11-22T10:00:00.000Z');
    beforeEach(async () => { t = await backend.create(clock); });
    afterEach(async () => { await t.drop(); });

    it('one flag per instance: updated as customers join, unchanged findings change nothing, decisions are recorded append-only', async () => {
      const { store } = t;
      const first = await store.transaction((trx) => upsertFlag(trx, store, finding(['c2', 'c1'], { accounts: 2 })));
      assert.equal(first.created, true);
      assert.deepEqual(first.added, ['c1', 'c2']);
      clock.set('2026-11-22T11:00:00.000Z');
      const same = await store.transaction((trx) => upsertFlag(trx, store, finding(['c1', 'c2'], { accounts: 2 })));
      assert.deepEqual([same.id, same.changed], [first.id, false]);
      const grown = await store.transaction((trx) => upsertFlag(trx, store, finding(['c1', 'c2', 'c3'], { accounts: 3 })));
      assert.deepEqual([grown.id, grown.created, grown.added], [first.id, false, ['c3']]);
      const all = await listFlags(store.knex);
      assert.equal(all.length, 1);
      assert.deepEqual(all[0]!.customers, ['c1', 'c2', 'c3']);
      assert.deepEqual(all[0]!.evidence, { accounts: 3 });
      assert.equal(all[0]!.status, 'open');
      assert.match(all[0]!.first_seen, /^2026-11-22.10:00:00/);
      assert.match(all[0]!.last_seen, /^2026-11-22.11:00:00/);

      const decided = await decideFlag(store, first.id, 'dismissed', 'maria', 'same household, verified');
      assert.equal(decided.status, 'dismissed');
      await assert.rejects(decideFlag(store, first.id, 'confirmed', 'maria', 'x'), (e: Error) => e instanceof DecisionError && /already dismissed/.test(e.message));
      const d = await decisionsOf(store.knex, first.id);
      assert.deepEqual(d.map((x) => [x.decision, x.by, x.reason]), [['dismissed', 'maria', 'same household, verified']]);
      await assert.rejects(store.knex('fraud_decisions').delete(), /append-only/);
      // A decided flag keeps its customers when its finding shrinks.
      await store.transaction((trx) => upsertFlag(trx, store, finding(['c1', 'c2'], { accounts: 2 })));
      const after = await getFlag(store.knex, first.id);
      assert.deepEqual([after!.status, after!.customers], ['dismissed', ['c1', 'c2', 'c3']]);
    });
  });
}
