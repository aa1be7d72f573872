/**
 * A replica through the sync job, as `run` drives it: bound by the replica's clock, keyset pages
 * committed as they load, the watermark at the bound and the greatest cursor value kept exactly;
 * whole days of activity. Into the embedded store.
 */
import assert from 'node:assert/strict';
import { createDbSource } from '../../connectors/db/source.js';
import { syncStream } from '../../jobs/sync-stream.js';
import { utcDay } from '../../jobs/windows.js';
import { addDays } from '../../src/kernel/dates.js';
import type { DbSource, PartnerDefinition } from '../../src/config/definition.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import { readState } from '../../src/store/sync-state.js';
import { toUtcTimestamp } from '../../src/kernel/timestamp.js';
import { loaderWith } from '../support/loader.js';
import { STORES, type TestStore } from '../support/stores.js';
import { cursorStream, DATABASES, dailyStream, dbSource, useDatabase } from './databases.js';

const sqliteStore = STORES.find((s) => s.name === 'sqlite');

for (const backend of DATABASES) {
  describe(`sync job over a db replica: ${backend.client} into the embedded store`, function () {
    this.timeout(60_000);
    const db = useDatabase(backend);
    let store: TestStore | undefined;
    beforeEach(async function () {
      if (!sqliteStore) this.skip();
      store = await sqliteStore.create();
    });
    afterEach(async () => {
      await store?.drop();
      store = undefined;
    });

    it('customers by keyset from the start on (a row inside the safety lag too), the start capped at the replica clock minus the lag, then whole days of activity', async () => {
      const { sql } = db();
      await db().exec(`CREATE TABLE players (id ${sql.bigint} NOT NULL PRIMARY KEY, customer_id ${sql.text} NOT NULL, signup_date ${sql.datetime6} NOT NULL, affiliate_id ${sql.text} NOT NULL, last_modified_date ${sql.datetime6} NOT NULL)`);
      for (let i = 1; i <= 23; i++) {
        // Stamped by the replica's own clock, an hour back.
        await db().exec(`INSERT INTO players VALUES (?, ?, ?, ?, ${sql.nowPlus(-3600 + Math.floor(i / 2))})`, [i, `c${i}`, '2024-05-01 10:00:00.000001', 'aff-1']);
      }
      await db().exec(`INSERT INTO players VALUES (99, 'c99', '2024-05-01 10:00:00', 'aff-1', ${sql.nowPlus(-2)})`); // inside the safety lag: read (windows are open-ended), but the start does not pass the lag
      await db().exec(`CREATE TABLE daily (date ${sql.date} NOT NULL, customer_id ${sql.text} NOT NULL, game_type ${sql.text} NOT NULL, currency ${sql.text} NOT NULL, total_bets ${sql.decimal}, wins ${sql.decimal})`);
      const yesterday = addDays(utcDay(new Date()), -1);
      for (const [day, customer, bets] of [[addDays(yesterday, -1), 'c1', '10.00'], [yesterday, 'c1', '5.25'], [yesterday, 'c2', '7.00']] as const) {
        await db().exec('INSERT INTO daily VALUES (?, ?, ?, ?, ?, ?)', [day, customer, 'slots', 'EUR', bets, '1.00']);
      }

      const source: DbSource = dbSource(db(), { page_size: 5, safety_lag_ms: 30_000 });
      const def: PartnerDefinition = {
        partner: 'replica',
        variant: 'igaming',
        file: 'replica.yaml',
        source,
        streams: {
          customers: cursorStream({ table: 'players', cursor_column: 'last_modified_date', tiebreak_column: 'id', incremental: { mode: 'cursor', cursor_field: 'last_modified_date', lookback_ms: 600_000, start: new Date(Date.now() - 86_400_000).toISOString() } }),
          activity: dailyStream({ table: 'daily', date_column: 'date', incremental: { mode: 'daily', late_days: 1, start: addDays(yesterday, -1) } }),
        },
        affiliates: { map: {}, unmapped: 'keep' },
        secrets: [],
      };
      const t = store as TestStore;
      const replica = createDbSource(source, { clock: () => new Date(), logger: silentLogger(), redact: noRedaction, variant: 'igaming' });
      try {
        const deps = { loader: loaderWith(t.store, []), source: replica, logger: silentLogger(), redact: noRedaction };
        const customers = await syncStream(deps, def, 'customers', { kind: 'run', scheduledFor: new Date() });
        assert.equal(customers.status, 'succeeded', customers.error);
        assert.deepEqual([customers.counts.pulled, customers.counts.loaded, customers.counts.rejected], [24, 24, 0]);
        const state = (await readState(t.store.knex, 'replica', 'customers')) as { watermark: string; max_cursor: string; start: string };
        assert.equal(state.watermark, customers.watermark);
        assert.ok(Math.abs(Date.parse(state.watermark) - (Date.now() - 30_000)) < 5_000, `watermark ${state.watermark} is the replica clock minus the lag`);
        // The row inside the lag is past the run's upper bound: it loads but does not move the start,
        // which goes to the greatest value written before the bound.
        const text = (v: unknown) => String(v instanceof Date ? v.toISOString() : v).replace(' ', 'T').slice(0, 19);
        const [before] = await db().rows<{ m: unknown }>('SELECT MAX(last_modified_date) AS m FROM players WHERE id <> 99');
        assert.ok(state.start < toUtcTimestamp(state.watermark), 'the start is not past the replica clock minus the lag');
        assert.equal(state.start.slice(0, 19), text(before?.m), 'the next window starts at the greatest value before the bound, not at the row inside the lag');
        const [last] = await db().rows<{ last_modified_date: unknown }>('SELECT last_modified_date FROM players WHERE id = 99');
        assert.equal(state.max_cursor.slice(0, 19), String(last?.last_modified_date instanceof Date ? last.last_modified_date.toISOString() : last?.last_modified_date).replace(' ', 'T').slice(0, 19));
        assert.match(state.max_cursor, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
        const stored = await t.store.knex('customers').where({ partner_id: 'replica' }).orderBy('customer_id').select('customer_id', 'signup_date');
        assert.equal(stored.length, 24);
        assert.equal(stored[0]?.signup_date, '2024-05-01T10:00:00.000001Z');

        const activity = await syncStream(deps, def, 'activity', { kind: 'run', scheduledFor: new Date() });
        assert.equal(activity.status, 'succeeded', activity.error);
        assert.deepEqual([activity.counts.loaded, activity.watermark], [3, yesterday]);
      } finally {
        await replica.close?.();
      }
    });
  });
}
