/**
 * REST discovery that finds the paging: partners in the shapes of real platforms, each a real
 * local HTTP server that caps its pages at 7 records and ignores parameters it does not know: a
 * next-page token `next_page_token` taken back as `page_token`, `offset`/`limit` pages without a
 * total, and token pages on a list that requires a `from` date on every page, the token pages
 * too (a 400 naming it when missing). discover says which parameter advances, init writes it into the draft
 * (`cursor_param`, `per_page_param`, `offset_param`, `limit_param`, `page_param`) with the user's
 * query as `params`, and a backfill from the draft, without an edit, loads every record: every
 * field of every stored row equal to the partner's.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parameterNamed } from '../../src/onboarding/discover-paging.js';
import { STORES, type TestStore } from '../support/stores.js';
import { canon, units } from './fixtures/data.js';
import type { Fixture } from './fixtures/fixture.js';
import { startRestPartner, type RestPartnerOptions } from './fixtures/rest-partner.js';
import { onboard } from './fixtures/run.js';
import { cli } from './support.js';

const iso = (ms: number): string => new Date(ms).toISOString();
const PAGE_CAP = 7;

type Envelope = RestPartnerOptions['envelope'];

/** A partner with the spec's paths and names, paged its own way; `requiredFrom`: transactions need `from` (YYYY-MM-DD) on every page. */
function partner(id: string, envelope: Envelope, seed: number, requiredFrom = false): Fixture {
  const data = canon('igaming', { seed, customers: 12, days: 12, perCustomer: 4, types: ['deposit', 'withdrawal', 'bonus'] });
  const secret = `${id}-secret`;
  return {
    id,
    title: `${envelope} pages`,
    variant: 'igaming',
    data,
    source: {
      kind: 'rest',
      secret,
      start: () =>
        startRestPartner({
          auth: { kind: 'bearer', secret },
          envelope,
          maxPerPage: PAGE_CAP,
          endpoints: [
            {
              path: '/api/v1/igaming/customers',
              records: data.customers.map((c) => ({ customer_id: `C${c.id}`, signup_date: iso(c.signup), affiliate_id: c.affiliate, last_modified_date: iso(c.updated), country_code: c.country, email: c.email })),
              window: { from: 'modified_since', to: 'modified_until', stamp: (r) => Date.parse(String(r.last_modified_date)), unit: 'iso' },
            },
            {
              path: '/api/v1/igaming/transactions',
              records: data.transactions.map((t) => ({ transaction_id: `T${t.id}`, customer_id: `C${t.customer}`, transaction_type: t.type, amount_currency: Number(units(t.cents)), currency: t.currency, transaction_date: iso(t.at), status: t.status })),
              ...(requiredFrom ? { required: { param: 'from', stamp: (r: Record<string, unknown>) => Date.parse(String(r.transaction_date)) } } : {}),
            },
            {
              path: '/api/v1/igaming/activity',
              records: data.activity.map((a) => ({ date: a.day, customer_id: `C${a.customer}`, game_type: a.product, currency: a.currency, bets_count: a.count, total_bets: Number(units(a.betsCents)), wins: Number(units(a.winsCents)), ggr: Number(units(a.betsCents - a.winsCents)) })),
              day: { param: 'date', of: (r) => String(r.date) },
            },
          ],
        }),
      flags: (url, env) => [
        '--rest', url, '--auth', 'bearer', '--auth-env', env,
        '--customers', '/api/v1/igaming/customers',
        '--transactions', requiredFrom ? `/api/v1/igaming/transactions?from=${data.from}` : '/api/v1/igaming/transactions',
        '--activity', '/api/v1/igaming/activity',
      ],
    },
    provides: { customers: ['last_modified_date', 'country_code', 'email'], activity: ['bets_count', 'total_bets', 'wins', 'ggr'] },
    customerKey: (id) => `C${id}`,
    transactionKey: (id) => `T${id}`,
    edits: [],
  };
}

type Stream = { path: string; params?: Record<string, string>; pagination: Record<string, unknown>; incremental: Record<string, unknown> };
const streamsOf = (draft: string) => (parse(draft) as { streams: Record<'customers' | 'transactions' | 'activity', Stream> }).streams;

/** discover's text output for a fixture's partner (started for the call). */
async function discoverText(fixture: Fixture, transactions?: string): Promise<{ code: number; out: string; err: string }> {
  const source = fixture.source;
  assert.ok(source.kind === 'rest');
  const server = await source.start();
  process.env.PAGING_SECRET = source.secret;
  try {
    const flags = source.flags(server.url, 'PAGING_SECRET');
    if (transactions !== undefined) flags[flags.indexOf('--transactions') + 1] = transactions;
    return await cli(['discover', ...flags]);
  } finally {
    delete process.env.PAGING_SECRET;
    await server.close();
  }
}

/** init's text output for a fixture's partner, in a folder of its own. */
async function initText(fixture: Fixture, storeUrl: string): Promise<{ code: number; out: string; err: string }> {
  const source = fixture.source;
  assert.ok(source.kind === 'rest');
  const server = await source.start();
  const dir = mkdtempSync(join(tmpdir(), 'partner-sync-paging-'));
  process.env.PAGING_SECRET = source.secret;
  try {
    return await cli(['--config', dir, '--store', storeUrl, 'init', fixture.id, '--variant', fixture.variant, ...source.flags(server.url, 'PAGING_SECRET')]);
  } finally {
    delete process.env.PAGING_SECRET;
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
}

describe('discover: the parameter a refused request names', () => {
  it('reads it from the JSON bodies and messages partners send', () => {
    assert.equal(parameterNamed('{"error":"missing required parameter from"}'), 'from');
    assert.equal(parameterNamed('{"error":"invalid_request","message":"query parameter \'from\' is required (YYYY-MM-DD)","param":"from"}'), 'from');
    assert.equal(parameterNamed('{"error":{"type":"invalid_request_error","param":"created_after","message":"Missing required param: created_after."}}'), 'created_after');
    assert.equal(parameterNamed('{"detail":[{"loc":["query","start_date"],"msg":"field required","type":"value_error.missing"}]}'), 'start_date');
    assert.equal(parameterNamed('{"errors":[{"message":"The date_from field is required."}]}'), 'date_from');
    assert.equal(parameterNamed('parameter `since` is required'), 'since');
    assert.equal(parameterNamed('{"error":"bad request"}'), undefined);
    assert.equal(parameterNamed(''), undefined);
  });
});

for (const backend of STORES) {
  describe(`discover and init find the paging of REST partners on a ${backend.name} store: the parameter that advances, in the draft, and a backfill that loads every record`, function () {
    this.timeout(300_000);
    let store: TestStore | undefined;
    afterEach(async () => {
      await store?.drop();
      store = undefined;
    });

    it('page_token: the token at next_page_token is sent back as page_token; the draft is type cursor with cursor_param page_token, cursor_path next_page_token, per_page_param per_page', async () => {
      const fixture = partner('token-pages', 'page_token', 41);
      const text = await discoverText(fixture);
      assert.equal(text.code, 0, text.err);
      assert.match(text.out, /\ntransactions \(\/api\/v1\/igaming\/transactions\): 21 records in 3 page\(s\); records at data; pagination: cursor \(cursor_param page_token, cursor_path next_page_token, per_page_param per_page\)\n {2}paging: the token at next_page_token sent as page_token brings the next records; per_page sets the page size\n/);
      store = await backend.create();
      const done = await onboard(fixture, store.url);
      const streams = streamsOf(done.draft);
      for (const entity of ['customers', 'transactions'] as const) {
        assert.deepEqual(streams[entity].pagination, { type: 'cursor', per_page: 500, per_page_param: 'per_page', cursor_param: 'page_token', cursor_path: 'next_page_token' }, entity);
      }
      assert.match(done.draft, /# discover: the token at next_page_token sent as page_token brings the next records; per_page sets the page size\n/);
    });

    it('offset/limit without a total: the draft is type offset with offset_param offset and limit_param limit', async () => {
      const fixture = partner('offset-pages', 'offset', 42);
      const text = await discoverText(fixture);
      assert.equal(text.code, 0, text.err);
      assert.match(text.out, /\ncustomers \(\/api\/v1\/igaming\/customers\): 12 records in 3 page\(s\); records at data; pagination: offset \(offset_param offset, limit_param limit\)\n {2}paging: offset=1 brings the next records; limit sets the page size\n/);
      store = await backend.create();
      const init = await initText(fixture, store.url);
      assert.equal(init.code, 0, init.err);
      assert.match(init.out, /\npaging transactions: offset \(offset_param offset, limit_param limit\): offset=1 brings the next records; limit sets the page size\n/);
      const done = await onboard(fixture, store.url);
      const streams = streamsOf(done.draft);
      for (const entity of ['customers', 'transactions'] as const) assert.deepEqual(streams[entity].pagination, { type: 'offset', per_page: 500, offset_param: 'offset', limit_param: 'limit' }, entity);
    });

    it('a required from: without it discover names it; given in the list path it is sent on every page, token pages too, and written as params; the window is not sent as from', async () => {
      const fixture = partner('required-from', 'page_token', 43, true);
      const missing = await discoverText(fixture, '/api/v1/igaming/transactions');
      assert.equal(missing.code, 1);
      assert.match(
        missing.err,
        /discover failed: GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/igaming\/transactions: HTTP 400 Bad Request: \{.*"param":"from"\}: the partner requires the query parameter from: give it in the list path, --transactions "\/api\/v1\/igaming\/transactions\?from=\.\.\."; it is sent on every page and written to the draft's params\n/,
      );
      const text = await discoverText(fixture);
      assert.equal(text.code, 0, text.err);
      assert.match(text.out, new RegExp(`\ntransactions \\(/api/v1/igaming/transactions with from=${fixture.data.from} on every page\\): 21 records in 3 page\\(s\\); records at data; pagination: cursor \\(cursor_param page_token, cursor_path next_page_token, per_page_param per_page\\)\n`));
      store = await backend.create();
      const done = await onboard(fixture, store.url);
      const t = streamsOf(done.draft).transactions;
      assert.equal(t.path, '/api/v1/igaming/transactions');
      assert.deepEqual(t.params, { from: fixture.data.from });
      assert.deepEqual(t.pagination, { type: 'cursor', per_page: 500, per_page_param: 'per_page', cursor_param: 'page_token', cursor_path: 'next_page_token' });
      assert.deepEqual([t.incremental.from_param, t.incremental.to_param], ['updated_since', 'updated_until']);
      assert.match(done.draft, /from is a constant parameter of the list path \(kept on every request\), so the window is sent as updated_since, updated_until/);
    });
  });
}
