/**
 * The example prop-trading replica definition (config/partners/replica-prop.yaml) against a real
 * MariaDB and PostgreSQL replica, through the sync job into the store: late rows at the
 * watermark, status changes, re-aggregated days, and a SIGKILL mid-run.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runPartner } from '../../jobs/run-partner.js';
import { utcDay } from '../../jobs/windows.js';
import { addDays } from '../../src/kernel/dates.js';
import type { PartnerDefinition } from '../../src/config/definition.js';
import { silentLogger, noRedaction } from '../../src/log.js';
import { packageRoot } from '../../src/paths.js';
import { readState } from '../../src/store/sync-state.js';
import type { Entity } from '../../src/types.js';
import { runCli } from '../support/cli.js';
import { loaderWith } from '../support/loader.js';
import { mariadb, postgres, replicaDefinition, seed, type Replica } from '../support/replica.js';
import { storedByKey } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';

const ENTITIES: Entity[] = ['customers', 'transactions', 'activity'];
const sqlite = STORES.find((s) => s.name === 'sqlite');

for (const make of [mariadb, postgres]) {
  describe(`the replica example over a real ${make === mariadb ? 'MariaDB' : 'PostgreSQL'} replica`, function () {
    this.timeout(120_000);
    let replica: Replica;
    let store: TestStore;
    let dir: string;
    beforeEach(async function () {
      if (!sqlite) this.skip();
      replica = await make();
      store = await (sqlite as NonNullable<typeof sqlite>).create();
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-replica-'));
    });
    afterEach(async () => {
      await replica?.drop();
      await store?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    const run = async (def: PartnerDefinition) => {
      const results = await runPartner({ loader: loaderWith(store.store, []), clock: store.store.clock, logger: silentLogger(), redact: noRedaction },
        def, { kind: 'run', scheduledFor: new Date() });
      assert.ok(results.every((r) => r.status === 'succeeded'), JSON.stringify(results));
      return results;
    };
    const stored = (entity: Entity) => storedByKey(store.store, 'replica-prop', 'prop-trading', entity);

    it('late rows at the watermark, status changes and re-aggregated days all reach the store', async () => {
      await seed(replica, 6);
      const def = await replicaDefinition(replica, dir);
      await run(def);
      assert.equal((await stored('customers')).size, 6);
      assert.equal((await stored('transactions')).size, 6);
      const activity = await stored('activity');
      assert.equal(activity.size, 6);
      const state = (await readState(store.store.knex, 'replica-prop', 'customers')) as { max_cursor: string; watermark: string };
      assert.match(state.max_cursor, /\.\d{6}Z$/, 'the cursor keeps microseconds');

      // Rows committed late with exactly the last cursor value seen and exactly the watermark;
      // a status change; a day re-aggregated.
      const plain = (iso: string) => iso.replace('T', ' ').replace('Z', '');
      await replica.exec('INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', ['A00000', null, null, null, 'DE', 'rapid', 'P2', '50000.00', 'IB-9', '2026-01-06 00:00:00', plain(state.max_cursor)]);
      await replica.exec('INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', ['A99999', null, null, null, 'DE', 'rapid', 'P1', '50000.00', 'IB-9', '2026-01-06 00:00:00', plain(state.watermark)]);
      await replica.exec('UPDATE payments SET state = ?, updated_at = ? WHERE payment_id = ?', ['reversed', await replica.nowPlus(-60), 'P2']);
      const yesterday = addDays(utcDay(new Date()), -1);
      await replica.exec('DELETE FROM trades WHERE trade_id = ?', [1]);
      await replica.exec('UPDATE trades SET profit_cents = ? WHERE trade_id = ?', [12345, 2]);
      await run(def);

      const customers = await stored('customers');
      assert.equal(customers.size, 8);
      assert.equal(customers.get('A00000')?.phase, 'phase_2');
      assert.ok(customers.has('A99999'));
      assert.equal((await stored('transactions')).get('P2')?.status, 'reversed');
      const day = await stored('activity');
      assert.equal(day.size, 5, 'the account whose only trade was deleted has no row that day any more');
      assert.ok(![...day.keys()].some((k) => k.startsWith(`${yesterday}|A00001|`)));
      assert.equal(day.get(`${yesterday}|A00002|XAUUSD|USD`)?.pnl, 123.45);
    });

    it('a replica sync killed with SIGKILL mid-run, then rerun, equals an uninterrupted run', async () => {
      await seed(replica, 400);
      await replicaDefinition(replica, dir, 20); // writes the definition the CLI reads
      const env = { REPLICA_PROP_URL: replica.url, STORE_URL: store.url, LOG_LEVEL: 'error' };
      const args = ['--config', dir, 'run', 'replica-prop'];
      // kill as soon as the first pages of customers are in
      const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'partner-sync.js'), ...args], { env: { ...process.env, ...env }, stdio: 'ignore' });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      for (let i = 0; i < 4000 && child.exitCode === null; i++) {
        const n = Number(((await store.store.knex('customers').count({ n: '*' })) as { n: number }[])[0]?.n ?? 0);
        if (n > 0) { child.kill('SIGKILL'); break; }
        await sleep(2);
      }
      assert.equal(await exited, null, 'the run was killed before it finished');
      const partial = (await stored('customers')).size;
      assert.ok(partial > 0 && partial < 400, `killed mid-customers (${partial} loaded)`);
      const rerun = await runCli(args, { env });
      assert.equal(rerun.code, 0, rerun.stderr);

      const reference = await (sqlite as NonNullable<typeof sqlite>).create();
      try {
        const again = await runCli(args, { env: { ...env, STORE_URL: reference.url } });
        assert.equal(again.code, 0, again.stderr);
        for (const entity of ENTITIES) {
          assert.deepEqual(await stored(entity), await storedByKey(reference.store, 'replica-prop', 'prop-trading', entity), entity);
        }
      } finally {
        await reference.drop();
      }
    });
  });
}
