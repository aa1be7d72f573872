/**
 * Every route's query checked by one schema (src/api/server.ts): a repeated parameter is 400
 * `invalid_parameter` naming it on every route, never a 500; the funnel is prop-trading's (an
 * iGaming token is 403 wrong_variant); a reused Idempotency-Key with another, invalid body is
 * `idempotency_key_reused` (the key is checked before the body). On every store.
 */
import assert from 'node:assert/strict';
import { startApi, type StartedApi } from '../support/api.js';
import { STORES } from '../support/stores.js';

for (const backend of STORES) {
  describe(`API query parameters and refusals on ${backend.name}`, () => {
    let t: Awaited<ReturnType<typeof backend.create>>;
    let api: StartedApi;
    let igaming: string;
    let prop: string;
    before(async () => {
      t = await backend.create();
      api = await startApi(t.store);
      igaming = await api.token(await api.addClient('casino', 'igaming', ['read', 'write']));
      prop = await api.token(await api.addClient('firm', 'prop-trading', ['read', 'write']));
    });
    after(async () => {
      await api.close();
      await t.drop();
    });
    const get = async (token: string, path: string) => {
      const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, type: res.headers.get('content-type') ?? '', body: (await res.json()) as { error?: string; message?: string; errors?: { field: string; rule: string }[] } };
    };

    it('a repeated parameter is 400 invalid_parameter naming it, on the reports, the lists and the docs', async () => {
      const cases: [string, string, string][] = [
        [prop, '/api/v1/reports/affiliates?campaign=a&campaign=b', 'campaign'],
        [prop, '/api/v1/reports/affiliates?affiliate=a&affiliate=b&by=day', 'affiliate'],
        [prop, '/api/v1/reports/funnel?affiliate=a&affiliate=b', 'affiliate'],
        [prop, '/api/v1/reports/funnel?by=affiliate&by=cohort', 'by'],
        [prop, '/api/v1/reports/affiliates/explain?column=ftd_count&affiliate=a&month=2026-10&campaign=x&campaign=y', 'campaign'],
        [igaming, '/api/v1/igaming/customers?per_page=1&per_page=2', 'per_page'],
        [igaming, '/api/v1/igaming/transactions?modified_since=2026-01-01T00:00:00Z&modified_since=2026-01-02T00:00:00Z', 'modified_since'],
      ];
      for (const [token, path, field] of cases) {
        const res = await get(token, path);
        assert.equal(res.status, 400, path);
        assert.match(res.type, /^application\/json/, path);
        assert.equal(res.body.error, 'invalid_parameter', path);
        assert.deepEqual(res.body.errors?.map((e) => [e.field, e.rule]), [[field, 'repeated']], path);
        assert.equal(res.body.message, `the query parameter ${field} is given more than once; give it once`);
      }
      // Given once, the same parameters still work.
      assert.equal((await get(prop, '/api/v1/reports/affiliates?campaign=a&affiliate=b&by=day')).status, 200);
      assert.equal((await get(prop, '/api/v1/reports/funnel?affiliate=a')).status, 200);
      const docs = await fetch(`${api.url}/openapi.json?x=1&x=2`);
      assert.equal(docs.status, 400);
    });

    it('the funnel with an iGaming token is 403 wrong_variant, as any call into the other variant', async () => {
      const res = await get(igaming, '/api/v1/reports/funnel?by=affiliate');
      assert.equal(res.status, 403);
      assert.equal(res.body.error, 'wrong_variant');
      assert.equal((await get(igaming, '/api/v1/reports/affiliates')).status, 200);
    });

    it('a reused Idempotency-Key with another, invalid body is idempotency_key_reused', async () => {
      const post = (body: unknown) =>
        fetch(`${api.url}/api/v1/igaming/customers`, {
          method: 'POST',
          headers: { authorization: `Bearer ${igaming}`, 'content-type': 'application/json', 'idempotency-key': 'key-1' },
          body: JSON.stringify(body),
        });
      const first = await post({ customer_id: 'c-1', signup_date: '2026-11-01T00:00:00Z', affiliate_id: 'a-1' });
      assert.equal(first.status, 200);
      const reused = await post({ customer_id: '', signup_date: 'yesterday' });
      assert.equal(reused.status, 422);
      assert.equal(((await reused.json()) as { error: string }).error, 'idempotency_key_reused');
      // An invalid body under a fresh key is still validation_failed.
      const fresh = await fetch(`${api.url}/api/v1/igaming/customers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${igaming}`, 'content-type': 'application/json', 'idempotency-key': 'key-2' },
        body: JSON.stringify({ customer_id: '' }),
      });
      assert.equal(((await fresh.json()) as { error: string }).error, 'validation_failed');
    });
  });
}

describe('a body over the limit', () => {
  it('Node\'s fetch reads the 413 JSON answer, 20 times in a row', async () => {
    const backend = STORES[0]!;
    const t = await backend.create();
    const api = await startApi(t.store);
    try {
      const token = await api.token(await api.addClient('casino', 'igaming', ['write']));
      const body = '[' + Array.from({ length: 90_000 }, () => '{"customer_id":"c-0000000000","signup_date":"2026-11-01T00:00:00Z"}').join(',') + ']';
      assert.ok(body.length > 5 * 1024 * 1024);
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${api.url}/api/v1/igaming/customers/bulk`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
        assert.equal(res.status, 413, `try ${i + 1}`);
        assert.equal(((await res.json()) as { error: string }).error, 'payload_too_large');
      }
    } finally {
      await api.close();
      await t.drop();
    }
  });
});
