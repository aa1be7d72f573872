/**
 * Planner statistics in bulk runs (src/store/statistics.ts): on PostgreSQL, a table that changed
 * by more than 10,000 rows and a fifth of its size since its last ANALYZE is analyzed when a bulk
 * run settles; one that did not is left alone. Autovacuum is off for the table here, so only the
 * code under test can analyze it.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { refreshStaleStatistics } from '../../src/store/statistics.js';
import { STORES, type TestStore } from '../support/stores.js';

const postgres = STORES.find((b) => b.name === 'postgres');

(postgres ? describe : describe.skip)('planner statistics of a growing table (PostgreSQL)', function () {
  this.timeout(60_000);
  let t: TestStore;
  beforeEach(async () => {
    t = await postgres!.create();
    await t.store.knex.raw('ALTER TABLE customers SET (autovacuum_enabled = false)');
  });
  afterEach(async () => t.drop());

  /** Inserts n customers on a connection of its own and makes its counts visible to pg_stat_user_tables at once. */
  async function insertCustomers(from: number, n: number): Promise<void> {
    const client = new pg.Client({ connectionString: t.url });
    await client.connect();
    try {
      await client.query(`INSERT INTO customers (partner_id, customer_id, signup_date, affiliate_id, loaded_at)
        SELECT 'p1', 'c' || i, now(), 'a' || (i % 20), now() FROM generate_series($1::int, $2::int) i`, [from, from + n - 1]);
      await client.query('SELECT pg_stat_force_next_flush()');
      await client.query('SELECT 1');
    } finally {
      await client.end();
    }
  }
  const reltuples = async (): Promise<number> =>
    Number(((await t.store.knex.raw(`SELECT reltuples FROM pg_class WHERE oid = 'customers'::regclass`)) as { rows: { reltuples: number }[] }).rows[0]!.reltuples);

  it('analyzes a table that grew by 12,000 rows, then leaves it alone until it grows by a fifth again', async () => {
    await insertCustomers(1, 12_000);
    assert.equal(await reltuples(), -1, 'never analyzed before');
    assert.deepEqual(await refreshStaleStatistics(t.store), ['customers']);
    assert.equal(await reltuples(), 12_000);
    assert.deepEqual(await refreshStaleStatistics(t.store), [], 'nothing changed since');
    // 2,000 more: under 10,000 rows changed, not stale.
    await insertCustomers(12_001, 2_000);
    assert.deepEqual(await refreshStaleStatistics(t.store), []);
    assert.equal(await reltuples(), 12_000);
    // 10,000 more (12,000 since the ANALYZE, above a fifth of 12,000): stale again.
    await insertCustomers(14_001, 10_000);
    assert.deepEqual(await refreshStaleStatistics(t.store), ['customers']);
    assert.equal(await reltuples(), 24_000);
  });
});
