/**
 * A replica whose schema was not made for us: BIGINT UNSIGNED ids (one beyond 2^53), INT
 * customer references, account sizes kept in thousands. A definition with plain `table:` streams
 * and a field mapping only (no hand-written SQL) passes `check`, syncs, and the store holds the
 * exact ids and sizes. Against a real MariaDB and a real PostgreSQL replica, into every store.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { utcDay } from '../../jobs/windows.js';
import { addDays } from '../../src/kernel/dates.js';
import { SERVER_DATABASES, useDatabase } from '../sql/databases.js';
import { runCli } from '../support/cli.js';
import { storedByKey } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';

/** Beyond 2^53 − 1: a JS number would round these. The largest id of each server's BIGINT. */
const ABOVE_2_53 = '9007199254740993';
const LARGEST = { mysql: '18446744073709551615', postgres: '9223372036854775807' } as const;

const definition = (client: string) => `partner: bigint-replica
variant: prop-trading
source:
  type: db
  client: ${client}
  url: \${BIGINT_REPLICA_URL}
  page_size: 2
  safety_lag: PT1S
streams:
  customers:
    table: accounts
    cursor_column: updated_at
    tiebreak_column: id
    incremental: { mode: cursor, lookback: PT10M, start: ${addDays(utcDay(new Date()), -5)}T00:00:00Z }
    mapping:
      passthrough: false
      fields:
        customer_id: id
        affiliate_id: ib_id
        signup_date: created_at
        last_modified_date: updated_at
        challenge_type: plan
        account_size: { from: size_k, multiply: 1000 }
  transactions:
    table: payments
    cursor_column: updated_at
    tiebreak_column: id
    incremental: { mode: cursor, lookback: PT10M, start: ${addDays(utcDay(new Date()), -5)}T00:00:00Z }
    mapping:
      passthrough: false
      fields:
        transaction_id: id
        customer_id: account_id
        transaction_type: { const: challenge_fee }
        amount_currency: amount
        currency: currency
        transaction_date: paid_at
        status: { const: approved }
  activity:
    table: daily_pnl
    date_column: day
    incremental: { mode: daily, late_days: 1 }
    mapping:
      passthrough: false
      fields:
        date: day
        customer_id: account_ref
        instrument: symbol
        currency: currency
        lots_traded: lots
        pnl: pnl
`;

for (const backend of SERVER_DATABASES) {
  for (const storeBackend of STORES) {
    describe(`a ${backend.client === 'mysql' ? 'MariaDB' : 'PostgreSQL'} replica with BIGINT ids and sizes in thousands, mapping only (${storeBackend.name} store)`, function () {
      this.timeout(120_000);
      let store: TestStore;
      let dir: string;
      // Before the replica's hooks: the store's own connections are closed before they count what is left open.
      beforeEach(async () => {
        store = await storeBackend.create();
        dir = mkdtempSync(join(tmpdir(), 'partner-sync-bigint-'));
      });
      afterEach(async () => {
        await store?.drop();
        rmSync(dir, { recursive: true, force: true });
      });
      const db = useDatabase(backend);

      it('check passes, a sync stores the exact ids and the sizes in units', async () => {
        const { client, sql } = db();
        const id = client === 'mysql' ? 'BIGINT UNSIGNED' : 'bigint';
        const int = client === 'mysql' ? 'INT' : 'integer';
        const largest = LARGEST[client as keyof typeof LARGEST];
        await db().exec(`CREATE TABLE accounts (id ${id} NOT NULL PRIMARY KEY, ib_id ${int} NOT NULL, plan ${sql.text} NOT NULL,
          size_k ${int} NOT NULL, created_at ${sql.datetime6} NOT NULL, updated_at ${sql.datetime6} NOT NULL)`);
        await db().exec(`CREATE TABLE payments (id ${id} NOT NULL PRIMARY KEY, account_id ${id} NOT NULL, amount ${sql.decimal} NOT NULL,
          currency ${sql.text} NOT NULL, paid_at ${sql.datetime6} NOT NULL, updated_at ${sql.datetime6} NOT NULL)`);
        await db().exec(`CREATE TABLE daily_pnl (day ${sql.date} NOT NULL, account_ref ${int} NOT NULL, symbol ${sql.text} NOT NULL,
          currency ${sql.text} NOT NULL, lots ${sql.decimal} NOT NULL, pnl ${sql.decimal} NOT NULL)`);
        const hourAgo = new Date(Date.now() - 3_600_000).toISOString().replace('T', ' ').replace('Z', '');
        const yesterday = addDays(utcDay(new Date()), -1);
        // Ids around and beyond 2^53, all with the same change time: the keyset pages through the tie by id.
        const accounts: [string, number, number][] = [[largest, 7, 200], [ABOVE_2_53, 7, 100], ['9007199254740992', 12, 25], ['1001', 12, 10]];
        for (const [account, ib, sizeK] of accounts) {
          await db().exec('INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?)', [account, ib, 'two-step', sizeK, '2026-01-05 09:00:00', hourAgo]);
        }
        await db().exec('INSERT INTO payments VALUES (?, ?, ?, ?, ?, ?)', [largest, largest, '549.00', 'USD', '2026-01-05 09:05:00', hourAgo]);
        await db().exec('INSERT INTO payments VALUES (?, ?, ?, ?, ?, ?)', [ABOVE_2_53, ABOVE_2_53, '99.00', 'USD', '2026-01-05 09:06:00', hourAgo]);
        await db().exec('INSERT INTO payments VALUES (?, ?, ?, ?, ?, ?)', ['7', '1001', '49.50', 'USD', '2026-01-05 09:07:00', hourAgo]);
        await db().exec('INSERT INTO daily_pnl VALUES (?, ?, ?, ?, ?, ?)', [yesterday, 1001, 'EURUSD', 'USD', '1.50', '-25.50']);

        mkdirSync(join(dir, 'partners'));
        writeFileSync(join(dir, 'partners', 'bigint-replica.yaml'), definition(client));
        const env = { BIGINT_REPLICA_URL: db().url, STORE_URL: store.url };
        const check = await runCli(['--config', dir, 'check', '--partner', 'bigint-replica'], { env });
        assert.equal(check.code, 0, check.stdout + check.stderr);

        const run = await runCli(['--config', dir, 'run', 'bigint-replica', '--json'], { env });
        assert.equal(run.code, 0, run.stdout + run.stderr);

        const customers = await storedByKey(store.store, 'bigint-replica', 'prop-trading', 'customers');
        assert.deepEqual([...customers.keys()].sort(), ['1001', '9007199254740992', ABOVE_2_53, largest].sort());
        const sizes = Object.fromEntries([...customers].map(([key, c]) => [key, [c.account_size, c.affiliate_id]]));
        assert.deepEqual(sizes, { [largest]: [200000, '7'], [ABOVE_2_53]: [100000, '7'], '9007199254740992': [25000, '12'], '1001': [10000, '12'] });
        const transactions = await storedByKey(store.store, 'bigint-replica', 'prop-trading', 'transactions');
        assert.deepEqual(Object.fromEntries([...transactions].map(([key, t]) => [key, [t.customer_id, t.amount_currency]])), {
          [largest]: [largest, 549],
          [ABOVE_2_53]: [ABOVE_2_53, 99],
          '7': ['1001', 49.5],
        });
        const activity = await storedByKey(store.store, 'bigint-replica', 'prop-trading', 'activity');
        assert.deepEqual([...activity.keys()], [`${yesterday}|1001|EURUSD|USD`]);
        const rejects = await store.store.knex('rejects').count({ n: '*' });
        assert.equal(Number(rejects[0]?.n), 0);
      });
    });
  }
}
