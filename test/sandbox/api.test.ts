import assert from 'node:assert/strict';
import { decodeCursor, encodeCursor } from '../../src/sandbox/cursor.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import { VARIANTS } from '../../src/types.js';
import { errorOf, get, getPage, sandboxFor, token, walkCursor, walkPages, type ManualClock } from './helpers.js';

const ids = (records: Record<string, unknown>[], field: string) => records.map((r) => String(r[field]));

describe('sandbox list API', () => {
  let sandbox: Sandbox & { clock: ManualClock };
  let access: string;
  before(async () => {
    sandbox = await sandboxFor({ customers: 60, rateLimitPerMinute: 100_000 });
    access = await token(sandbox);
  });
  after(() => sandbox.close());

  it('answers the spec’s envelope exactly: { data, meta: { total, page, per_page, next_cursor } }', async () => {
    const res = await get(sandbox, access, '/api/v1/igaming/customers');
    assert.match(String(res.headers.get('content-type')), /^application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['data', 'meta']);
    const meta = body.meta as Record<string, unknown>;
    assert.deepEqual(Object.keys(meta), ['total', 'page', 'per_page', 'next_cursor']);
    assert.equal(meta.total, 60);
    assert.equal(meta.page, 1);
    assert.equal(meta.per_page, 50);
    assert.equal(typeof meta.next_cursor, 'string');
    assert.equal((body.data as unknown[]).length, 50);
    const last = await getPage(sandbox, access, '/api/v1/igaming/customers', { page: 2 });
    assert.equal(last.data.length, 10);
    assert.deepEqual(Object.keys(last.meta), ['total', 'page', 'per_page'], 'no next_cursor on the last page');
  });

  for (const variant of VARIANTS) {
    for (const [entity, idField, query] of [['customers', 'customer_id', {}], ['transactions', 'transaction_id', {}], ['activity', 'customer_id', {}]] as const) {
      it(`${variant} ${entity}: page and cursor pagination serve every record exactly once, in order`, async () => {
        const path = `/api/v1/${variant}/${entity}`;
        if (entity === 'activity') {
          // The busiest day: several pages of 7.
          const dates = sandbox.data.activityDates(variant);
          const date = dates.reduce((best, d) => (sandbox.data.activity(variant, d).length > sandbox.data.activity(variant, best).length ? d : best), dates[0] as string);
          const expected = sandbox.data.activity(variant, date);
          assert.ok(expected.length > 7);
          const byPage = await walkPages(sandbox, access, path, { date, per_page: 7 });
          const byCursor = await walkCursor(sandbox, access, path, { date, per_page: 7 });
          assert.deepEqual(byPage.records, expected);
          assert.deepEqual(byCursor.records, expected);
          assert.equal(byCursor.pages, Math.ceil(expected.length / 7));
          return;
        }
        const expected = entity === 'customers' ? sandbox.data.customers(variant) : sandbox.data.transactions(variant);
        const byPage = await walkPages(sandbox, access, path, { ...query, per_page: 13 });
        const byCursor = await walkCursor(sandbox, access, path, { ...query, per_page: 13 });
        assert.deepEqual(byPage.records, expected);
        assert.deepEqual(byCursor.records, expected);
        assert.equal(new Set(ids(byCursor.records, idField)).size, expected.length);
        assert.equal(byPage.pages, Math.ceil(expected.length / 13));
      });
    }
  }

  it('per_page: 500 is the maximum (more is 422 naming per_page); 0, words and repeats are 422', async () => {
    const big = await getPage(sandbox, access, '/api/v1/igaming/transactions', { per_page: 500 });
    assert.equal(big.meta.per_page, 500);
    assert.equal(big.data.length, Math.min(500, big.meta.total));
    const res = await get(sandbox, access, '/api/v1/igaming/transactions', { per_page: 501 });
    assert.deepEqual(await errorOf(res), { status: 422, error: 'invalid_parameter', description: 'per_page must be at most 500 (spec §4), got 501', parameter: 'per_page' });
    for (const bad of ['0', 'ten', '-1', '2.5']) {
      const e = await errorOf(await get(sandbox, access, '/api/v1/igaming/transactions', { per_page: bad }));
      assert.equal(e.status, 422);
      assert.equal(e.parameter, 'per_page');
    }
    const page0 = await errorOf(await get(sandbox, access, '/api/v1/igaming/transactions', { page: 0 }));
    assert.deepEqual([page0.status, page0.parameter], [422, 'page']);
    const twice = await fetch(`${sandbox.url}/api/v1/igaming/transactions?page=1&page=2`, { headers: { Authorization: `Bearer ${access}` } });
    assert.equal((await errorOf(twice)).status, 422);
  });

  it('a page past the end is empty, with the true total', async () => {
    const page = await getPage(sandbox, access, '/api/v1/igaming/customers', { page: 99 });
    assert.deepEqual(page, { data: [], meta: { total: 60, page: 99, per_page: 50 } });
  });

  it('an invalid cursor is 400; a cursor of another list or with page is 400', async () => {
    for (const bad of ['garbage!', 'eyJ2IjoyfQ', Buffer.from('{"v":1}').toString('base64url')]) {
      const e = await errorOf(await get(sandbox, access, '/api/v1/igaming/customers', { cursor: bad }));
      assert.deepEqual([e.status, e.error], [400, 'invalid_cursor'], bad);
    }
    const first = await getPage(sandbox, access, '/api/v1/igaming/customers', { per_page: 5 });
    const cursor = first.meta.next_cursor as string;
    let e = await errorOf(await get(sandbox, access, '/api/v1/prop-trading/customers', { cursor }));
    assert.deepEqual([e.status, e.description], [400, 'cursor belongs to igaming/customers, not prop-trading/customers']);
    e = await errorOf(await get(sandbox, access, '/api/v1/igaming/customers', { cursor, page: 2 }));
    assert.deepEqual([e.status, e.error], [400, 'invalid_request']);
  });

  it('the cursor carries the filters: it may be sent alone, or with the same filters, not other ones', async () => {
    const query = { modified_since: '2026-11-10T00:00:00Z', per_page: 5 };
    const first = await getPage(sandbox, access, '/api/v1/igaming/customers', query);
    const cursor = first.meta.next_cursor as string;
    const alone = await getPage(sandbox, access, '/api/v1/igaming/customers', { cursor });
    const again = await getPage(sandbox, access, '/api/v1/igaming/customers', { ...query, cursor });
    assert.deepEqual(alone, again);
    assert.equal(alone.meta.page, 2);
    assert.equal(alone.meta.per_page, 5);
    assert.equal(alone.meta.total, first.meta.total);
    const e = await errorOf(await get(sandbox, access, '/api/v1/igaming/customers', { cursor, modified_since: '2026-11-11T00:00:00Z' }));
    assert.equal(e.status, 400);
    assert.match(e.description, /cursor was issued for modified_since=2026-11-10T00:00:00Z/);
    const state = decodeCursor(cursor);
    assert.ok(state !== undefined);
    assert.equal(decodeCursor(encodeCursor(state)) !== undefined, true);
  });

  it('cursor pages do not shift when data changes between requests (keyset)', async () => {
    const path = '/api/v1/prop-trading/transactions';
    const before = sandbox.data.transactions('prop-trading');
    const first = await getPage(sandbox, access, path, { per_page: 20 });
    // A record of the first page changes (moves to the end), one is added at the end.
    const moved = String(first.data[3]?.transaction_id);
    sandbox.data.setTransactionStatus('prop-trading', moved, 'reversed', '2026-12-01T09:00:00.000001Z');
    sandbox.data.upsertTransaction('prop-trading', { transaction_id: 'zz-new', customer_id: 'ptc-000001', transaction_type: 'refund', amount_currency: 1, currency: 'USD', transaction_date: '2026-12-01T09:00:00Z', status: 'approved' }, '2026-12-01T09:00:00.000002Z');
    let records = [...first.data];
    let cursor = first.meta.next_cursor;
    while (cursor !== undefined) {
      const page = await getPage(sandbox, access, path, { cursor });
      records = records.concat(page.data);
      cursor = page.meta.next_cursor;
    }
    const served = ids(records, 'transaction_id');
    const untouched = before.map((t) => String(t.transaction_id)).filter((id) => id !== moved);
    for (const id of untouched) assert.equal(served.filter((s) => s === id).length, 1, id);
    assert.deepEqual(served.slice(-2), [moved, 'zz-new'], 'changed records come again, at the end');
  });

  it('customers: modified_since is inclusive and modified_until exclusive, at microsecond precision', async () => {
    const variant = 'igaming';
    const at = '2026-11-20T12:00:00.123456Z';
    sandbox.data.upsertCustomer(variant, { customer_id: 'p-exact', signup_date: '2026-11-20T00:00:00Z', affiliate_id: 'aff-1' }, at);
    sandbox.data.upsertCustomer(variant, { customer_id: 'p-before', signup_date: '2026-11-20T00:00:00Z', affiliate_id: 'aff-1' }, '2026-11-20T12:00:00.123455Z');
    sandbox.data.upsertCustomer(variant, { customer_id: 'p-after', signup_date: '2026-11-20T00:00:00Z', affiliate_id: 'aff-1' }, '2026-11-20T12:00:00.123457Z');
    const inWindow = async (query: Record<string, string>) =>
      ids((await walkCursor(sandbox, access, `/api/v1/${variant}/customers`, { ...query, per_page: 500 })).records, 'customer_id').filter((id) => id.startsWith('p-'));
    assert.deepEqual(await inWindow({ modified_since: at }), ['p-exact', 'p-after']);
    assert.deepEqual(await inWindow({ modified_since: '2026-11-20T12:00:00.123Z', modified_until: at }), ['p-before']);
    assert.deepEqual(await inWindow({ modified_since: '2026-11-20T12:00:00.1234555Z', modified_until: '2026-11-20T12:00:00.123457Z' }), ['p-exact']);
    // The same instant with an offset; an unencoded + arrives as a space and is taken back.
    assert.deepEqual(await inWindow({ modified_since: '2026-11-20T14:00:00.123456+02:00' }), ['p-exact', 'p-after']);
    const raw = await fetch(`${sandbox.url}/api/v1/${variant}/customers?modified_since=2026-11-20T14:00:00.123456+02:00&per_page=500`, { headers: { Authorization: `Bearer ${access}` } });
    assert.equal(raw.status, 200);
    // Every record served is in the window, and the window's total is the records in it.
    const window = await getPage(sandbox, access, `/api/v1/${variant}/customers`, { modified_since: '2026-11-10T00:00:00Z', modified_until: '2026-11-20T00:00:00Z', per_page: 500 });
    const expected = sandbox.data.customers(variant).filter((c) => String(c.last_modified_date) >= '2026-11-10' && String(c.last_modified_date) < '2026-11-20');
    assert.deepEqual(window.data, expected);
    assert.equal(window.meta.total, expected.length);
  });

  it('transactions: updated_since/updated_until on updated_at, from/to on transaction_date, at microsecond precision', async () => {
    const variant = 'igaming';
    const tx = (id: string, date: string) => ({ transaction_id: id, customer_id: 'igc-000001', transaction_type: 'deposit', amount_currency: 10, currency: 'EUR', transaction_date: date, status: 'approved' });
    sandbox.data.upsertTransaction(variant, tx('f-1', '2026-11-25T08:00:00.000001Z'), '2026-11-25T08:00:00.000010Z');
    sandbox.data.upsertTransaction(variant, tx('f-2', '2026-11-25T08:00:00.000002Z'), '2026-11-25T08:00:00.000011Z');
    const served = async (query: Record<string, string>) =>
      ids((await walkCursor(sandbox, access, `/api/v1/${variant}/transactions`, { ...query, per_page: 500 })).records, 'transaction_id').filter((id) => id.startsWith('f-'));
    assert.deepEqual(await served({ updated_since: '2026-11-25T08:00:00.00001Z', updated_until: '2026-11-25T08:00:00.000011Z' }), ['f-1']);
    assert.deepEqual(await served({ updated_since: '2026-11-25T08:00:00.000011Z' }), ['f-2']);
    assert.deepEqual(await served({ from: '2026-11-25T08:00:00.000002Z' }), ['f-2']);
    assert.deepEqual(await served({ from: '2026-11-25T08:00:00Z', to: '2026-11-25T08:00:00.000002Z' }), ['f-1']);
    const bad = await errorOf(await get(sandbox, access, `/api/v1/${variant}/transactions`, { updated_since: '2026-11-25' }));
    assert.deepEqual([bad.status, bad.parameter], [422, 'updated_since']);
  });

  it('activity: date is required (422), must be a calendar day, and rows come sorted by the aggregation key', async () => {
    let e = await errorOf(await get(sandbox, access, '/api/v1/igaming/activity'));
    assert.deepEqual([e.status, e.parameter], [422, 'date']);
    e = await errorOf(await get(sandbox, access, '/api/v1/igaming/activity', { date: '2026-11-31' }));
    assert.deepEqual([e.status, e.parameter], [422, 'date']);
    const date = sandbox.data.activityDates('prop-trading')[5] as string;
    const page = await getPage(sandbox, access, '/api/v1/prop-trading/activity', { date, per_page: 500 });
    const keys = page.data.map((r) => [r.customer_id, r.instrument, r.currency].join('|'));
    assert.deepEqual(keys, [...keys].sort());
    assert.ok(page.data.every((r) => r.date === date));
    const empty = await getPage(sandbox, access, '/api/v1/prop-trading/activity', { date: '2020-01-01' });
    assert.deepEqual(empty, { data: [], meta: { total: 0, page: 1, per_page: 50 } });
  });

  it('mutations are visible through the API', async () => {
    const date = '2026-11-29';
    sandbox.data.putActivity('igaming', { date, customer_id: 'igc-999999', game_type: 'poker', currency: 'EUR', bets_count: 3, total_bets: 30, wins: 0, ggr: 30, ngr: 30 });
    let page = await getPage(sandbox, access, '/api/v1/igaming/activity', { date, per_page: 500 });
    assert.equal(page.data.at(-1)?.customer_id, 'igc-999999');
    sandbox.data.deleteActivity('igaming', { date, customer_id: 'igc-999999', game_type: 'poker', currency: 'EUR' });
    page = await getPage(sandbox, access, '/api/v1/igaming/activity', { date, per_page: 500 });
    assert.ok(page.data.every((r) => r.customer_id !== 'igc-999999'));

    const tx = sandbox.data.transactions('igaming').find((t) => t.status === 'approved');
    assert.ok(tx !== undefined);
    sandbox.data.setTransactionStatus('igaming', String(tx.transaction_id), 'reversed', '2026-12-01T09:30:00.654321Z');
    const changed = await getPage(sandbox, access, '/api/v1/igaming/transactions', { updated_since: '2026-12-01T09:30:00.654321Z' });
    assert.deepEqual(changed.data, [{ ...tx, status: 'reversed', updated_at: '2026-12-01T09:30:00.654321Z' }]);
  });

  it('unknown variants and paths are 404 JSON; other methods are 405', async () => {
    for (const path of ['/api/v1/casino/customers', '/api/v1/igaming/players', '/api/v1/igaming/customers/igc-000001', '/api/v2/igaming/customers', '/nothing']) {
      const e = await errorOf(await get(sandbox, access, path));
      assert.deepEqual([e.status, e.error], [404, 'not_found'], path);
    }
    const res = await fetch(`${sandbox.url}/api/v1/igaming/customers`, { method: 'DELETE', headers: { Authorization: `Bearer ${access}` } });
    assert.equal(res.status, 405);
  });
});
