/**
 * PostgreSQL advisory lock keys are shared by a whole database: the load lock of a partner must be
 * scoped to its store, or a store in another schema of the same database (staging beside
 * production) waits on it for as long as the other's load transaction stays open.
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { loaderWith } from '../support/loader.js';
import { customer, raw } from '../support/records.js';
import { STORES, type TestStore } from '../support/stores.js';

const postgres = STORES.find((b) => b.name === 'postgres');

if (postgres) {
  describe('load locks on PostgreSQL are per store', function () {
    this.timeout(30_000);
    const created: TestStore[] = [];
    afterEach(async () => {
      for (const t of created.splice(0)) await t.drop();
    });

    it("a load transaction open in one store does not hold up the same partner's load in another store of the database", async () => {
      const [a, b] = [await postgres.create(), await postgres.create()];
      created.push(a, b);
      const batch = (id: string) => ({ partner: 'shared-name', variant: 'igaming' as const, entity: 'customers' as const, runId: 'r1', records: raw([customer(id)]) });
      let written!: () => void;
      let release!: () => void;
      const lockHeld = new Promise<void>((resolve) => (written = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      const first = loaderWith(a.store, []).transaction(async (tx) => {
        await tx.load(batch('a1'));
        written();
        await released;
      });
      await lockHeld;
      try {
        const second = loaderWith(b.store, []).load(batch('b1'));
        const outcome = await Promise.race([second.then(() => 'loaded'), delay(5_000).then(() => 'waited')]);
        assert.equal(outcome, 'loaded', "the other store's open transaction held this store's load lock");
        await second;
      } finally {
        release();
        await first;
      }
      assert.deepEqual((await b.store.knex('customers').select('customer_id')).map((r: { customer_id: string }) => r.customer_id), ['b1']);
    });
  });
}
