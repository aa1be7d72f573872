import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { requireToken } from '../../src/api/auth.js';
import { MAX_JSON_DEPTH, nestingDepth } from '../../src/api/json-body.js';
import { hashSecret, verifySecret } from '../../src/access/secret-hash.js';
import { DEFAULT_BODY_LIMIT } from '../../src/api/server.js';
import type { RouteModule } from '../../src/api/types.js';
import { createLogger } from '../../src/log.js';
import { startApi, type StartedApi } from '../support/api.js';
import { STORES, type TestStore } from '../support/stores.js';

/** A JSON route standing in for the record routes: answers the keys it received, own properties included. */
const echo: RouteModule = (app) => {
  app.post('/echo', { onRequest: requireToken('write') }, async (request) => {
    const body = request.body as Record<string, unknown>;
    return { keys: Object.keys(body), prototypeIntact: Object.getPrototypeOf(body) === Object.prototype };
  });
  app.get('/boom', async () => {
    throw new Error('secret internals at /srv/app/x.js:12');
  });
};

/** A bulk of 1000 realistic iGaming transactions, as a partner would send it. */
function bulkOf1000(): string {
  return JSON.stringify(Array.from({ length: 1000 }, (_, i) => ({
    transaction_id: `tx-2026-11-23-${String(i).padStart(8, '0')}-${'a'.repeat(20)}`,
    customer_id: `cust-${String(i % 300).padStart(10, '0')}`,
    transaction_type: 'deposit',
    amount_currency: 1234.56,
    currency: 'EUR',
    amount_usd: 1345.67,
    transaction_date: '2026-11-23T10:00:00.123Z',
    status: 'approved',
    transaction_subtype: 'card',
    note: 'deposit via card; campaign black-friday-2026; reference 0123456789abcdef'.repeat(2),
  })));
}

for (const backend of STORES.filter((b) => b.name === 'sqlite')) {
  describe(`API bodies, errors and logs (${backend.name})`, function () {
    let t: TestStore;
    let api: StartedApi;
    let token: string;
    let lines: string[];

    // One store for the describe (each test makes its own clients); one API per test.
    before(async () => (t = await backend.create()));
    after(async () => t.drop());
    beforeEach(async () => {
      lines = [];
      const stream = new Writable({ write(chunk: Buffer, _e, done) { lines.push(chunk.toString()); done(); } });
      api = await startApi(t.store, { routes: [echo], logger: createLogger({ stream, json: true, level: 'debug' }) });
      token = await api.token(await api.addClient('acme', 'igaming'));
    });
    afterEach(async () => api.close());

    const post = (body: string | Buffer, contentType = 'application/json') =>
      fetch(`${api.url}/echo`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body });

    it('applies the spec limit of 1000 requests per minute per token unless told otherwise', () => {
      assert.equal(api.app.apiAuth.limiter.limit, 1000);
    });

    it('keeps __proto__ and constructor keys as plain own properties for the validator (no 400, no prototype change)', async () => {
      const res = await post('{"customer_id":"c1","__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}');
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { keys: ['customer_id', '__proto__', 'constructor'], prototypeIntact: true });
    });

    it('answers 400 malformed_json, 415 for another content type, 413 past the body limit; a 1000-record bulk fits', async () => {
      const malformed = await post('{"customer_id": "c1",');
      assert.equal(malformed.status, 400);
      const m = (await malformed.json()) as { error: string; message: string };
      assert.equal(m.error, 'malformed_json');
      assert.match(m.message, /not valid JSON/);
      assert.equal((await post('')).status, 400);

      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const res = await post('{"a":1}', type);
        assert.equal(res.status, 415, type);
        assert.equal(((await res.json()) as { error: string }).error, 'unsupported_media_type');
      }
      assert.equal((await post('{"a":1}', 'application/json; charset=utf-8')).status, 200);

      const bulk = bulkOf1000();
      assert.ok(bulk.length < DEFAULT_BODY_LIMIT / 4, `a realistic bulk is ${bulk.length} bytes`);
      assert.equal((await fetch(`${api.url}/echo`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: `{"data":${bulk}}` })).status, 200);
      const huge = await post(Buffer.alloc(DEFAULT_BODY_LIMIT + 1, 0x20));
      assert.equal(huge.status, 413);
      assert.equal(((await huge.json()) as { error: string }).error, 'payload_too_large');
    });

    it('refuses deeply nested JSON before parsing it (400 json_too_deep), brackets inside strings do not count', async () => {
      const deep = '['.repeat(100_000) + ']'.repeat(100_000);
      const res = await post(deep);
      assert.equal(res.status, 400);
      assert.deepEqual(await res.json(), { error: 'json_too_deep', message: `the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels` });
      const atLimit = '{"a":'.repeat(MAX_JSON_DEPTH - 1) + '{}' + '}'.repeat(MAX_JSON_DEPTH - 1);
      assert.equal(nestingDepth(atLimit), MAX_JSON_DEPTH);
      assert.equal((await post(atLimit)).status, 200);
      assert.equal(nestingDepth('{"note":"[[[[{{{{\\"[[["}'), 1);
      assert.equal((await post(JSON.stringify({ note: '['.repeat(400) }))).status, 200);
    });

    it('answers unknown routes 404 JSON and internal errors 500 without a stack trace', async () => {
      const missing = await fetch(`${api.url}/api/v1/nothing/here?x=1`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(missing.status, 404);
      assert.deepEqual(await missing.json(), { error: 'not_found', message: 'no route GET /api/v1/nothing/here' });
      assert.equal((await fetch(`${api.url}/api/v1/nothing/here`)).status, 401, 'under /api/ the caller authenticates first');
      const outside = await fetch(`${api.url}/nothing`);
      assert.deepEqual([outside.status, await outside.json()], [404, { error: 'not_found', message: 'no route GET /nothing' }]);
      const boom = await fetch(`${api.url}/boom`);
      assert.equal(boom.status, 500);
      const text = await boom.text();
      assert.match(text, /^\{"error":"internal_error","message":"internal error \(request [0-9a-f-]+\)"\}$/);
      assert.doesNotMatch(text, /secret internals|\.js:/);
    });

    it('answers /healthz 200 whether the store answers or not (liveness); /readyz 503 when it does not', async () => {
      const own = await backend.create();
      const other = await startApi(own.store);
      try {
        const ok = await fetch(`${other.url}/healthz`);
        assert.deepEqual([ok.status, await ok.json()], [200, { status: 'ok' }]);
        assert.equal((await fetch(`${other.url}/readyz`)).status, 200);
        await own.store.knex.destroy();
        const alive = await fetch(`${other.url}/healthz`);
        assert.deepEqual([alive.status, await alive.json()], [200, { status: 'ok' }]);
        const down = await fetch(`${other.url}/readyz`);
        const body = (await down.json()) as { status: string; checks: Record<string, { ok: boolean; detail: string }> };
        assert.deepEqual([down.status, body.status, body.checks.store?.ok, body.checks.migrations?.detail], [503, 'not ready', false, 'not checked: the store does not answer']);
      } finally {
        await other.close();
        await own.drop();
      }
    });

    it('logs one line per request with method, route, status, duration and client id; never a secret or a token', async () => {
      const client = await api.addClient('acme', 'igaming');
      const viaBody = await api.token(client);
      const basic = 'Basic ' + Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
      const viaBasic = (await (await fetch(`${api.url}/oauth/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' })).json()) as { access_token: string };
      assert.equal((await fetch(`${api.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=client_credentials&client_id=${client.client_id}&client_secret=${client.client_secret}x` })).status, 401);
      await fetch(`${api.url}/echo`, { method: 'POST', headers: { authorization: `Bearer ${viaBody}`, 'content-type': 'application/json' }, body: '{"a":1}' });
      await fetch(`${api.url}/echo`, { method: 'POST', headers: { authorization: `Bearer ${viaBasic.access_token}x`, 'content-type': 'application/json' }, body: '{"a":' });
      await fetch(`${api.url}/boom`, { headers: { authorization: `Bearer ${viaBody}` } });
      await new Promise((r) => setImmediate(r));

      const all = lines.join('');
      for (const secret of [client.client_secret, viaBody, viaBasic.access_token, basic.slice(6), viaBody.split('.')[2]!]) {
        assert.equal(all.includes(secret), false, 'a secret or token reached the log');
      }
      const requests = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'http_request');
      const echoed = requests.find((l) => l.route === '/echo' && l.status === 200)!;
      assert.equal(echoed.method, 'POST');
      assert.equal(echoed.client_id, client.client_id);
      assert.equal(typeof echoed.duration_ms, 'number');
      assert.equal(requests.filter((l) => l.route === '/oauth/token' && l.status === 200 && l.client_id === client.client_id).length, 2);
      assert.ok(requests.some((l) => l.route === '/echo' && l.status === 401));
      assert.ok(requests.some((l) => l.route === '/boom' && l.status === 500));
    });
  });
}

describe('client secrets', () => {
  it('are verified against the salted scrypt hash; wrong secrets of equal and other lengths are refused, compared with timingSafeEqual', async () => {
    const params = { alg: 'scrypt' as const, N: 1024, r: 8, p: 1, keylen: 32 };
    const stored = await hashSecret('correct-horse-battery-staple', params);
    assert.deepEqual(JSON.parse(stored.kdf), params);
    assert.notEqual(stored.hash, (await hashSecret('correct-horse-battery-staple', params)).hash, 'salted: the same secret hashes differently');
    assert.equal(await verifySecret('correct-horse-battery-staple', stored), true);
    assert.equal(await verifySecret('correct-horse-battery-stapld', stored), false);
    assert.equal(await verifySecret('short', stored), false);
    assert.equal(await verifySecret('', stored), false);
    const source = readFileSync(fileURLToPath(new URL('../../src/access/secret-hash.js', import.meta.url)), 'utf8');
    assert.match(source, /timingSafeEqual\(actual, expected\)/);
    assert.doesNotMatch(source, /\.equals\(|\.compare\(/);
  });
});
