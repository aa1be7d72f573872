import assert from 'node:assert/strict';
import { createDbSource } from '../../connectors/db/source.js';
import { SourceError, type CursorWindow } from '../../connectors/source.js';
import { cursorStream, DATABASES, dbSource, deps, readAll, rejection, useDatabase, type TestDatabase } from './databases.js';

const WINDOW: CursorWindow = { kind: 'cursor', from: '2024-05-01T00:00:00.000Z', to: '2024-05-02T00:00:00.000Z' };

async function accounts(db: TestDatabase): Promise<void> {
  const { sql } = db;
  await db.exec(`CREATE TABLE accounts (id ${sql.bigint} NOT NULL PRIMARY KEY, updated_at ${sql.datetime6} NOT NULL, email ${sql.text})`);
  await db.exec('CREATE INDEX accounts_keyset ON accounts (updated_at, id)');
}

/** Inserts rows (id, updated_at as zone-less UTC text with 6 digits). */
async function insert(db: TestDatabase, rows: [number, string][]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    const chunk = rows.slice(i, i + 500);
    await db.exec(`INSERT INTO accounts (id, updated_at, email) VALUES ${chunk.map(() => '(?, ?, ?)').join(', ')}`, chunk.flatMap(([id, at]) => [id, at, `a${id}@example.com`]));
  }
}

const ids = (pages: Record<string, unknown>[][]): number[] => pages.flat().map((r) => Number(r.id));

for (const backend of DATABASES) {
  describe(`db source, cursor streams: ${backend.client}`, () => {
    const db = useDatabase(backend);

    it('walks every row of the window exactly once across keyset pages, 120 rows sharing one cursor value across page boundaries', async () => {
      await accounts(db());
      const rows: [number, string][] = [];
      let id = 1;
      rows.push([id++, '2024-04-30 23:59:59.999999']); // before the window
      rows.push([id++, '2024-05-01 00:00:00.000000']); // at `from`: included
      for (let i = 0; i < 60; i++) rows.push([id++, `2024-05-01 08:${String(i).padStart(2, '0')}:00.000000`]);
      // 120 rows with one value; ids interleaved with the others so order is by (c, id), not insertion.
      for (let i = 0; i < 120; i++) rows.push([1000 + i * 7, '2024-05-01 10:00:00.123456']);
      for (let i = 0; i < 70; i++) rows.push([id++, `2024-05-01 12:${String(i % 60).padStart(2, '0')}:${String(Math.floor(i / 60)).padStart(2, '0')}.5`]);
      rows.push([id++, '2024-05-02 00:00:00.000000']); // at `to`: excluded
      await insert(db(), rows);
      const source = createDbSource(dbSource(db(), { page_size: 50 }), deps());
      try {
        const pages = await readAll(source.pages(cursorStream(), WINDOW));
        const read = ids(pages);
        const expected = rows.filter(([, at]) => at >= '2024-05-01 00:00:00' && at < '2024-05-02').length;
        assert.equal(read.length, expected);
        assert.equal(new Set(read).size, read.length, 'no row twice');
        assert.ok(!read.includes(1) && !read.includes(id - 1), 'bounds: from included, to excluded');
        assert.ok(read.includes(2));
        assert.deepEqual(pages.map((p) => p.length), [50, 50, 50, 50, 50, 1]);
        // Ordered by (updated_at, id): the tied rows come in id order, across pages 2..4.
        const tied = pages.flat().filter((r) => r.updated_at === '2024-05-01T10:00:00.123456Z').map((r) => Number(r.id));
        assert.deepEqual(tied, Array.from({ length: 120 }, (_, i) => 1000 + i * 7));
        assert.equal(source.stats.requests >= 5, true);
      } finally {
        await source.close?.();
      }
    });

    it('continues after a stored keyset position, with rows sharing a cursor value across the cut; an open window reads past its upper bound; a position that is not one is refused', async () => {
      await accounts(db());
      const rows: [number, string][] = [];
      for (let i = 0; i < 30; i++) rows.push([i + 1, `2024-05-01 08:00:${String(i).padStart(2, '0')}.000001`]);
      for (let i = 0; i < 11; i++) rows.push([100 + i, '2024-05-01 09:00:00.500000']);
      rows.push([999, '2099-01-01 00:00:00.000000']);
      await insert(db(), rows);
      const source = createDbSource(dbSource(db(), { page_size: 7 }), deps());
      try {
        const read = async (window: CursorWindow, after?: string) => {
          const pages: { ids: number[]; next?: string }[] = [];
          for await (const page of source.cursorPages?.(cursorStream(), window, after) ?? []) pages.push({ ids: (page.records as Record<string, unknown>[]).map((r) => Number(r.id)), next: page.next });
          return pages;
        };
        const whole = await read(WINDOW);
        assert.equal(whole.flatMap((p) => p.ids).length, 41);
        assert.equal(whole.at(-1)?.next, undefined, 'the last page has no position after it');
        // Cut after page 5 (inside the rows sharing 09:00:00.5): the rest, nothing twice, nothing skipped.
        const rest = await read(WINDOW, whole[4]?.next);
        assert.deepEqual(rest.flatMap((p) => p.ids), whole.slice(5).flatMap((p) => p.ids));
        const open = await read({ ...WINDOW, open: true });
        assert.deepEqual(open.flatMap((p) => p.ids).at(-1), 999, 'an open window reads a row stamped 2099');
        await assert.rejects(async () => read(WINDOW, '{"cursor":"x"}'), (e: Error) => e.name === 'PositionRefused' && /is not a keyset position \[cursor, tie-breaker\]/.test(e.message));
      } finally {
        await source.close?.();
      }
    });

    it('keeps microseconds: rows 1 µs apart are distinct, ordered, and emitted with 6 fraction digits', async () => {
      await accounts(db());
      const stamps = ['2024-05-01 10:00:00.000000', '2024-05-01 10:00:00.000001', '2024-05-01 10:00:00.000002', '2024-05-01 10:00:00.999999', '2024-05-01 10:00:01.000000'];
      await insert(db(), stamps.map((at, i) => [i + 1, at]));
      // Page size 1: every continuation binds a cursor 1 µs from the next row's.
      const source = createDbSource(dbSource(db(), { page_size: 1 }), deps());
      try {
        const records = (await readAll(source.pages(cursorStream(), { kind: 'cursor', from: '2024-05-01T10:00:00.000001Z', to: '2024-05-01T10:00:00.999999Z' }))).flat();
        assert.deepEqual(records.map((r) => r.updated_at), ['2024-05-01T10:00:00.000001Z', '2024-05-01T10:00:00.000002Z']);
        const all = (await readAll(source.pages(cursorStream(), WINDOW))).flat();
        assert.deepEqual(all.map((r) => r.updated_at), stamps.map((s) => s.replace(' ', 'T') + 'Z'));
      } finally {
        await source.close?.();
      }
    });

    it('bound: the upper bound is the source clock minus safety_lag; a row stamped after it is left for the next run', async () => {
      await accounts(db());
      const { sql } = db();
      await db().exec(`INSERT INTO accounts (id, updated_at) VALUES (1, ${sql.nowPlus(-120)}), (2, ${sql.nowPlus(-5)})`);
      const source = createDbSource(dbSource(db(), { safety_lag_ms: 30_000 }), deps());
      try {
        const now = Date.now();
        const asked: CursorWindow = { kind: 'cursor', from: new Date(now - 3_600_000).toISOString(), to: new Date(now + 3_600_000).toISOString() };
        const bounded = await source.bound?.(cursorStream(), asked);
        assert.ok(bounded && bounded.kind === 'cursor');
        assert.equal(bounded.from, asked.from);
        assert.match(bounded.to, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
        const to = Date.parse(bounded.to);
        assert.ok(Math.abs(to - (now - 30_000)) < 5_000, `bound ${bounded.to} is the source's now minus 30 s`);
        assert.deepEqual(ids(await readAll(source.pages(cursorStream(), bounded))), [1]);
        // A window that ends before the source's clock minus the lag is left as asked; days windows too.
        const early: CursorWindow = { kind: 'cursor', from: '2024-05-01T00:00:00.000Z', to: '2024-05-01T01:00:00.000Z' };
        assert.deepEqual(await source.bound?.(cursorStream(), early), early);
        assert.deepEqual(await source.bound?.(cursorStream(), { kind: 'days', from: '2024-05-01', to: '2024-05-01' }), { kind: 'days', from: '2024-05-01', to: '2024-05-01' });
      } finally {
        await source.close?.();
      }
    });

    it('all pages of a window come from one snapshot: a row committed between pages is not seen', async () => {
      await accounts(db());
      await insert(db(), Array.from({ length: 30 }, (_, i): [number, string] => [i + 1, `2024-05-01 10:00:${String(i).padStart(2, '0')}.000000`]));
      const source = createDbSource(dbSource(db(), { page_size: 10 }), deps());
      try {
        const read: number[] = [];
        let first = true;
        for await (const page of source.pages(cursorStream(), WINDOW)) {
          read.push(...(page as { id: unknown }[]).map((r) => Number(r.id)));
          if (first) {
            first = false;
            // Behind the keyset and ahead of it: neither may appear in this read.
            await insert(db(), [[100, '2024-05-01 10:00:25.500000'], [101, '2024-05-01 10:00:00.500000']]);
          }
        }
        assert.deepEqual(read, Array.from({ length: 30 }, (_, i) => i + 1));
        // The next read sees them.
        assert.equal(ids(await readAll(source.pages(cursorStream(), WINDOW))).length, 32);
      } finally {
        await source.close?.();
      }
    });

    it('ending a read early releases its snapshot and connection', async () => {
      await accounts(db());
      await insert(db(), Array.from({ length: 50 }, (_, i): [number, string] => [i + 1, `2024-05-01 10:00:${String(i).padStart(2, '0')}.000000`]));
      const source = createDbSource(dbSource(db(), { page_size: 10 }), deps());
      try {
        for (let round = 0; round < 4; round++) {
          for await (const page of source.pages(cursorStream(), WINDOW)) {
            assert.equal(page.length, 10);
            break;
          }
        }
        assert.equal(ids(await readAll(source.pages(cursorStream(), WINDOW))).length, 50);
      } finally {
        await source.close?.();
      }
    });

    it('a query paged by the source (no :cursor/:id/:limit) and a self-paging query read what the table does', async () => {
      await accounts(db());
      const rows = Array.from({ length: 45 }, (_, i): [number, string] => [i + 1, `2024-05-01 1${i % 3}:00:00.000000`]);
      await insert(db(), rows);
      const source = createDbSource(dbSource(db(), { page_size: 7 }), deps());
      try {
        const table = ids(await readAll(source.pages(cursorStream(), WINDOW)));
        assert.equal(table.length, 45);
        const wrapped = cursorStream({ table: undefined, query: 'SELECT a.id, a.updated_at, a.email FROM accounts a WHERE a.updated_at >= :from AND a.updated_at < :to', cursor_column: 'a.updated_at', tiebreak_column: 'a.id' });
        assert.deepEqual(ids(await readAll(source.pages(wrapped, WINDOW))), table);
        const selfPaging = cursorStream({
          table: undefined,
          query: `SELECT id, updated_at, email FROM accounts
                  WHERE updated_at >= :from AND updated_at < :to
                    AND updated_at >= :cursor AND (updated_at > :cursor OR (updated_at = :cursor AND id > :id))
                  ORDER BY updated_at, id LIMIT :limit`,
        });
        assert.deepEqual(ids(await readAll(source.pages(selfPaging, WINDOW))), table);
      } finally {
        await source.close?.();
      }
    });

    it('a self-paging query that breaks the contract fails instead of looping or losing rows', async () => {
      await accounts(db());
      await insert(db(), Array.from({ length: 20 }, (_, i): [number, string] => [i + 1, `2024-05-01 10:00:${String(i).padStart(2, '0')}.000000`]));
      const source = createDbSource(dbSource(db(), { page_size: 5 }), deps());
      try {
        const ignoresKeyset = cursorStream({
          table: undefined,
          query: 'SELECT id, updated_at FROM accounts WHERE updated_at >= :from AND updated_at < :to AND (updated_at > :cursor OR (updated_at = :cursor AND id > :id) OR 1 = 1) ORDER BY updated_at, id LIMIT :limit',
        });
        const repeated = await rejection(readAll(source.pages(ignoresKeyset, WINDOW)));
        assert.ok(repeated instanceof SourceError);
        assert.match(repeated.message, /streams\.customers \(query\), page 2: row 1 does not come after the previous one in \(updated_at, id\)/);
        const partial = cursorStream({ table: undefined, query: 'SELECT * FROM accounts WHERE updated_at >= :cursor ORDER BY updated_at, id LIMIT :limit' });
        assert.throws(() => source.pages(partial, WINDOW), /streams\.customers\.query: uses :cursor, :limit but not :id/);
      } finally {
        await source.close?.();
      }
    });
  });
}

describe('db source, cursor streams: zone-less date-times in source.timezone', () => {
  const postgres = DATABASES.find((b) => b.client === 'postgres');
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await db?.drop();
    db = undefined;
  });

  it('PostgreSQL timestamp columns are read and bounded in Europe/Malta', async function () {
    if (!postgres) this.skip();
    db = await postgres.create();
    await db.exec('CREATE TABLE accounts (id bigint PRIMARY KEY, updated_at timestamp(6) NOT NULL)');
    // Malta is UTC+2 in May: local 10:00 is 08:00Z.
    await db.exec(`INSERT INTO accounts VALUES (1, '2024-05-01 01:59:59.999999'), (2, '2024-05-01 02:00:00.000001'), (3, '2024-05-01 10:00:00.25')`);
    const source = createDbSource(dbSource(db, { timezone: 'Europe/Malta' }), deps());
    try {
      const records = (await readAll(source.pages(cursorStream(), WINDOW))).flat();
      assert.deepEqual(records, [
        { id: 2, updated_at: '2024-05-01T00:00:00.000001Z' },
        { id: 3, updated_at: '2024-05-01T08:00:00.250000Z' },
      ]);
    } finally {
      await source.close?.();
    }
  });
});
