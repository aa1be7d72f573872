import assert from 'node:assert/strict';
import nock from 'nock';
import { SourceError } from '../../connectors/source.js';
import { paginate } from '../../connectors/rest/paginate.js';
import { createRestSource } from '../../connectors/rest/source.js';
import { silentLogger } from '../../src/log.js';
import { BASE, collect, cursorPaging, fakeTime, offsetPaging, pagePaging, PATH, records, rejection, restSource, restStream, testDeps, useNock } from './fixtures.js';

describe('rest source: pagination', () => {
  useNock();

  it('page/per_page: walks every page with the stream and window params, a short page does not stop it, an empty page does', async () => {
    const scope = nock(BASE)
      .get(PATH)
      .query({ status: 'all', modified_since: '2026-02-01T00:00:00Z', page: '1', per_page: '3' })
      .reply(200, { data: records('a', 'b', 'c'), meta: { page: 1, per_page: 3, total: 6 } })
      // Short page mid-way: the partner capped it; rows follow.
      .get(PATH)
      .query({ status: 'all', modified_since: '2026-02-01T00:00:00Z', page: '2', per_page: '3' })
      .reply(200, { data: records('d'), meta: { page: 2, per_page: 3, total: 6 } })
      .get(PATH)
      .query({ status: 'all', modified_since: '2026-02-01T00:00:00Z', page: '3', per_page: '3' })
      .reply(200, { data: records('e', 'f'), meta: { page: 3, per_page: 3, total: 6 } })
      .get(PATH)
      .query({ status: 'all', modified_since: '2026-02-01T00:00:00Z', page: '4', per_page: '3' })
      .reply(200, { data: [], meta: { page: 4, per_page: 3, total: 6 } });
    const time = fakeTime();
    const source = createRestSource(restSource(), testDeps(time));
    const pages = await collect(source, restStream(pagePaging(3), { params: { status: 'all' } }), { modified_since: '2026-02-01T00:00:00Z' });
    assert.deepEqual(pages, [records('a', 'b', 'c'), records('d'), records('e', 'f')]);
    assert.ok(scope.isDone());
    assert.equal(source.stats.requests, 4);
  });

  it('page/per_page: honours first_page and the configured parameter names', async () => {
    const scope = nock(BASE)
      .get(PATH)
      .query({ p: '0', size: '2' })
      .reply(200, { data: records('a') })
      .get(PATH)
      .query({ p: '1', size: '2' })
      .reply(200, { data: [] });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const pages = await collect(source, restStream({ type: 'page', per_page: 2, page_param: 'p', per_page_param: 'size', first_page: 0 }));
    assert.deepEqual(pages, [records('a')]);
    assert.ok(scope.isDone());
  });

  it('cursor: follows meta.next_cursor until it is absent; the first request has no cursor', async () => {
    const scope = nock(BASE)
      .get(PATH)
      .query({ per_page: '2' })
      .reply(200, { data: records('a', 'b'), meta: { next_cursor: 'c2' } })
      .get(PATH)
      .query({ per_page: '2', cursor: 'c2' })
      .reply(200, { data: records('c'), meta: { next_cursor: 'c3/+=' } })
      .get(PATH)
      .query({ per_page: '2', cursor: 'c3/+=' })
      .reply(200, { data: records('d', 'e'), meta: {} });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const pages = await collect(source, restStream(cursorPaging()));
    assert.deepEqual(pages, [records('a', 'b'), records('c'), records('d', 'e')]);
    assert.ok(scope.isDone());
  });

  it('cursor: an empty-string or null cursor ends the walk; a configured cursor_path and cursor_param are used', async () => {
    const scope = nock(BASE)
      .get(PATH)
      .query({ limit: '2' })
      .reply(200, { items: records('a'), paging: { after: 'x1' } })
      .get(PATH)
      .query({ limit: '2', after: 'x1' })
      .reply(200, { items: records('b'), paging: { after: '' } });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const stream = restStream({ type: 'cursor', per_page: 2, per_page_param: 'limit', cursor_param: 'after', cursor_path: 'paging.after' }, { records_path: 'items' });
    assert.deepEqual(await collect(source, stream), [records('a'), records('b')]);
    assert.ok(scope.isDone());

    nock(BASE).get(PATH).query(true).reply(200, { data: records('z'), meta: { next_cursor: null } });
    assert.deepEqual(await collect(source, restStream(cursorPaging())), [records('z')]);
  });

  it('cursor: an empty page without a next cursor ends the walk', async () => {
    const scope = nock(BASE)
      .get(PATH)
      .query({ per_page: '2' })
      .reply(200, { data: records('a'), meta: { next_cursor: 'n1' } })
      .get(PATH)
      .query({ per_page: '2', cursor: 'n1' })
      .reply(200, { data: [], meta: { next_cursor: null } });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    assert.deepEqual(await collect(source, restStream(cursorPaging())), [records('a')]);
    assert.ok(scope.isDone());
  });

  it('cursor: an empty page that still carries a next cursor is retried, and the walk goes on with what the retry brings', async () => {
    const scope = nock(BASE)
      .get(PATH)
      .query({ per_page: '2' })
      .reply(200, { data: records('a', 'b'), meta: { next_cursor: 'n1' } })
      .get(PATH)
      .query({ per_page: '2', cursor: 'n1' })
      .reply(200, { data: [], meta: { next_cursor: 'n2' } })
      .get(PATH)
      .query({ per_page: '2', cursor: 'n1' })
      .reply(200, { data: records('c', 'd'), meta: { next_cursor: null } });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    assert.deepEqual(await collect(source, restStream(cursorPaging())), [records('a', 'b'), records('c', 'd')]);
    assert.equal(source.stats.retries, 1);
    assert.ok(scope.isDone());
  });

  it('cursor: an empty page that keeps carrying a next cursor fails the walk after the retries', async () => {
    const scope = nock(BASE)
      .get(PATH)
      .query({ per_page: '2' })
      .reply(200, { data: records('a', 'b'), meta: { next_cursor: 'n1' } })
      .get(PATH)
      .query({ per_page: '2', cursor: 'n1' })
      .times(4)
      .reply(200, { data: [], meta: { next_cursor: 'n2' } });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const pages: unknown[][] = [];
    const error = await rejection((async () => {
      for await (const page of source.query(restStream(cursorPaging()), {})) pages.push(page);
    })());
    assert.ok(error instanceof SourceError);
    assert.equal(
      error.message,
      `GET ${BASE}${PATH}?per_page=2&cursor=n1: an empty page still carries a next cursor at "meta.next_cursor" ("n2"): the partner says more records follow but sent none; the window is not complete (gave up after 3 retries)`,
    );
    assert.deepEqual(pages, [records('a', 'b')]);
    assert.equal(source.stats.retries, 3);
    assert.ok(scope.isDone());
  });

  it('cursor: the rule holds for a page fetch that does not check bodies itself', async () => {
    const bodies = [{ data: records('a'), meta: { next_cursor: 'n1' } }, { data: [], meta: { next_cursor: 'n2' } }];
    const fetchPage = () => Promise.resolve({ body: bodies.shift(), what: 'GET page' });
    const pages: unknown[][] = [];
    const error = await rejection((async () => {
      for await (const page of paginate(restStream(cursorPaging()), {}, fetchPage, { logger: silentLogger() })) pages.push(page);
    })());
    assert.match(error.message, /^GET page: an empty page still carries a next cursor at "meta.next_cursor" \("n2"\)/);
    assert.deepEqual(pages, [records('a')]);
  });

  it('offset/limit: advances by the records received, so a capped page skips nothing', async () => {
    const scope = nock(BASE)
      .get(PATH)
      .query({ offset: '0', limit: '3' })
      .reply(200, { data: records('a', 'b') }) // partner caps at 2
      .get(PATH)
      .query({ offset: '2', limit: '3' })
      .reply(200, { data: records('c', 'd') })
      .get(PATH)
      .query({ offset: '4', limit: '3' })
      .reply(200, { data: records('e') })
      .get(PATH)
      .query({ offset: '5', limit: '3' })
      .reply(200, { data: [] });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    assert.deepEqual(await collect(source, restStream(offsetPaging(3))), [records('a', 'b'), records('c', 'd'), records('e')]);
    assert.ok(scope.isDone());
  });

  it('aborts on a repeated cursor', async () => {
    nock(BASE)
      .get(PATH)
      .query({ per_page: '2' })
      .reply(200, { data: records('a'), meta: { next_cursor: 'k1' } })
      .get(PATH)
      .query({ per_page: '2', cursor: 'k1' })
      .reply(200, { data: records('b'), meta: { next_cursor: 'k2' } })
      .get(PATH)
      .query({ per_page: '2', cursor: 'k2' })
      .reply(200, { data: records('c'), meta: { next_cursor: 'k1' } });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const pages: unknown[][] = [];
    const error = await rejection(
      (async () => {
        for await (const page of source.query(restStream(cursorPaging()), {})) pages.push(page);
      })(),
    );
    assert.ok(error instanceof SourceError);
    assert.match(error.message, /partner returned the same next_cursor twice: endless pagination/);
    assert.match(error.message, /^GET https:\/\/partner\.example\/api\/v1\/igaming\/customers\?per_page=2&cursor=k2: /);
    assert.deepEqual(pages, [records('a'), records('b')]);
  });

  it('aborts on a page identical to the previous one (a partner ignoring the page parameter), naming the definition keys to set', async () => {
    nock(BASE).get(PATH).query(true).times(2).reply(200, { data: records('a', 'b') });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const error = await rejection(collect(source, restStream(pagePaging())));
    assert.ok(error instanceof SourceError);
    assert.match(error.message, /page=2.*: the partner returned the same page twice \(identical 2 records\): endless pagination\. /);
    assert.ok(
      error.message.endsWith(
        'The partner ignores the next-page parameter sent, streams.customers.pagination.page_param (page): set it to the partner\'s own parameter, ' +
          'or for a partner that sends a next-page token set streams.customers.pagination.type: cursor with cursor_param (the parameter taking the token, e.g. page_token) ' +
          'and cursor_path (where the body holds it, e.g. next_page_token); `partner-sync discover` tries the common names and says which one advances',
      ),
      error.message,
    );
  });

  it('a body without an array at records_path is a SourceError naming the path and the fields found', async () => {
    nock(BASE).get(PATH).query(true).reply(200, { results: records('a') });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const error = await rejection(collect(source, restStream(pagePaging())));
    assert.ok(error instanceof SourceError);
    assert.match(error.message, /page=1&per_page=2: no array of records at "data" of the response body: found nothing \(body fields: results\)/);
  });

  it('a per_page above the spec maximum of 500 is refused before any request', async () => {
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const error = await rejection(collect(source, restStream(pagePaging(1000))));
    assert.match(error.message, /per_page must be an integer from 1 to 500 \(spec §4\), got 1000/);
  });
});

describe('rest source: the page cap', () => {
  it('stops with a SourceError at the hard cap on pages', async () => {
    let n = 0;
    const fetchPage = () => Promise.resolve({ body: { data: [{ n: n++ }] }, what: `GET ${BASE}${PATH}` });
    const seen: unknown[][] = [];
    const error = await rejection(
      (async () => {
        for await (const page of paginate(restStream(pagePaging()), {}, fetchPage, { logger: silentLogger(), maxPages: 5 })) seen.push(page);
      })(),
    );
    assert.equal(seen.length, 5);
    assert.match(error.message, /more than 5 pages in one window; stopping \(last guard against endless pagination\)/);
  });
});
