/**
 * Rows a keyset read would never return are found, never skipped: a row whose cursor column is
 * NULL, MariaDB's zero date (or PostgreSQL's -infinity), and rows sharing (cursor, tie-breaker)
 * when the tie-breaker is not unique (a page boundary between them loses one). `check` reports
 * each with the column and example keys; the run fails with a clear error and loads nothing
 * of the window, on MariaDB, PostgreSQL and SQLite.
 */
import assert from 'node:assert/strict';
import { createDbSource } from '../../connectors/db/source.js';
import { checkPartner } from '../../jobs/check-partner.js';
import { syncStream } from '../../jobs/sync-stream.js';
import type { DbSource, DbStream, PartnerDefinition } from '../../src/config/definition.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import { createSpecValidator } from '../../src/spec/validator.js';
import { loaderWith } from '../support/loader.js';
import { STORES } from '../support/stores.js';
import { cursorStream, DATABASES, dbSource, useDatabase, type TestDatabase } from './databases.js';

const validator = createSpecValidator();
const NOW = new Date('2024-06-01T00:00:00Z');

function stream(tiebreak = 'id'): DbStream {
  return cursorStream({
    table: 'accounts',
    tiebreak_column: tiebreak,
    incremental: { mode: 'cursor', cursor_field: 'updated_at', lookback_ms: 0, start: '2024-05-01T00:00:00.000Z' },
    mapping: { fields: { customer_id: 'email', signup_date: 'updated_at', affiliate_id: { const: 'aff' }, last_modified_date: 'updated_at' }, passthrough: false },
  });
}

const definition = (source: DbSource, s: DbStream): PartnerDefinition => ({ partner: 'gaps', variant: 'igaming', file: 'gaps.yaml', source, streams: { customers: s }, affiliates: { map: {}, unmapped: 'keep' }, secrets: [] });

async function accounts(db: TestDatabase, nullable: boolean): Promise<void> {
  const { sql } = db;
  await db.exec(`CREATE TABLE accounts (id ${sql.bigint} NOT NULL PRIMARY KEY, updated_at ${sql.datetime6}${nullable ? ' NULL' : ' NOT NULL'}, ref ${sql.bigint} NOT NULL, email ${sql.text} NOT NULL)`);
}

/** The raw text a dialect's driver gives for 2024-05-01 10:00:00 in the test's column type. */
const rawTen: Record<string, string> = { mysql: '2024-05-01 10:00:00.000000', postgres: '2024-05-01 10:00:00+00', sqlite: '2024-05-01 10:00:00' };

async function backfill(source: DbSource, s: DbStream) {
  const store = await (STORES[0] as (typeof STORES)[number]).create();
  const replica = createDbSource(source, { clock: () => NOW, logger: silentLogger(), redact: noRedaction, variant: 'igaming' });
  try {
    const result = await syncStream({ loader: loaderWith(store.store, []), source: replica, logger: silentLogger(), redact: noRedaction }, definition(source, s), 'customers', { kind: 'backfill', from: '2024-05-01', to: '2024-05-02' });
    const stored = (await store.store.knex('customers').where({ partner_id: 'gaps' }).select('customer_id')).map((r: { customer_id: string }) => r.customer_id);
    return { result, stored };
  } finally {
    await replica.close?.();
    await store.drop();
  }
}

for (const backend of DATABASES) {
  describe(`keyset rows no read would reach: ${backend.client}`, function () {
    this.timeout(60_000);
    const db = useDatabase(backend);

    it('a NULL or zero cursor: check names the column and the rows, the run fails instead of skipping them', async () => {
      await accounts(db(), true);
      const zero = backend.client === 'postgres' ? '-infinity' : '0000-00-00 00:00:00';
      await db().exec('INSERT INTO accounts VALUES (1, ?, 1, ?), (2, NULL, 2, ?), (3, ?, 3, ?)', ['2024-05-01 10:00:00', 'a1@example.com', 'a2@example.com', zero, 'a3@example.com']);
      const source = dbSource(db());
      const zeroText = backend.client === 'mysql' ? '0000-00-00 00:00:00.000000' : zero;
      const found = `cursor column updated_at is NULL, zero or outside the years 0001..9999 in rows no cursor window reaches (id 2: NULL, id 3: ${zeroText}): they would never be read; give them a date-time on the source, or read the stream with a query whose cursor has one (COALESCE)`;
      const checks = await checkPartner({ clock: () => NOW, logger: silentLogger(), redact: noRedaction, validator }, definition(source, stream()));
      assert.deepEqual(checks.map((c) => [c.ok, c.detail]), [[false, `streams.customers: ${found}`]]);
      const { result, stored } = await backfill(source, stream());
      assert.equal(result.status, 'failed');
      assert.equal(result.error, `streams.customers (table accounts): ${found}`);
      assert.deepEqual(stored, []);
    });

    it('a tie-breaker that is not unique: check finds the shared pair, the run fails where a page would have lost a row', async () => {
      await accounts(db(), false);
      // Ordered by (updated_at, ref): ids 2 and 3 share (10:00, ref 2); a page of 2 would end at id 2 and the next start after (10:00, 2), losing id 3.
      await db().exec('INSERT INTO accounts VALUES (1, ?, 1, ?), (2, ?, 2, ?), (3, ?, 2, ?), (4, ?, 3, ?)', ['2024-05-01 10:00:00', 'a1@example.com', '2024-05-01 10:00:00', 'a2@example.com', '2024-05-01 10:00:00', 'a3@example.com', '2024-05-01 11:00:00', 'a4@example.com']);
      const source = dbSource(db(), { page_size: 2 });
      const checks = await checkPartner({ clock: () => NOW, logger: silentLogger(), redact: noRedaction, validator }, definition(source, stream('ref')));
      assert.deepEqual(checks.map((c) => [c.ok, c.detail]), [[
        false,
        `streams.customers: tie-breaker ref is not unique among rows with one updated_at (of the newest 100000 rows: (updated_at ${rawTen[backend.client]}, ref 2) 2 times): keyset pages would skip rows; set tiebreak_column to a unique column (the primary key)`,
      ]]);
      const { result, stored } = await backfill(source, stream('ref'));
      assert.equal(result.status, 'failed');
      assert.equal(result.error, `streams.customers (table accounts), page 1: rows 2 and 3 share (updated_at ${rawTen[backend.client]}, ref 2): tie-breaker ref is not unique among rows with one updated_at, so keyset pages would skip rows; set tiebreak_column to a unique column (the primary key)`);
      assert.deepEqual(stored, []);
      // With the primary key as tie-breaker every row loads.
      const fixed = await backfill(source, stream('id'));
      assert.equal(fixed.result.status, 'succeeded', fixed.result.error);
      assert.deepEqual(fixed.stored.sort(), ['a1@example.com', 'a2@example.com', 'a3@example.com', 'a4@example.com']);
    });
  });
}
