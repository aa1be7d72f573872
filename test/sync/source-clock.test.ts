/**
 * Windows follow the partner's data, not our clock: the example REST definition against the
 * sandbox over real HTTP, whose clock runs three weeks behind ours or two hours ahead, or whose
 * records arrive late with exactly the last cursor value seen, one second after it, or stamped in
 * 2099. After each change a sync makes the store equal to the partner's data, row for row.
 */
import assert from 'node:assert/strict';
import { runPartner } from '../../jobs/run-partner.js';
import { utcMicros, type CursorState } from '../../jobs/cursor-state.js';
import type { PartnerDefinition, RestStream } from '../../src/config/definition.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { readState } from '../../src/store/sync-state.js';
import type { Entity, SpecRecord } from '../../src/types.js';
import { loaderWith } from '../support/loader.js';
import { SANDBOX_SECRET, byKey, exampleDefinition, storedByKey } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';

const CURSOR_ENTITIES: Entity[] = ['customers', 'transactions'];
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

for (const backend of STORES) {
  describe(`cursor windows by the partner's data (sandbox over HTTP) on ${backend.name}`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let sandbox: Sandbox;
    let def: PartnerDefinition;
    let cleanup: () => void;
    /** How far the partner's clock is from ours. */
    let skewMs = 0;
    let changes = 0;

    async function setup(skew: number): Promise<void> {
      skewMs = skew;
      t = await backend.create();
      sandbox = await startSandbox({ port: 0, seed: 8, customers: 25, clock: () => new Date(Date.now() + skewMs), clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      ({ def, cleanup } = await exampleDefinition('igaming', sandbox.url));
      for (const entity of CURSOR_ENTITIES) {
        const stream = def.streams[entity] as RestStream;
        stream.incremental.start = `${sandbox.data.from}T00:00:00Z`;
        stream.pagination.per_page = 20;
      }
    }
    afterEach(async () => {
      await sandbox?.close();
      cleanup?.();
      await t?.drop();
    });

    async function sync(): Promise<void> {
      for (const entity of CURSOR_ENTITIES) {
        const [result] = await runPartner({ loader: loaderWith(t.store, []), clock: t.store.clock, logger: silentLogger(), redact: noRedaction },
          def, { kind: 'run', scheduledFor: new Date() }, entity);
        assert.equal(result?.status, 'succeeded', result?.error);
      }
    }

    async function assertStoreEqualsPartner(when: string): Promise<void> {
      for (const entity of CURSOR_ENTITIES) {
        const expected = byKey('igaming', entity, entity === 'customers' ? sandbox.data.customers('igaming') : sandbox.data.transactions('igaming'));
        const stored = await storedByKey(t.store, def.partner, 'igaming', entity);
        assert.deepEqual(stored, expected, `${when}: ${entity} differ from the partner's (${stored.size} stored, ${expected.size} at the partner)`);
      }
    }

    const state = async (entity: Entity) => (await readState(t.store.knex, def.partner, entity)) as CursorState;

    /** Changes stamped `at` (default the partner's clock): a customer changed, a new one, a transaction reversed, a new one. */
    function change(at?: string): void {
      changes += 1;
      const customers = sandbox.data.customers('igaming');
      const transactions = sandbox.data.transactions('igaming');
      const customer = customers[changes % customers.length] as SpecRecord;
      const transaction = transactions.find((tx) => tx.status === 'approved' && tx.transaction_type === 'deposit') as SpecRecord;
      sandbox.data.upsertCustomer('igaming', { customer_id: customer.customer_id, kyc_status_id: customer.kyc_status_id === 'approved' ? 'pending' : 'approved' }, at);
      sandbox.data.upsertCustomer('igaming', { ...customer, customer_id: `late-${changes}`, email: `late-${changes}@example.test` }, at);
      sandbox.data.setTransactionStatus('igaming', transaction.transaction_id as string, 'reversed', at);
      sandbox.data.upsertTransaction('igaming', { ...transaction, transaction_id: `late-tx-${changes}`, customer_id: customer.customer_id }, at);
    }

    /** The start never passes the run's upper bound (the watermark). */
    async function assertStartCapped(): Promise<void> {
      for (const entity of CURSOR_ENTITIES) {
        const s = await state(entity);
        assert.ok(s.start && s.watermark && s.start <= (utcMicros(s.watermark) as string), `${entity}: start ${s.start} is past the upper bound ${s.watermark}`);
      }
    }

    it('a partner clock three weeks behind ours: what it changes later loads, run after run', async () => {
      await setup(-21 * DAY);
      await sync();
      await assertStoreEqualsPartner('first sync');
      change();
      await sync();
      await assertStoreEqualsPartner('after changes stamped three weeks ago');
      change(new Date(Date.now() + skewMs + 60_000).toISOString());
      await sync();
      await assertStoreEqualsPartner('after a second round of changes');
      await sync();
      await assertStoreEqualsPartner('after a sync with no change');
      assert.ok(((await state('customers')).start as string) < new Date(Date.now() - 20 * DAY).toISOString(), 'the start follows the partner\'s stamps');
    });

    it('a partner clock two hours ahead of ours: records stamped in our future load at once, and the start stays at our upper bound', async () => {
      await setup(2 * HOUR);
      await sync();
      await assertStoreEqualsPartner('first sync');
      change();
      await sync();
      await assertStoreEqualsPartner('after changes stamped two hours ahead');
      await assertStartCapped();
      change();
      await sync();
      await assertStoreEqualsPartner('after a second round of changes');
      await sync();
      await assertStoreEqualsPartner('after a sync with no change');
      await assertStartCapped();
    });

    it('records inserted late with exactly the greatest cursor value loaded, and a status change one second after it, load', async () => {
      await setup(0);
      await sync();
      await assertStoreEqualsPartner('first sync');
      const customersMax = (await state('customers')).max_cursor as string;
      const transactionsMax = (await state('transactions')).max_cursor as string;
      assert.ok(customersMax < new Date(Date.now() - HOUR).toISOString(), 'the partner\'s latest change is well behind our clock');
      const customer = sandbox.data.customers('igaming')[0] as SpecRecord;
      sandbox.data.upsertCustomer('igaming', { ...customer, customer_id: 'late-at-max', email: 'late-at-max@example.test' }, customersMax);
      const transaction = sandbox.data.transactions('igaming').find((tx) => tx.status === 'approved') as SpecRecord;
      sandbox.data.upsertTransaction('igaming', { ...transaction, transaction_id: 'late-tx-at-max' }, transactionsMax);
      sandbox.data.setTransactionStatus('igaming', transaction.transaction_id as string, 'reversed', new Date(Date.parse(transactionsMax) + 1000).toISOString());
      await sync();
      await assertStoreEqualsPartner('after late inserts at the old maximum and a status change one second after it');
      assert.equal((await storedByKey(t.store, def.partner, 'igaming', 'transactions')).get(transaction.transaction_id as string)?.status, 'reversed');
      await sync();
      await assertStoreEqualsPartner('after a sync with no change');
    });

    it('a record stamped 2099 loads at once and does not carry the start past the run; normal records after it still load', async () => {
      await setup(0);
      await sync();
      const customer = sandbox.data.customers('igaming')[1] as SpecRecord;
      sandbox.data.upsertCustomer('igaming', { ...customer, customer_id: 'from-2099', email: 'from-2099@example.test' }, '2099-01-01T00:00:00.000Z');
      await sync();
      await assertStoreEqualsPartner('after a record stamped 2099');
      await assertStartCapped();
      change();
      await sync();
      await assertStoreEqualsPartner('after normal records following the 2099 stamp');
      await sync();
      await assertStoreEqualsPartner('after a sync with no change');
      await assertStartCapped();
    });

    it('a bogus 2099 stamp from a partner whose clock runs three weeks behind ours does not hide its later changes', async () => {
      await setup(-21 * DAY);
      await sync();
      const customer = sandbox.data.customers('igaming')[2] as SpecRecord;
      sandbox.data.upsertCustomer('igaming', { ...customer, customer_id: 'bogus-2099', email: 'bogus-2099@example.test' }, '2099-01-01T00:00:00.000Z');
      await sync();
      await assertStoreEqualsPartner('after a record stamped 2099');
      // The start follows what the partner wrote up to the run's upper bound, not the future stamp.
      assert.ok(((await state('customers')).start as string) < new Date(Date.now() - 20 * DAY).toISOString(), 'the 2099 stamp moved the start to our clock');
      change();
      await sync();
      await assertStoreEqualsPartner('after changes stamped three weeks behind, following the 2099 stamp');
    });
  });
}
