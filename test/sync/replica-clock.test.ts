/**
 * Windows follow the source's data on real MariaDB and PostgreSQL replicas (the replica example
 * definition): rows stamped three weeks behind the replica's clock or two hours ahead of it, rows
 * inserted late with exactly the greatest cursor value loaded, a status change one second after
 * it, a row stamped 2099. After each change a sync makes the store equal to a first sync of the
 * replica as it is then, row for row.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { utcMicros, type CursorState } from '../../jobs/cursor-state.js';
import { runPartner } from '../../jobs/run-partner.js';
import type { PartnerDefinition } from '../../src/config/definition.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import type { Store } from '../../src/store/store.js';
import { readState } from '../../src/store/sync-state.js';
import type { Entity } from '../../src/types.js';
import { loaderWith } from '../support/loader.js';
import { mariadb, postgres, replicaDefinition, type Replica } from '../support/replica.js';
import { storedByKey } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';

const sqlite = STORES.find((s) => s.name === 'sqlite');
const CURSOR_ENTITIES: Entity[] = ['customers', 'transactions'];
const DAY_S = 86_400;
/** A replica's ISO cursor value as its zone-less column text. */
const plain = (iso: string) => (utcMicros(iso) as string).replace('T', ' ').replace('Z', '');

for (const make of [mariadb, postgres]) {
  describe(`cursor windows by the source's data over a real ${make === mariadb ? 'MariaDB' : 'PostgreSQL'} replica`, function () {
    this.timeout(120_000);
    let replica: Replica;
    let dir: string;
    let def: PartnerDefinition;
    const stores: TestStore[] = [];
    let store: Store;
    let accounts = 0;
    let payments = 0;

    beforeEach(async function () {
      if (!sqlite) this.skip();
      replica = await make();
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-replica-clock-'));
      // Small pages: a window spans several keyset pages. The first run starts 60 days back.
      def = await replicaDefinition(replica, dir, 4, 60);
      const t = await (sqlite as NonNullable<typeof sqlite>).create();
      stores.push(t);
      store = t.store;
      accounts = 0;
      payments = 0;
    });
    afterEach(async () => {
      await replica?.drop();
      for (const s of stores.splice(0)) await s.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    const sync = async (into: Store = store): Promise<void> => {
      for (const entity of CURSOR_ENTITIES) {
        const [result] = await runPartner({ loader: loaderWith(into, []), clock: into.clock, logger: silentLogger(), redact: noRedaction },
          def, { kind: 'run', scheduledFor: new Date() }, entity);
        assert.equal(result?.status, 'succeeded', result?.error);
      }
    };

    /** The store equals a first sync of the replica as it is now, and holds every row of it. */
    async function assertStoreEqualsReplica(when: string): Promise<void> {
      const reference = await (sqlite as NonNullable<typeof sqlite>).create();
      stores.push(reference);
      await sync(reference.store);
      for (const entity of CURSOR_ENTITIES) {
        const expected = await storedByKey(reference.store, 'replica-prop', 'prop-trading', entity);
        assert.equal(expected.size, entity === 'customers' ? accounts : payments, `${when}: the first sync reads every ${entity} row`);
        assert.deepEqual(await storedByKey(store, 'replica-prop', 'prop-trading', entity), expected, `${when}: ${entity} differ from the replica's`);
      }
    }

    /** An account and a payment of it, both stamped `at` (the replica's column text). */
    async function insert(at: string, stage = 'P1'): Promise<string> {
      accounts += 1;
      payments += 1;
      const id = `A${String(accounts).padStart(5, '0')}`;
      await replica.exec('INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [id, null, null, null, 'GB', 'standard', stage, '100000.00', 'IB-1', '2026-01-05 09:00:00.000001', at]);
      await replica.exec('INSERT INTO payments VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [`P${payments}`, id, 'CHALLENGE', 54900, 'USD', '2026-01-05 09:05:00', 'approved', at]);
      return id;
    }
    const changeStage = (id: string, stage: string, at: string) => replica.exec('UPDATE accounts SET stage = ?, updated_at = ? WHERE account_id = ?', [stage, at, id]);
    const reverse = (payment: string, at: string) => replica.exec('UPDATE payments SET state = ?, updated_at = ? WHERE payment_id = ?', ['reversed', at, payment]);
    const state = async (entity: Entity) => (await readState(store.knex, 'replica-prop', entity)) as CursorState;
    async function assertStartCapped(): Promise<void> {
      for (const entity of CURSOR_ENTITIES) {
        const s = await state(entity);
        assert.ok(s.start && s.watermark && s.start <= (utcMicros(s.watermark) as string), `${entity}: start ${s.start} is past the upper bound ${s.watermark}`);
      }
    }

    it('rows stamped three weeks behind the replica\'s clock (a primary whose clock is behind) load, run after run', async () => {
      for (let i = 0; i < 6; i++) await insert(await replica.nowPlus(-21 * DAY_S - 3600 + i));
      await sync();
      await assertStoreEqualsReplica('first sync');
      const later = await insert(await replica.nowPlus(-21 * DAY_S));
      await changeStage('A00002', 'P2', await replica.nowPlus(-21 * DAY_S + 1));
      await reverse('P3', await replica.nowPlus(-21 * DAY_S + 1));
      await sync();
      await assertStoreEqualsReplica('after rows stamped three weeks back');
      await changeStage(later, 'FUNDED', await replica.nowPlus(-21 * DAY_S + 60));
      await insert(await replica.nowPlus(-21 * DAY_S + 60));
      await sync();
      await assertStoreEqualsReplica('after a second round');
    });

    it('rows stamped two hours ahead of the replica\'s clock load at once; the start stays at the safety-lagged clock', async () => {
      for (let i = 0; i < 6; i++) await insert(await replica.nowPlus(-3600 + i));
      await sync();
      const ahead = await insert(await replica.nowPlus(7200));
      await reverse('P1', await replica.nowPlus(7200));
      await sync();
      await assertStoreEqualsReplica('after rows stamped two hours ahead');
      await assertStartCapped();
      await changeStage(ahead, 'P2', await replica.nowPlus(7260));
      await insert(await replica.nowPlus(7260));
      await sync();
      await assertStoreEqualsReplica('after a second round');
      await assertStartCapped();
    });

    it('rows inserted late with exactly the greatest cursor value loaded, and a status change one second after it, load', async () => {
      for (let i = 0; i < 6; i++) await insert(await replica.nowPlus(-3600 + i));
      await sync();
      const customersMax = (await state('customers')).max_cursor as string;
      const transactionsMax = (await state('transactions')).max_cursor as string;
      await insert(plain(customersMax));
      await reverse('P2', plain(new Date(Date.parse(transactionsMax) + 1000).toISOString()));
      await changeStage('A00003', 'P2', plain(new Date(Date.parse(customersMax) + 1000).toISOString()));
      await sync();
      await assertStoreEqualsReplica('after late rows at the old maximum and changes one second after it');
      await sync();
      await assertStoreEqualsReplica('after a sync with no change');
    });

    it('a row stamped 2099 loads at once without carrying the start past the run; normal rows after it load', async () => {
      for (let i = 0; i < 6; i++) await insert(await replica.nowPlus(-3600 + i));
      await sync();
      await insert('2099-01-01 00:00:00');
      await sync();
      await assertStoreEqualsReplica('after a row stamped 2099');
      await assertStartCapped();
      await insert(await replica.nowPlus(-1));
      await reverse('P4', await replica.nowPlus(-1));
      await sync();
      await assertStoreEqualsReplica('after normal rows following the 2099 stamp');
      await assertStartCapped();
    });
  });
}
