import assert from 'node:assert/strict';
import nock from 'nock';
import { PageWalkUnstable } from '../../connectors/source.js';
import { createRestSource } from '../../connectors/rest/source.js';
import { BASE, collect, cursorPaging, fakeTime, offsetPaging, pagePaging, PATH, records, rejection, restSource, restStream, testDeps, useNock } from './fixtures.js';

type Row = { customer_id: string; v?: number };

/**
 * A partner list answered by page/per_page or offset/limit from `rows` as it is at each request;
 * `before(n)` runs before the n-th request (1-based) is answered. `overlap`: every page after the
 * first starts with the last record of the page before (a partner's habit, not a change).
 */
function partner(rows: Row[], options: { total?: boolean; overlap?: boolean; before?: (request: number) => void } = {}) {
  let requests = 0;
  nock(BASE)
    .persist()
    .get(PATH)
    .query(true)
    .reply((uri) => {
      requests += 1;
      options.before?.(requests);
      const q = new URL(uri, BASE).searchParams;
      const size = Number(q.get('per_page') ?? q.get('limit'));
      let start = q.has('page') ? (Number(q.get('page')) - 1) * size : Number(q.get('offset'));
      if (options.overlap && start > 0) start -= q.has('page') ? Number(q.get('page')) - 1 : 0;
      const data = rows.slice(start, start + size);
      return [200, { data, meta: options.total === false ? {} : { total: rows.length } }];
    });
  return { requests: () => requests };
}

const ids = (pages: unknown[][]): string[] => pages.flat().map((r) => (r as Row).customer_id);

describe('rest source: records shifting between pages', () => {
  useNock();

  it('nothing changes: one walk, as many requests as pages plus the closing empty page, no re-walk counted', async () => {
    const served = partner(records('a', 'b', 'c', 'd', 'e'));
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    assert.deepEqual(ids(await collect(source, restStream(pagePaging(2)))), ['a', 'b', 'c', 'd', 'e']);
    assert.equal(served.requests(), 4);
    assert.equal(source.stats.pageRewalks, undefined);
  });

  it('a record inserted before the page being read: meta.total changes, the window is walked again and the record is yielded once', async () => {
    const rows = records('b', 'c', 'd', 'e');
    const served = partner(rows, { before: (n) => { if (n === 2) rows.unshift({ customer_id: 'a' }); } });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const pages = await collect(source, restStream(pagePaging(2)));
    // Walk 1: b c | c d (shifted) | e | (empty); walk 2: a b c d e, of which only a is new.
    assert.deepEqual(ids(pages), ['b', 'c', 'c', 'd', 'e', 'a']);
    assert.equal(served.requests(), 4 + 4);
    assert.equal(source.stats.pageRewalks, 1);
  });

  it('offset/limit: a record deleted before the offset being read makes the next one slide back; the re-walk reads it', async () => {
    const rows = records('a', 'b', 'c', 'd', 'e');
    partner(rows, { before: (n) => { if (n === 2) rows.splice(0, 1); } });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const seen = ids(await collect(source, restStream(offsetPaging(2))));
    // Walk 1 reads a b | d e: c slid onto offset 1, already read.
    assert.deepEqual(seen, ['a', 'b', 'd', 'e', 'c']);
    assert.equal(source.stats.pageRewalks, 1);
  });

  it('a record changed and moved to the end of the ordering comes back changed: a re-walk, even with meta.total unchanged', async () => {
    const rows: Row[] = records('a', 'b', 'c', 'd', 'e');
    partner(rows, {
      before: (n) => {
        if (n !== 2) return;
        rows.push({ customer_id: 'a', v: 2 });
        rows.splice(0, 1);
      },
    });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const seen = ids(await collect(source, restStream(pagePaging(2))));
    // Walk 1: a b | d e | a(v2): c slid onto page 1.
    assert.ok(seen.includes('c'), JSON.stringify(seen));
    assert.equal(source.stats.pageRewalks, 1);
  });

  it('the last record repeated first on the next page while meta.total holds: no shift, no extra request', async () => {
    const served = partner(records('a', 'b', 'c', 'd'), { overlap: true });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    assert.deepEqual(ids(await collect(source, restStream(pagePaging(2)))), ['a', 'b', 'b', 'c', 'c', 'd', 'd']);
    assert.equal(served.requests(), 5);
    assert.equal(source.stats.pageRewalks, undefined);
  });

  it('without meta.total, repeats are a possible shift: one re-walk, which comes back the same and is trusted', async () => {
    const served = partner(records('a', 'b', 'c'), { overlap: true, total: false });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const seen = ids(await collect(source, restStream(pagePaging(2))));
    assert.deepEqual(seen, ['a', 'b', 'b', 'c', 'c'], 'the re-walk yields nothing already yielded');
    assert.equal(served.requests(), 2 * 4);
    assert.equal(source.stats.pageRewalks, 1);
  });

  it('per_page records inserted at once make a page repeat: a shift, not endless pagination', async () => {
    const rows = records('c', 'd', 'e');
    partner(rows, { before: (n) => { if (n === 2) rows.unshift(...records('a', 'b')); } });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const seen = ids(await collect(source, restStream(pagePaging(2))));
    assert.deepEqual([...new Set(seen)].sort(), ['a', 'b', 'c', 'd', 'e']);
    assert.equal(source.stats.pageRewalks, 1);
  });

  it('records that never hold still: PageWalkUnstable after the allowed walks, each re-walk counted', async () => {
    const rows = records('a', 'b', 'c', 'd');
    let n = 0;
    const served = partner(rows, { before: () => rows.unshift({ customer_id: `new-${++n}` }) });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const error = await rejection(collect(source, restStream(pagePaging(2))));
    assert.ok(error instanceof PageWalkUnstable, String(error));
    assert.match(error.message, /kept shifting between pages over 3 walks of the window \(last: meta\.total went from \d+ to \d+/);
    assert.ok(served.requests() >= 3 * 2);
    assert.equal(source.stats.pageRewalks, 2);
  });

  it('cursor pagination is not watched: a changing meta.total costs no re-walk', async () => {
    let n = 0;
    const scope = nock(BASE)
      .get(PATH)
      .query(true)
      .times(2)
      .reply(() => {
        n += 1;
        return [200, { data: records(`r${n}`), meta: { total: 10 + n, ...(n === 1 ? { next_cursor: 'k1' } : {}) } }];
      });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    assert.deepEqual(ids(await collect(source, restStream(cursorPaging()))), ['r1', 'r2']);
    assert.ok(scope.isDone());
    assert.equal(source.stats.pageRewalks, undefined);
  });
});
