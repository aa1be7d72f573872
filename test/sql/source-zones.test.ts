/**
 * A replica in local time (Europe/Malta, with DST) on a real MariaDB and PostgreSQL: the sessions
 * stay in UTC and no named zone is ever sent to the server (every statement is recorded), local
 * wall times are read by us, around both DST changes, into the store with exact UTC stamps; an
 * instant column (MySQL TIMESTAMP, timestamptz) is read as the instant it is. Window bounds that
 * fall inside the repeated or the skipped hour select each row exactly once, in the window its
 * reading lies in. A cursor column written in another zone than declared fails `check` and warns
 * in the run.
 */
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import mysql from 'mysql2';
import pg from 'pg';
import { createDbSource } from '../../connectors/db/source.js';
import type { CursorWindow } from '../../connectors/source.js';
import { checkPartner } from '../../jobs/check-partner.js';
import { syncStream } from '../../jobs/sync-stream.js';
import type { DbSource, PartnerDefinition } from '../../src/config/definition.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import { toUtcTimestamp } from '../../src/kernel/timestamp.js';
import { createSpecValidator } from '../../src/spec/validator.js';
import { loaderWith } from '../support/loader.js';
import { STORES, type TestStore } from '../support/stores.js';
import { captureLogger } from '../worker/support/log-capture.js';
import { cursorStream, dbSource, readAll, SERVER_DATABASES, useDatabase, type TestDatabase } from './databases.js';

const ZONE = 'Europe/Malta';
const validator = createSpecValidator();

/** Every statement and value the drivers send while `run` runs. */
async function recordStatements<T>(run: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const sent: string[] = [];
  const mysqlProto = mysql.Connection.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const pgProto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const mysqlQuery = mysqlProto.query;
  const pgQuery = pgProto.query;
  const note = (args: unknown[]) => {
    const [first, second] = args;
    if (typeof first === 'string') sent.push(first);
    else if (first !== null && typeof first === 'object') {
      const q = first as { sql?: unknown; text?: unknown; values?: unknown };
      sent.push(String(q.sql ?? q.text ?? ''));
      if (Array.isArray(q.values)) sent.push(...q.values.map(String));
    }
    if (Array.isArray(second)) sent.push(...second.map(String));
  };
  mysqlProto.query = function (this: unknown, ...args: unknown[]) {
    note(args);
    return mysqlQuery.apply(this, args);
  };
  pgProto.query = function (this: unknown, ...args: unknown[]) {
    note(args);
    return pgQuery.apply(this, args);
  };
  try {
    return { result: await run(), sent };
  } finally {
    mysqlProto.query = mysqlQuery;
    pgProto.query = pgQuery;
  }
}

function definition(source: DbSource, stream = cursorStream({ table: 'players', cursor_column: 'last_modified_date', tiebreak_column: 'id', incremental: { mode: 'cursor', cursor_field: 'last_modified_date', lookback_ms: 0, start: '2026-01-01T00:00:00.000Z' } })): PartnerDefinition {
  return { partner: 'isle', variant: 'igaming', file: 'isle.yaml', source, streams: { customers: stream }, affiliates: { map: {}, unmapped: 'keep' }, secrets: [] };
}

async function players(db: TestDatabase): Promise<void> {
  const local = db.client === 'mysql' ? 'DATETIME(6)' : 'timestamp(6)';
  const instant = db.client === 'mysql' ? 'TIMESTAMP(6) NULL' : 'timestamptz';
  await db.exec(`CREATE TABLE players (id BIGINT NOT NULL PRIMARY KEY, customer_id VARCHAR(20) NOT NULL, signup_date ${instant}, affiliate_id VARCHAR(20) NOT NULL, last_modified_date ${local} NOT NULL)`);
  await db.exec('CREATE INDEX players_keyset ON players (last_modified_date, id)');
}

for (const backend of SERVER_DATABASES) {
  const name = backend.client === 'mysql' ? 'MariaDB' : 'PostgreSQL';
  describe(`a ${name} replica in local time (${ZONE}): converted by us, sessions in UTC`, function () {
    this.timeout(60_000);
    const db = useDatabase(backend);

    for (const storeBackend of STORES) {
      it(`loads local wall times around the autumn change into the ${storeBackend.name} store with exact UTC stamps; an instant column stays the instant; no named zone reaches the server`, async () => {
        await players(db());
        // Local Malta wall times (CEST +02:00 until 2026-10-25 01:00Z, then CET +01:00).
        const rows: [number, string, string][] = [
          [1, '2026-10-24 01:59:59.999999', '2026-10-23 23:59:59.999999'], // before the window's start (2026-10-24T00:00Z)
          [2, '2026-10-24 02:00:00', '2026-10-24 00:00:00'], // its start: included
          [3, '2026-10-25 01:30:00.5', '2026-10-24 23:30:00.5'],
          [4, '2026-10-25 02:30:00.25', '2026-10-25 01:30:00.25'], // the repeated hour: its later pass (CET)
          [5, '2026-10-25 03:00:00', '2026-10-25 02:00:00'],
          [6, '2026-10-26 00:59:59.999999', '2026-10-25 23:59:59.999999'], // the window's last microsecond
          [7, '2026-10-26 01:00:00', '2026-10-26 00:00:00'], // its end: excluded
        ];
        // signup_date is an instant column, written here in UTC (the test's session is in UTC).
        for (const [id, local, utc] of rows) await db().exec('INSERT INTO players VALUES (?, ?, ?, ?, ?)', [id, `c${id}`, utc, 'aff', local]);
        const store: TestStore = await storeBackend.create();
        const source = dbSource(db(), { timezone: ZONE, page_size: 2 });
        const replica = createDbSource(source, { clock: () => new Date('2026-12-01T00:00:00Z'), logger: silentLogger(), redact: noRedaction, variant: 'igaming' });
        try {
          const { result, sent } = await recordStatements(() =>
            syncStream({ loader: loaderWith(store.store, []), source: replica, logger: silentLogger(), redact: noRedaction }, definition(source), 'customers', { kind: 'backfill', from: '2026-10-24', to: '2026-10-25' }),
          );
          assert.equal(result.status, 'succeeded', result.error);
          const stored = (await store.store.knex('customers').where({ partner_id: 'isle' }).orderBy('customer_id').select('customer_id', 'signup_date', 'last_modified_date'))
            .map((r: Record<string, unknown>) => ({ customer_id: r.customer_id, signup_date: toUtcTimestamp(String(r.signup_date)), last_modified_date: toUtcTimestamp(String(r.last_modified_date)) }));
          assert.deepEqual(stored, [
            { customer_id: 'c2', signup_date: '2026-10-24T00:00:00.000000Z', last_modified_date: '2026-10-24T00:00:00.000000Z' },
            { customer_id: 'c3', signup_date: '2026-10-24T23:30:00.500000Z', last_modified_date: '2026-10-24T23:30:00.500000Z' },
            { customer_id: 'c4', signup_date: '2026-10-25T01:30:00.250000Z', last_modified_date: '2026-10-25T01:30:00.250000Z' },
            { customer_id: 'c5', signup_date: '2026-10-25T02:00:00.000000Z', last_modified_date: '2026-10-25T02:00:00.000000Z' },
            { customer_id: 'c6', signup_date: '2026-10-25T23:59:59.999999Z', last_modified_date: '2026-10-25T23:59:59.999999Z' },
          ]);
          assert.ok(sent.some((s) => /time_zone = '\+00:00'|TimeZone/.test(s)), 'the statements were recorded');
          assert.deepEqual(sent.filter((s) => /malta|europe|convert_tz|at time zone '(?!utc)/i.test(s)), [], 'no named zone and no zone conversion reaches the server');
        } finally {
          await replica.close?.();
          await store.drop();
        }
      });
    }

    it('window bounds inside the repeated and the skipped hour: every row read once, in the window its reading lies in', async () => {
      await players(db());
      const texts: string[] = [];
      // Every 10 minutes of wall time through both change nights, the skipped hour included (a clock that is wrong writes it).
      for (const night of ['2026-10-25', '2026-03-29']) {
        for (let m = 0; m < 5 * 60; m += 10) texts.push(`${night} ${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}:00`);
      }
      for (const [i, text] of texts.entries()) await db().exec('INSERT INTO players VALUES (?, ?, NULL, ?, ?)', [i + 1, `c${i + 1}`, 'aff', text]);
      const source = createDbSource(dbSource(db(), { timezone: ZONE, page_size: 4 }), { clock: () => new Date('2026-12-01T00:00:00Z'), logger: silentLogger(), redact: noRedaction });
      try {
        for (const night of ['2026-10-24T22:00:00Z', '2026-03-28T22:00:00Z']) {
          // Windows of 25 minutes: edges fall inside the hour that repeats (autumn) and at the change (spring).
          const seen = new Map<number, string>();
          const start = Date.parse(night);
          for (let w = 0; w < 20; w++) {
            const window: CursorWindow = { kind: 'cursor', from: new Date(start + w * 1_500_000).toISOString(), to: new Date(start + (w + 1) * 1_500_000).toISOString() };
            for (const record of (await readAll(source.pages(cursorStream({ table: 'players', cursor_column: 'last_modified_date', tiebreak_column: 'id' }), window))).flat()) {
              const id = Number(record.id);
              assert.ok(!seen.has(id), `row ${id} read twice`);
              const at = String(record.last_modified_date);
              assert.ok(at >= window.from.replace('Z', '000Z') && at < window.to.replace('Z', '000Z'), `row ${id} (${at}) read in window ${window.from}..${window.to}`);
              seen.set(id, at);
            }
          }
          const night0 = night.startsWith('2026-10') ? '2026-10-25' : '2026-03-29';
          const expected = texts.map((t, i) => [i + 1, t] as const).filter(([, t]) => t.startsWith(night0));
          assert.deepEqual([...seen.keys()].sort((a, b) => a - b), expected.map(([id]) => id), `every row of the night ${night0} read`);
          if (night0 === '2026-10-25') {
            // 02:10 local occurs twice: read as its later pass, 01:10Z; 01:50 is still summer time, 23:50Z.
            assert.equal(seen.get(expected.find(([, t]) => t.endsWith('02:10:00'))?.[0] ?? 0), '2026-10-25T01:10:00.000000Z');
            assert.equal(seen.get(expected.find(([, t]) => t.endsWith('01:50:00'))?.[0] ?? 0), '2026-10-24T23:50:00.000000Z');
          } else {
            // 02:30 local does not exist: read as the instant of the change; 03:00 is that instant too.
            assert.equal(seen.get(expected.find(([, t]) => t.endsWith('02:30:00'))?.[0] ?? 0), '2026-03-29T01:00:00.000000Z');
            assert.equal(seen.get(expected.find(([, t]) => t.endsWith('03:10:00'))?.[0] ?? 0), '2026-03-29T01:10:00.000000Z');
          }
        }
      } finally {
        await source.close?.();
      }
    });

    it('a cursor column written in Malta time while UTC is declared: check fails naming the stream, column, declared zone and measured offset; the run warns', async () => {
      await players(db());
      const clockSql = backend.client === 'mysql' ? 'SELECT UTC_TIMESTAMP(6) AS now' : `SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS now`;
      const [row] = await db().rows<{ now: string }>(clockSql);
      const now = DateTime.fromSQL(String(row?.now), { zone: 'UTC' });
      const malta = now.setZone(ZONE);
      const hours = malta.offset / 60;
      // The partner's application writes its local wall time; the definition says UTC.
      const written = malta.toFormat('yyyy-MM-dd HH:mm:ss.SSS');
      await db().exec('INSERT INTO players VALUES (1, ?, NULL, ?, ?), (2, ?, NULL, ?, ?)', ['c1', 'aff', malta.minus({ hours: 3 }).toFormat('yyyy-MM-dd HH:mm:ss.SSS'), 'c2', 'aff', written]);
      const source = dbSource(db(), { timezone: 'UTC' });
      const { logger, lines } = captureLogger();
      const checks = await checkPartner({ clock: () => now.toJSDate(), logger, redact: noRedaction, validator }, definition(source));
      const iso = `${written.replace(' ', 'T')}000Z`;
      const by = `${hours} h 00 min`;
      assert.deepEqual(checks.map((c) => [c.ok, c.detail]), [[
        false,
        `streams.customers: cursor column last_modified_date: its newest value reads ${iso} in UTC (UTC+00:00), about ${by} ahead of the source's clock: the column looks written in UTC+0${hours}:00, not in UTC; set source.timezone to the zone it is written in`,
      ]]);

      const replica = createDbSource(source, { clock: () => now.toJSDate(), logger, redact: noRedaction, variant: 'igaming' });
      const store = await (STORES[0] as (typeof STORES)[number]).create();
      try {
        const def = definition(source, cursorStream({ table: 'players', cursor_column: 'last_modified_date', tiebreak_column: 'id', incremental: { mode: 'cursor', cursor_field: 'last_modified_date', lookback_ms: 0, start: now.minus({ days: 1 }).toISO() ?? '' } }));
        const run = await syncStream({ loader: loaderWith(store.store, []), source: replica, logger, redact: noRedaction }, def, 'customers', { kind: 'run', scheduledFor: now.toJSDate() });
        assert.equal(run.status, 'succeeded', run.error);
        const warned = lines.filter((l) => l.level === 'warn' && /cursor column last_modified_date/.test(l.message)).map((l) => l.message);
        assert.deepEqual(warned, [`streams.customers (table players): cursor column last_modified_date: its newest value reads ${iso} in UTC (UTC+00:00), about ${by} ahead of the source's clock: the column looks written in UTC+0${hours}:00, not in UTC; set source.timezone to the zone it is written in`]);
      } finally {
        await replica.close?.();
        await store.drop();
      }
    });
  });
}
