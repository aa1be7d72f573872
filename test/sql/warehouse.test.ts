import assert from 'node:assert/strict';
import type { DaysWindow } from '../../connectors/source.js';
import { SourceError } from '../../connectors/source.js';
import { createWarehouseSource } from '../../connectors/warehouse/source.js';
import { DATABASES, deps, readAll, rejection, SERVER_DATABASES, useDatabase, viewStream, warehouseSource, type TestDatabase } from './databases.js';

const utcDay = (offsetDays: number): string => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

async function activityView(db: TestDatabase): Promise<void> {
  const { sql } = db;
  await db.exec(`CREATE TABLE activity_facts (date ${sql.date} NOT NULL, customer_id ${sql.text} NOT NULL, game_type ${sql.text} NOT NULL, currency ${sql.text} NOT NULL, total_bets ${sql.decimal}, wins ${sql.decimal}, internal_note ${sql.text})`);
  await db.exec('CREATE VIEW activity_v AS SELECT date, customer_id, game_type, currency, total_bets, wins, internal_note FROM activity_facts');
}

for (const backend of DATABASES) {
  describe(`warehouse source: ${backend.client}`, () => {
    const db = useDatabase(backend);

    it('reads a view by date partition, several days per query, only closed days', async () => {
      await activityView(db());
      const days = [-5, -4, -3, -2, -1, 0].map(utcDay);
      for (const [i, day] of days.entries()) {
        await db().exec('INSERT INTO activity_facts VALUES (?, ?, ?, ?, ?, ?, ?)', [day, `c${i}`, 'slots', 'EUR', `${i}.50`, '1.00', 'not for partners']);
      }
      const source = createWarehouseSource(warehouseSource(db(), { days_per_query: 3 }), deps());
      try {
        const window: DaysWindow = { kind: 'days', from: days[1] as string, to: days[3] as string };
        const records = (await readAll(source.pages(viewStream(), window))).flat();
        assert.deepEqual(records.map((r) => r.customer_id).sort(), ['c1', 'c2', 'c3']);
        assert.deepEqual(records.find((r) => r.customer_id === 'c2'), { date: days[2], customer_id: 'c2', game_type: 'slots', currency: 'EUR', total_bets: 2.5, wins: 1, internal_note: 'not for partners' });
        // Without passthrough only the mapped columns (and the day) are selected.
        const explicit = viewStream({ mapping: { passthrough: false, fields: { date: 'date', customer_id: 'customer_id', game_type: 'game_type', currency: { const: 'EUR' }, total_bets: { from: 'total_bets' } } } });
        const narrow = (await readAll(source.pages(explicit, { kind: 'days', from: days[4] as string, to: days[4] as string }))).flat();
        assert.deepEqual(narrow, [{ date: days[4], customer_id: 'c4', game_type: 'slots', total_bets: 4.5 }]);

        // Today is not closed by the warehouse's clock; neither is a window reaching it.
        for (const open of [{ from: days[5], to: days[5] }, { from: days[4], to: days[5] }, { from: utcDay(1), to: utcDay(1) }]) {
          const error = await rejection(readAll(source.pages(viewStream(), { kind: 'days', ...open } as DaysWindow)));
          assert.ok(error instanceof SourceError);
          assert.match(error.message, new RegExp(`streams\\.activity \\(view activity_v\\): days ${open.from}\\.\\.${open.to} are not all closed: the warehouse's day is ${days[5]} \\(UTC\\)`));
        }
        const cursor = await rejection(readAll(source.pages(viewStream(), { kind: 'cursor', from: '2024-05-01T00:00:00Z', to: '2024-05-02T00:00:00Z' })));
        assert.match(cursor.message, /the warehouse reads closed days, not a cursor window/);
        assert.throws(() => source.pages(viewStream({ incremental: { mode: 'cursor', cursor_field: 'date', lookback_ms: 0, start: '' } }), { kind: 'days', from: days[1] as string, to: days[1] as string }), /streams\.activity: a warehouse stream is read by closed days: set incremental\.mode to daily/);
      } finally {
        await source.close?.();
      }
    });

    it('inspect: a missing view, a missing column, an incompatible type', async () => {
      await activityView(db());
      const { sql } = db();
      await db().exec(`CREATE VIEW customers_v AS SELECT customer_id, ${backend.client === 'sqlite' ? "'2024-05-01 10:00:00'" : 'now()'} AS modified_day, total_bets AS email FROM activity_facts`);
      const source = createWarehouseSource(warehouseSource(db()), deps());
      try {
        assert.deepEqual(await source.inspect?.(viewStream()), []);
        assert.deepEqual(await source.inspect?.(viewStream({ view: 'activity_missing' })), ['streams.activity.view: view activity_missing does not exist (or this user cannot read it)']);
        const wrongDay = await source.inspect?.(viewStream({ date_column: 'day' }));
        assert.deepEqual(wrongDay, ['streams.activity.view activity_v: column day (date_column) does not exist; its columns: date, customer_id, game_type, currency, total_bets, wins, internal_note']);
        const mapped = await source.inspect?.(viewStream({ mapping: { passthrough: true, fields: { ggr: 'gross_revenue', bets_count: 'game_type' } } }));
        assert.deepEqual(mapped, [
          'streams.activity.view activity_v: column gross_revenue (mapping.fields.ggr) does not exist; its columns: date, customer_id, game_type, currency, total_bets, wins, internal_note',
          `streams.activity.view activity_v: column game_type (mapping.fields.bets_count) has type ${backend.client === 'mysql' ? 'VARCHAR' : sql.text}: a ${backend.client === 'mysql' ? 'VARCHAR' : sql.text} column gives text; the field needs an integer: add number: true to the rule (bets_count is a spec integer field)`,
        ]);
        if (backend.client !== 'sqlite') {
          const customers = await source.inspect?.(viewStream({ entity: 'customers', view: 'customers_v', date_column: 'modified_day', mapping: { passthrough: false, fields: { customer_id: 'customer_id', email: 'email' } } }));
          // A date-time day column is read by its UTC days' ranges (below); only the e-mail's type is wrong.
          assert.equal(customers?.length, 1, customers?.join('\n'));
          assert.match(customers?.[0] ?? '', /column email \(mapping\.fields\.email\) has type (DECIMAL|numeric): a (DECIMAL|numeric) column gives numbers with a fraction; the field needs text/);
        }
      } finally {
        await source.close?.();
      }
    });
  });
}

for (const backend of SERVER_DATABASES) {
  describe(`warehouse source: a date-time day column, ${backend.client}`, () => {
    const db = useDatabase(backend);

    it("reads each UTC day as the range of its instants, a zone-less column's bounds in the source's zone, an instant column's in UTC", async () => {
      const zoneless = backend.client === 'mysql' ? 'DATETIME' : 'timestamp';
      const instant = backend.client === 'mysql' ? 'TIMESTAMP NULL' : 'timestamptz';
      await db().exec(`CREATE TABLE changes (customer_id VARCHAR(10) NOT NULL, local_ts ${zoneless} NOT NULL, utc_ts ${instant})`);
      await db().exec('CREATE VIEW changes_v AS SELECT customer_id, local_ts, utc_ts FROM changes');
      // New York wall times (UTC-5 in January) and the same instants in UTC: day D runs 19:00 the evening before to 19:00.
      const rows: [string, string, string][] = [
        ['a', '2025-01-09 18:59:59', '2025-01-09 23:59:59'],
        ['b', '2025-01-09 19:00:00', '2025-01-10 00:00:00'],
        ['c', '2025-01-10 18:59:59', '2025-01-10 23:59:59'],
        ['d', '2025-01-10 19:00:00', '2025-01-11 00:00:00'],
      ];
      for (const [id, local, utc] of rows) await db().exec(`INSERT INTO changes VALUES ('${id}', '${local}', '${utc}${backend.client === 'mysql' ? '' : '+00'}')`);
      const stream = (column: string) => viewStream({ entity: 'customers', view: 'changes_v', date_column: column, mapping: { passthrough: false, fields: { customer_id: 'customer_id', last_modified_date: column } } });
      const source = createWarehouseSource(warehouseSource(db(), { timezone: 'America/New_York' }), deps());
      try {
        const day = async (column: string) => (await readAll(source.pages(stream(column), { kind: 'days', from: '2025-01-10', to: '2025-01-10' }))).flat().map((r) => r.customer_id).sort();
        assert.deepEqual(await day('local_ts'), ['b', 'c'], 'the local column: 2025-01-10 UTC is 2025-01-09 19:00 .. 2025-01-10 19:00 in New York');
        assert.deepEqual(await day('utc_ts'), ['b', 'c'], 'the instant column: bounds in UTC');
      } finally {
        await source.close?.();
      }
    });
  });

  describe(`warehouse source: statement timeout, ${backend.client}`, () => {
    const db = useDatabase(backend);

    it('a view slower than statement_timeout_ms fails with a clear SourceError', async function () {
      // A PostgreSQL server under libfaketime (scripts/faketime-suite.sh) never fires statement_timeout:
      // its SIGALRM handler reads the real time, before the faked deadline, and waits again. Only there.
      if (backend.client === 'postgres' && process.env.TEST_PG_FAKETIME === '1') this.skip();
      const sleep = backend.client === 'mysql' ? 'SLEEP(2)' : '(SELECT 1 FROM pg_sleep(2))';
      await db().exec(`CREATE TABLE facts (date ${db().sql.date} NOT NULL, customer_id ${db().sql.text})`);
      await db().exec('INSERT INTO facts VALUES (?, ?)', [utcDay(-2), 'c1']);
      await db().exec(`CREATE VIEW slow_v AS SELECT date, customer_id, ${sleep} AS slept FROM facts`);
      const source = createWarehouseSource(warehouseSource(db(), { statement_timeout_ms: 500 }), deps());
      try {
        const started = Date.now();
        const error = await rejection(readAll(source.pages(viewStream({ view: 'slow_v' }), { kind: 'days', from: utcDay(-2), to: utcDay(-2) })));
        const elapsed = Date.now() - started;
        assert.ok(error instanceof SourceError, String(error));
        assert.match(error.message, /^streams\.activity \(view slow_v\), days \d{4}-\d{2}-\d{2}: cancelled by the statement timeout of 500 ms \(source\.statement_timeout_ms\)/);
        assert.ok(elapsed < 1800, `cancelled after ${elapsed} ms, before the 2 s sleep ended`);
        // The connection is usable afterwards.
        await db().exec('DROP VIEW slow_v');
        await db().exec(`CREATE VIEW slow_v AS SELECT date, customer_id FROM facts`);
        assert.equal((await readAll(source.pages(viewStream({ view: 'slow_v' }), { kind: 'days', from: utcDay(-2), to: utcDay(-2) }))).flat().length, 1);
      } finally {
        await source.close?.();
      }
    });
  });
}

for (const backend of SERVER_DATABASES) {
  describe(`warehouse source in local time (Europe/Malta): ${backend.client}`, () => {
    const db = useDatabase(backend);

    it('a local DATETIME/timestamp is read in the declared zone by us (the session stays in UTC), an instant column as the instant', async () => {
      const local = backend.client === 'mysql' ? 'DATETIME(6)' : 'timestamp(6)';
      const instant = backend.client === 'mysql' ? 'TIMESTAMP(6) NULL' : 'timestamptz';
      await db().exec(`CREATE TABLE tx_facts (modified_day DATE NOT NULL, transaction_id VARCHAR(20) NOT NULL, made ${local} NOT NULL, booked ${instant})`);
      await db().exec('CREATE VIEW tx_v AS SELECT modified_day, transaction_id, made, booked FROM tx_facts');
      // The repeated hour of 2026-10-25: 02:30 local is read as its later pass (CET), 01:30Z; booked is written in UTC.
      await db().exec('INSERT INTO tx_facts VALUES (?, ?, ?, ?), (?, ?, ?, ?)', ['2026-10-25', 't1', '2026-10-25 02:30:00.5', '2026-10-25 01:30:00.5', '2026-10-25', 't2', '2026-10-25 12:00:00', '2026-10-25 11:00:00']);
      const source = createWarehouseSource(warehouseSource(db(), { timezone: 'Europe/Malta' }), deps());
      try {
        const records = (await readAll(source.pages(viewStream({ entity: 'transactions', view: 'tx_v', date_column: 'modified_day' }), { kind: 'days', from: '2026-10-25', to: '2026-10-25' }))).flat();
        assert.deepEqual(records.sort((a, b) => String(a.transaction_id).localeCompare(String(b.transaction_id))), [
          { modified_day: '2026-10-25', transaction_id: 't1', made: '2026-10-25T01:30:00.500000Z', booked: '2026-10-25T01:30:00.500000Z' },
          { modified_day: '2026-10-25', transaction_id: 't2', made: '2026-10-25T11:00:00.000000Z', booked: '2026-10-25T11:00:00.000000Z' },
        ]);
      } finally {
        await source.close?.();
      }
    });
  });
}
