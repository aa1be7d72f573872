import assert from 'node:assert/strict';
import { checkStreamQuery, createDbSource } from '../../connectors/db/source.js';
import { SourceError, type CursorWindow } from '../../connectors/source.js';
import { createWarehouseSource } from '../../connectors/warehouse/source.js';
import { SQL_DIALECTS } from '../../connectors/sql/dialects.js';
import { columnIdentifier, relationIdentifier } from '../../connectors/sql/identifiers.js';
import { openSqlConnection } from '../../connectors/sql/connection.js';
import type { DbSource } from '../../src/config/definition.js';
import { createRedactor } from '../../src/config/redact.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import { cursorStream, dailyStream, DATABASES, dbSource, deps, readAll, rejection, useDatabase, viewStream } from './databases.js';

const WINDOW: CursorWindow = { kind: 'cursor', from: '2024-05-01T00:00:00.000Z', to: '2024-05-02T00:00:00.000Z' };
const MALICIOUS = ['x; DROP TABLE t', 't--', '"t"', '`t`', "t' OR '1'='1", 't /* */', 'a.b.c', '1t', 't\u0000', ''];

describe('sql identifiers', () => {
  it('plain names, optionally qualified once, are quoted per dialect', () => {
    assert.equal(relationIdentifier('crm.accounts', 'streams.customers.table', SQL_DIALECTS.mysql).sql, '`crm`.`accounts`');
    assert.equal(relationIdentifier('crm.accounts', 'streams.customers.table', SQL_DIALECTS.postgres).sql, '"crm"."accounts"');
    const column = columnIdentifier('a.updated_at', 'streams.customers.cursor_column', SQL_DIALECTS.sqlite);
    assert.deepEqual([column.sql, column.name, column.nameSql], ['"a"."updated_at"', 'updated_at', '"updated_at"']);
  });

  it('anything else is refused with the definition field that holds it', () => {
    for (const value of MALICIOUS) {
      assert.throws(
        () => relationIdentifier(value, 'streams.customers.table', SQL_DIALECTS.postgres),
        (error: Error) => error instanceof SourceError && error.message.startsWith(`streams.customers.table: ${JSON.stringify(value)} is not a`),
        value,
      );
    }
    assert.throws(() => columnIdentifier('x'.repeat(65), 'streams.customers.cursor_column', SQL_DIALECTS.mysql), /is longer than 64 characters, the most mysql accepts/);
  });
});

describe('db stream queries', () => {
  const allowed = ['from', 'to', 'cursor', 'id', 'limit'];
  it('named parameters are read outside quotes, comments and casts; anything knex would misplace is refused', () => {
    const { sql, params } = checkStreamQuery("SELECT a.*, 'x:y' AS label FROM a -- note\nWHERE a.updated_at::timestamp >= :from AND a.updated_at < :to;  ", allowed, 'streams.customers.query');
    assert.equal(sql, "SELECT a.*, 'x:y' AS label FROM a -- note\nWHERE a.updated_at::timestamp >= :from AND a.updated_at < :to");
    assert.deepEqual([...params], ['from', 'to']);
    assert.throws(() => checkStreamQuery("SELECT * FROM a WHERE note = 'since :from'", allowed, 'streams.customers.query'), /streams\.customers\.query: :from inside quotes or a comment would still be replaced/);
    assert.throws(() => checkStreamQuery('SELECT * FROM a /* :to */ WHERE x >= :from', allowed, 'q'), /:to inside quotes or a comment/);
    assert.throws(() => checkStreamQuery('SELECT * FROM a WHERE x = ?', allowed, 'q'), /\? is read as a positional placeholder/);
    assert.throws(() => checkStreamQuery('SELECT * FROM a WHERE x >= :since', allowed, 'q'), /unknown parameter :since; this query may use :from, :to, :cursor, :id, :limit/);
    assert.throws(() => checkStreamQuery('UPDATE a SET x = 1', allowed, 'q'), /must be one SELECT/);
  });
});

describe('sql sources: definitions cannot inject SQL', () => {
  // Port 1 refuses connections: reaching it would fail differently from an identifier check.
  const unreachable: DbSource = { type: 'db', client: 'postgres', url: 'postgres://reader@127.0.0.1:1/none', page_size: 100, safety_lag_ms: 0, timezone: 'UTC', statement_timeout_ms: 1000, run_budget_ms: 60_000 };

  it('a malicious table, column or view name is refused before any SQL runs', async () => {
    const source = createDbSource(unreachable, deps());
    const warehouse = createWarehouseSource({ type: 'warehouse', client: 'postgres', url: unreachable.url, statement_timeout_ms: 1000, days_per_query: 1, timezone: 'UTC', run_budget_ms: 60_000 }, deps());
    try {
      for (const value of ['x; DROP TABLE t', 't--', '"t"']) {
        const streams = [
          [cursorStream({ table: value }), 'table'],
          [cursorStream({ cursor_column: value }), 'cursor_column'],
          [cursorStream({ tiebreak_column: value }), 'tiebreak_column'],
          [dailyStream({ table: 'daily', date_column: value }), 'date_column'],
        ] as const;
        for (const [stream, field] of streams) {
          const window = stream.incremental.mode === 'cursor' ? WINDOW : { kind: 'days' as const, from: '2024-05-01', to: '2024-05-01' };
          const message = new RegExp(`streams\\.${stream.entity}\\.${field}: ${JSON.stringify(value).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not a plain SQL identifier`);
          assert.throws(() => source.pages(stream, window), message);
          await assert.rejects(async () => source.bound?.(stream, window), message);
          await assert.rejects(async () => source.inspect?.(stream), message);
        }
        assert.throws(() => warehouse.pages(viewStream({ view: value }), { kind: 'days', from: '2024-05-01', to: '2024-05-01' }), /^SourceError: streams\.activity\.view: .* is not a plain SQL identifier/);
      }
      assert.equal(source.stats.requests, 0);
      assert.equal(warehouse.stats.requests, 0);
    } finally {
      await source.close?.();
      await warehouse.close?.();
    }
  });

  it('connection errors carry no password: the URL is masked and redacted', async () => {
    const url = 'postgres://reader:S3cret-pass@127.0.0.1:1/none';
    const source = createDbSource({ ...unreachable, url }, { ...deps(), logger: silentLogger(), redact: createRedactor([url, 'S3cret-pass']) });
    try {
      const error = await rejection(readAll(source.pages(cursorStream(), WINDOW)));
      assert.ok(error instanceof SourceError);
      assert.match(error.message, /^streams\.customers \(table accounts\): connecting to postgres /);
      assert.ok(!error.message.includes('S3cret-pass'), error.message);
    } finally {
      await source.close?.();
    }
  });
});

for (const backend of DATABASES) {
  describe(`sql sources: values are bound, ${backend.client}`, () => {
    const db = useDatabase(backend);

    it("a value like '); DROP TABLE t; -- is data: bound as a keyset position, it reads on and the table stays", async () => {
      const { sql } = db();
      await db().exec(`CREATE TABLE t (ref ${backend.client === 'mysql' ? 'VARCHAR(64)' : sql.text} NOT NULL PRIMARY KEY, updated_at ${sql.datetime6} NOT NULL)`);
      const refs = ["'); DROP TABLE t; --", "a'; DELETE FROM t WHERE '1'='1", 'b\\"; DROP TABLE t; --', 'c:from :to ?'];
      for (const ref of refs) await db().exec('INSERT INTO t VALUES (?, ?)', [ref, '2024-05-01 10:00:00.000000']);
      // Page size 1: every value is bound back as :id for the next page.
      const source = createDbSource(dbSource(db(), { page_size: 1 }), deps());
      try {
        const read = (await readAll(source.pages(cursorStream({ table: 't', tiebreak_column: 'ref' }), WINDOW))).flat().map((r) => r.ref);
        assert.deepEqual([...read].sort(), [...refs].sort());
        assert.equal((await db().rows('SELECT COUNT(*) AS n FROM t')).length, 1);
        assert.equal(Number((await db().rows<{ n: unknown }>('SELECT COUNT(*) AS n FROM t'))[0]?.n), refs.length);
      } finally {
        await source.close?.();
      }
    });

    it('sessions are read-only: even a statement that reached the connection could not write', async () => {
      const { sql } = db();
      await db().exec(`CREATE TABLE t (id ${sql.bigint} NOT NULL PRIMARY KEY)`);
      const stats = { requests: 0, retries: 0, throttled: 0, waitedMs: 0 };
      const connection = openSqlConnection({ client: backend.client, url: db().url, timezone: 'UTC', statementTimeoutMs: 5000, redact: noRedaction, logger: silentLogger(), stats });
      const session = await connection.acquire('test');
      try {
        const error = await rejection(session.query('INSERT INTO t (id) VALUES (:id)', { id: 1 }, 'writing'));
        assert.ok(error instanceof SourceError);
        assert.match(error.message, /^writing: .*(READ ONLY|read-only|readonly)/i);
        assert.throws(() => createDbSource(dbSource(db()), deps()).pages(dailyStream({ query: 'DELETE FROM t WHERE :date_from <= :date_to' }), { kind: 'days', from: '2024-05-01', to: '2024-05-01' }), /a stream query must be one SELECT/);
      } finally {
        await session.release();
        await connection.close();
      }
      assert.equal((await db().rows('SELECT * FROM t')).length, 0);
    });
  });
}
