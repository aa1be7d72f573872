import assert from 'node:assert/strict';
import { createDbSource } from '../../connectors/db/source.js';
import type { DaysWindow } from '../../connectors/source.js';
import { dailyStream, DATABASES, dbSource, deps, readAll, useDatabase, type TestDatabase } from './databases.js';

const TWO_DAYS: DaysWindow = { kind: 'days', from: '2024-05-01', to: '2024-05-02' };

/** A query that aggregates bets per day, customer and game, in each dialect. */
const AGGREGATING: Record<TestDatabase['client'], string> = {
  mysql: `SELECT DATE(placed_at) AS date, customer_id, game_type, 'EUR' AS currency, COUNT(*) AS bets_count, SUM(amount) AS total_bets
          FROM bets WHERE placed_at >= :date_from AND placed_at < :date_to + INTERVAL 1 DAY
          GROUP BY DATE(placed_at), customer_id, game_type`,
  postgres: `SELECT (placed_at AT TIME ZONE 'UTC')::date AS date, customer_id, game_type, 'EUR' AS currency, COUNT(*) AS bets_count, SUM(amount) AS total_bets
             FROM bets WHERE placed_at >= CAST(:date_from AS date) AND placed_at < CAST(:date_to AS date) + 1
             GROUP BY 1, customer_id, game_type`,
  sqlite: `SELECT date(placed_at) AS date, customer_id, game_type, 'EUR' AS currency, COUNT(*) AS bets_count, SUM(amount) AS total_bets
           FROM bets WHERE placed_at >= :date_from AND placed_at < date(:date_to, '+1 day')
           GROUP BY date(placed_at), customer_id, game_type`,
};

const byKey = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  `${String(a.date)} ${String(a.customer_id)} ${String(a.game_type)}`.localeCompare(`${String(b.date)} ${String(b.customer_id)} ${String(b.game_type)}`);

async function dailyActivity(db: TestDatabase): Promise<void> {
  const { sql } = db;
  await db.exec(`CREATE TABLE daily_activity (date ${sql.date} NOT NULL, customer_id ${sql.text} NOT NULL, game_type ${sql.text} NOT NULL, currency ${sql.text} NOT NULL, bets_count INTEGER, total_bets ${sql.decimal}, ggr ${sql.decimal})`);
}

for (const backend of DATABASES) {
  describe(`db source, daily streams: ${backend.client}`, () => {
    const db = useDatabase(backend);

    it('reads whole days from a query that aggregates per day, customer and game', async () => {
      const { sql } = db();
      await db().exec(`CREATE TABLE bets (id INTEGER PRIMARY KEY, customer_id ${sql.text} NOT NULL, game_type ${sql.text} NOT NULL, placed_at ${sql.datetime6} NOT NULL, amount ${sql.decimal} NOT NULL)`);
      const bets: [number, string, string, string, string][] = [
        [1, 'c1', 'slots', '2024-04-30 23:59:59.999999', '100.00'], // the day before: not read
        [2, 'c1', 'slots', '2024-05-01 00:00:00.000000', '10.50'],
        [3, 'c1', 'slots', '2024-05-01 23:59:59.999999', '5.00'],
        [4, 'c1', 'poker', '2024-05-01 12:00:00.000000', '2.25'],
        [5, 'c2', 'slots', '2024-05-02 08:00:00.000000', '7.10'],
        [6, 'c2', 'slots', '2024-05-02 09:00:00.000000', '0.90'],
        [7, 'c2', 'slots', '2024-05-03 00:00:00.000000', '99.00'], // the day after: not read
      ];
      for (const bet of bets) await db().exec('INSERT INTO bets VALUES (?, ?, ?, ?, ?)', bet);
      const source = createDbSource(dbSource(db(), { page_size: 2 }), deps());
      try {
        const pages = await readAll(source.pages(dailyStream({ query: AGGREGATING[backend.client] }), TWO_DAYS));
        assert.ok(pages.every((p) => p.length <= 2));
        assert.deepEqual(pages.flat().sort(byKey), [
          { date: '2024-05-01', customer_id: 'c1', game_type: 'poker', currency: 'EUR', bets_count: 1, total_bets: 2.25 },
          { date: '2024-05-01', customer_id: 'c1', game_type: 'slots', currency: 'EUR', bets_count: 2, total_bets: 15.5 },
          { date: '2024-05-02', customer_id: 'c2', game_type: 'slots', currency: 'EUR', bets_count: 2, total_bets: 8 },
        ]);
      } finally {
        await source.close?.();
      }
    });

    it('reads whole days from a table already aggregated per day (date_column), or from a query filtered by it', async () => {
      await dailyActivity(db());
      const rows: unknown[][] = [
        ['2024-04-30', 'c1', 'slots', 'EUR', 1, '1.00', '0.50'],
        ['2024-05-01', 'c1', 'slots', 'EUR', 3, '30.00', '-4.25'],
        ['2024-05-01', 'c2', 'live_casino', 'USD', 5, '12.34', '1.00'],
        ['2024-05-02', 'c1', 'slots', 'EUR', 2, '20.00', '2.00'],
        ['2024-05-03', 'c1', 'slots', 'EUR', 9, '90.00', '9.00'],
      ];
      for (const row of rows) await db().exec('INSERT INTO daily_activity VALUES (?, ?, ?, ?, ?, ?, ?)', row);
      const source = createDbSource(dbSource(db()), deps());
      try {
        const table = (await readAll(source.pages(dailyStream({ table: 'daily_activity', date_column: 'date' }), TWO_DAYS))).flat().sort(byKey);
        assert.deepEqual(table, [
          { date: '2024-05-01', customer_id: 'c1', game_type: 'slots', currency: 'EUR', bets_count: 3, total_bets: 30, ggr: -4.25 },
          { date: '2024-05-01', customer_id: 'c2', game_type: 'live_casino', currency: 'USD', bets_count: 5, total_bets: 12.34, ggr: 1 },
          { date: '2024-05-02', customer_id: 'c1', game_type: 'slots', currency: 'EUR', bets_count: 2, total_bets: 20, ggr: 2 },
        ]);
        const oneDay = await readAll(source.pages(dailyStream({ table: 'daily_activity', date_column: 'date' }), { kind: 'days', from: '2024-05-03', to: '2024-05-03' }));
        assert.deepEqual(oneDay.flat().map((r) => r.bets_count), [9]);
        const filtered = dailyStream({ query: "SELECT * FROM daily_activity WHERE currency = 'EUR'", date_column: 'date' });
        assert.deepEqual((await readAll(source.pages(filtered, TWO_DAYS))).flat().sort(byKey), table.filter((r) => r.currency === 'EUR'));
      } finally {
        await source.close?.();
      }
    });

    it('streams a day in pages, and a read ended early releases its connection', async () => {
      await dailyActivity(db());
      const { sql } = db();
      await db().exec(`INSERT INTO daily_activity SELECT '2024-05-01', ${backend.client === 'postgres' ? "'c' || seq" : backend.client === 'mysql' ? "CONCAT('c', seq)" : "'c' || seq"}, 'slots', 'EUR', seq, seq, 0 FROM ${sql.series(95)}`);
      const source = createDbSource(dbSource(db(), { page_size: 10 }), deps());
      const stream = dailyStream({ table: 'daily_activity', date_column: 'date' });
      const day: DaysWindow = { kind: 'days', from: '2024-05-01', to: '2024-05-01' };
      try {
        for (let round = 0; round < 3; round++) {
          for await (const page of source.pages(stream, day)) {
            assert.equal(page.length, 10);
            break;
          }
        }
        const pages = await readAll(source.pages(stream, day));
        assert.deepEqual(pages.map((p) => p.length), [10, 10, 10, 10, 10, 10, 10, 10, 10, 5]);
        assert.equal(new Set(pages.flat().map((r) => r.customer_id)).size, 95);
      } finally {
        await source.close?.();
      }
    });
  });
}
