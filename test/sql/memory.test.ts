/**
 * Bounded memory: a 300,000-row table read through the source (keyset pages of a cursor window, a
 * streamed day) grows the heap by about a page, not by the table; the same rows read in one result
 * are shown beside it, so the bound is known to catch a read that holds everything.
 */
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createDbSource } from '../../connectors/db/source.js';
import { openSqlConnection } from '../../connectors/sql/connection.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import { cursorStream, dailyStream, dbSource, deps, SERVER_DATABASES, useDatabase } from './databases.js';

const ROWS = 300_000;
const LIMIT_MB = 60;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapMb = (): number => {
  gc();
  return process.memoryUsage().heapUsed / 1_048_576;
};

/** Peak heap growth (MB, after GC, sampled every few pages) while `pages` is read and each page dropped. */
async function peakGrowth(pages: AsyncIterable<unknown[]>): Promise<{ rows: number; pages: number; growth: number }> {
  const base = heapMb();
  let peak = 0;
  let rows = 0;
  let count = 0;
  for await (const page of pages) {
    rows += page.length;
    count += 1;
    if (count % 20 === 0) peak = Math.max(peak, heapMb() - base);
  }
  return { rows, pages: count, growth: peak };
}

for (const backend of SERVER_DATABASES) {
  describe(`db source, bounded memory: ${backend.client}`, function () {
    this.timeout(300_000);
    const db = useDatabase(backend);

    it(`reads ${ROWS} rows in pages with heap growth under ${LIMIT_MB} MB (keyset pages and a streamed day)`, async () => {
      const { sql } = db();
      await db().exec(`CREATE TABLE big (id ${sql.bigint} NOT NULL PRIMARY KEY, updated_at ${sql.datetime6} NOT NULL, date ${sql.date} NOT NULL, customer_id ${sql.text} NOT NULL, amount ${sql.decimal}, padding ${sql.text})`);
      const customer = backend.client === 'mysql' ? "CONCAT('customer-', seq)" : "'customer-' || seq";
      await db().exec(`INSERT INTO big SELECT seq, ${sql.plusSeconds('2024-05-01 00:00:00', backend.client === 'mysql' ? 'seq DIV 4' : 'seq / 4')}, '2024-05-01', ${customer}, 12.34, ${sql.pad(200)} FROM ${sql.series(ROWS)}`);
      await db().exec('CREATE INDEX big_keyset ON big (updated_at, id)');

      const source = createDbSource(dbSource(db(), { page_size: 1000 }), deps());
      try {
        const keyset = await peakGrowth(source.pages(cursorStream({ table: 'big' }), { kind: 'cursor', from: '2024-05-01T00:00:00Z', to: '2024-05-02T00:00:00Z' }));
        const streamed = await peakGrowth(source.pages(dailyStream({ table: 'big', date_column: 'date' }), { kind: 'days', from: '2024-05-01', to: '2024-05-01' }));
        console.log(`      ${backend.client}: keyset ${keyset.pages} pages, peak heap growth ${keyset.growth.toFixed(1)} MB; streamed day ${streamed.pages} pages, ${streamed.growth.toFixed(1)} MB`);
        assert.equal(keyset.rows, ROWS);
        assert.equal(streamed.rows, ROWS);
        assert.ok(keyset.growth < LIMIT_MB, `keyset pages grew the heap by ${keyset.growth.toFixed(1)} MB`);
        assert.ok(streamed.growth < LIMIT_MB, `the streamed day grew the heap by ${streamed.growth.toFixed(1)} MB`);
      } finally {
        await source.close?.();
      }

      // The contrast: the same rows in one result.
      const stats = { requests: 0, retries: 0, throttled: 0, waitedMs: 0 };
      const connection = openSqlConnection({ client: backend.client, url: db().url, timezone: 'UTC', statementTimeoutMs: 60_000, redact: noRedaction, logger: silentLogger(), stats });
      const session = await connection.acquire('all at once');
      try {
        const base = heapMb();
        const { rows } = await session.query('SELECT * FROM big', {}, 'all at once');
        const whole = heapMb() - base;
        console.log(`      ${backend.client}: the same ${rows.length} rows in one result: ${whole.toFixed(1)} MB`);
        assert.ok(whole > LIMIT_MB, `one result holding every row takes ${whole.toFixed(1)} MB`);
      } finally {
        await session.release();
        await connection.close();
      }
    });
  });
}
