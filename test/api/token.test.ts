import assert from 'node:assert/strict';
import { createClient, revokeClient } from '../../src/access/api-clients.js';
import { requirePartnerAccess, requireToken } from '../../src/api/auth.js';
import type { RouteModule } from '../../src/api/types.js';
import { startApi, type StartedApi } from '../support/api.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

/** Routes standing in for the record routes: what a protected route sees. */
const probe: RouteModule = (app) => {
  app.get('/probe/read', { preHandler: requireToken('read') }, async (request) => ({ principal: request.principal }));
  app.post('/probe/write', { preHandler: requireToken('write') }, async (request) => ({ keys: Object.keys(request.body as object) }));
  app.get('/api/v1/:variant/probe', { preHandler: requirePartnerAccess('read') }, async (request) => ({ partner: request.principal?.partner }));
  app.post('/api/v1/:variant/early', { onRequest: requirePartnerAccess('write') }, async (request) => ({ partner: request.principal?.partner }));
};

const form = (fields: Record<string, string>) => new URLSearchParams(fields);
const basic = (id: string, secret: string) => 'Basic ' + Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64');

async function postToken(api: StartedApi, body: URLSearchParams | string, headers: Record<string, string> = {}) {
  const res = await fetch(`${api.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

for (const backend of STORES) {
  describe(`API tokens and authentication (${backend.name})`, function () {
    let t: TestStore;
    let api: StartedApi;
    const clock = fixedClock('2026-11-23T10:00:00.000Z');

    // One store for the describe (each test makes its own clients); one API per test.
    before(async () => (t = await backend.create(clock)));
    after(async () => t.drop());
    beforeEach(async () => {
      clock.set('2026-11-23T10:00:00.000Z');
      api = await startApi(t.store, { routes: [probe] });
    });
    afterEach(async () => api.close());
    // Request handling does not depend on the store: those tests run on the first backend only.
    const once = backend === STORES[0] ? it : () => undefined;

    it('issues a spec §2.6 token for body credentials and for HTTP Basic; the token opens a protected route', async () => {
      const client = await api.addClient('acme', 'igaming');
      const viaBody = await postToken(api, form({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret }));
      assert.equal(viaBody.status, 200);
      assert.deepEqual(Object.keys(viaBody.body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
      assert.equal(viaBody.body.token_type, 'Bearer');
      assert.equal(viaBody.body.expires_in, 3600);
      assert.equal(viaBody.body.scope, 'read write');
      assert.equal(viaBody.headers.get('cache-control'), 'no-store');
      const [, payload] = String(viaBody.body.access_token).split('.');
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
      assert.equal(claims.partner, 'acme');
      assert.equal(claims.variant, 'igaming');
      assert.equal(claims.scope, 'read write');
      assert.equal(claims.client_id, client.client_id);
      assert.equal(claims.exp, Date.parse('2026-11-23T11:00:00Z') / 1000);

      const viaBasic = await postToken(api, form({ grant_type: 'client_credentials' }), { authorization: basic(client.client_id, client.client_secret) });
      assert.equal(viaBasic.status, 200);
      const res = await fetch(`${api.url}/probe/read`, { headers: { authorization: `Bearer ${String(viaBasic.body.access_token)}` } });
      assert.equal(res.status, 200);
      const { principal } = (await res.json()) as { principal: Record<string, unknown> };
      assert.deepEqual({ ...principal, tokenId: undefined }, { clientId: client.client_id, partner: 'acme', variant: 'igaming', scopes: ['read', 'write'], tokenId: undefined });
      const basicClaims = JSON.parse(Buffer.from(String(viaBasic.body.access_token).split('.')[1]!, 'base64url').toString()) as { jti: string };
      assert.equal(principal.tokenId, basicClaims.jti, 'the rate limit counts per token id');

      // A credential limited to one affiliate carries it to the routes.
      const affiliate = await api.addClient('acme', 'igaming', ['read'], 'aff-7');
      const limited = await fetch(`${api.url}/probe/read`, { headers: { authorization: `Bearer ${await api.token(affiliate)}` } });
      assert.deepEqual(((await limited.json()) as { principal: { affiliate?: string; scopes: string[] } }).principal.affiliate, 'aff-7');
    });

    once('answers every RFC 6749 §5.2 error as JSON', async () => {
      const client = await api.addClient('acme', 'igaming', ['read']);
      const ok = { grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret };
      const cases: [string, Promise<Awaited<ReturnType<typeof postToken>>>, number, string][] = [
        ['wrong secret, same length', postToken(api, form({ ...ok, client_secret: client.client_secret.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) })), 401, 'invalid_client'],
        ['wrong secret, other length', postToken(api, form({ ...ok, client_secret: 'short' })), 401, 'invalid_client'],
        ['unknown client', postToken(api, form({ ...ok, client_id: 'ps_nobody' })), 401, 'invalid_client'],
        ['unsupported grant', postToken(api, form({ ...ok, grant_type: 'password' })), 400, 'unsupported_grant_type'],
        ['no grant_type', postToken(api, form({ client_id: ok.client_id, client_secret: ok.client_secret })), 400, 'invalid_request'],
        ['no secret', postToken(api, form({ grant_type: 'client_credentials', client_id: ok.client_id })), 400, 'invalid_request'],
        ['Basic and body credentials', postToken(api, form(ok), { authorization: basic(ok.client_id, ok.client_secret) }), 400, 'invalid_request'],
        ['repeated parameter', postToken(api, `${form(ok).toString()}&grant_type=client_credentials`), 400, 'invalid_request'],
        ['JSON body', fetch(`${api.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ok) }).then(async (r) => ({ status: r.status, headers: r.headers, body: (await r.json()) as Record<string, unknown> })), 400, 'invalid_request'],
        ['scope beyond the client', postToken(api, form({ ...ok, scope: 'read write' })), 400, 'invalid_scope'],
      ];
      for (const [name, pending, status, error] of cases) {
        const res = await pending;
        assert.equal(res.status, status, name);
        assert.equal(res.body.error, error, name);
        assert.equal(typeof res.body.error_description, 'string', name);
        assert.equal(res.headers.get('cache-control'), 'no-store', name);
      }
      const basicWrong = await postToken(api, form({ grant_type: 'client_credentials' }), { authorization: basic(ok.client_id, 'wrong') });
      assert.equal(basicWrong.status, 401);
      assert.equal(basicWrong.body.error, 'invalid_client');
      assert.match(basicWrong.headers.get('www-authenticate') ?? '', /^Basic realm=/);
    });

    once('answers 503 temporarily_unavailable with Retry-After when too many secrets are being checked at once', async () => {
      await api.close();
      api = await startApi(t.store, { routes: [probe], maxConcurrentHashes: 1 });
      // The production hash parameters: each check takes long enough for the others to arrive.
      const c = await createClient(t.store, { partner: 'acme', variant: 'igaming' });
      const answers = await Promise.all(Array.from({ length: 4 }, () => postToken(api, form({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret }))));
      const statuses = answers.map((a) => a.status).sort();
      assert.equal(statuses[0], 200);
      const busy = answers.filter((a) => a.status === 503);
      assert.ok(busy.length >= 1, `statuses ${statuses.join(',')}`);
      assert.equal(busy[0]!.body.error, 'temporarily_unavailable');
      assert.equal(busy[0]!.headers.get('retry-after'), '1');
    });

    it('refuses missing, malformed, forged and expired tokens with 401 invalid_token', async () => {
      const client = await api.addClient('acme', 'igaming');
      const token = await api.token(client);
      const get = (authorization?: string) => fetch(`${api.url}/probe/read`, { headers: authorization ? { authorization } : {} });

      const missing = await get();
      assert.equal(missing.status, 401);
      assert.equal(missing.headers.get('www-authenticate'), 'Bearer realm="partner-sync"');
      assert.equal(((await missing.json()) as { error: string }).error, 'invalid_token');

      const [h, p, s] = token.split('.');
      const forged = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), partner: 'other' })).toString('base64url')}.${s}`;
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.`;
      for (const [name, header, message] of [
        ['not Bearer', `Basic ${Buffer.from('a:b').toString('base64')}`, /not a Bearer token/],
        ['garbage', 'Bearer not-a-jwt', /invalid|malformed/],
        ['forged claims', `Bearer ${forged}`, /signature/],
        ['alg none', `Bearer ${none}`, /invalid|malformed/],
      ] as const) {
        const res = await get(header);
        assert.equal(res.status, 401, name);
        assert.equal(res.headers.get('www-authenticate'), 'Bearer error="invalid_token"', name);
        const body = (await res.json()) as { error: string; message: string };
        assert.equal(body.error, 'invalid_token', name);
        assert.match(body.message, message, name);
      }

      assert.equal((await get(`Bearer ${token}`)).status, 200);
      clock.set('2026-11-23T11:00:01.000Z');
      const expired = await get(`Bearer ${token}`);
      assert.equal(expired.status, 401);
      assert.deepEqual(await expired.json(), { error: 'invalid_token', message: 'the access token has expired' });
    });

    once('refuses a token without the scope (403) and a token of the other variant on /api/v1/{variant} (403)', async () => {
      const reader = await api.token(await api.addClient('acme', 'igaming', ['read']));
      const write = await fetch(`${api.url}/probe/write`, { method: 'POST', headers: { authorization: `Bearer ${reader}`, 'content-type': 'application/json' }, body: '{}' });
      assert.equal(write.status, 403);
      assert.equal(((await write.json()) as { error: string }).error, 'insufficient_scope');

      const own = await fetch(`${api.url}/api/v1/igaming/probe`, { headers: { authorization: `Bearer ${reader}` } });
      assert.equal(own.status, 200);
      assert.deepEqual(await own.json(), { partner: 'acme' });
      const other = await fetch(`${api.url}/api/v1/prop-trading/probe`, { headers: { authorization: `Bearer ${reader}` } });
      assert.equal(other.status, 403);
      assert.equal(((await other.json()) as { error: string }).error, 'wrong_variant');

      // As onRequest hooks: refused before the body is read (a malformed body does not matter).
      const writer = await api.token(await api.addClient('prop', 'prop-trading', ['write']));
      const early = (variant: string, token: string) => fetch(`${api.url}/api/v1/${variant}/early`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"broken":' });
      assert.equal((await early('igaming', writer)).status, 403);
      assert.equal((await early('prop-trading', reader)).status, 403);
      assert.equal((await early('casino', writer)).status, 404);
      assert.equal((await early('prop-trading', writer)).status, 400, 'the right token gets as far as the body');
    });

    it("refuses a revoked client's existing token once the revocation cache expires", async () => {
      await api.close();
      api = await startApi(t.store, { routes: [probe], revocationCacheMs: 300 });
      const client = await api.addClient('acme', 'igaming');
      const token = await api.token(client);
      const get = () => fetch(`${api.url}/probe/read`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal((await get()).status, 200);
      assert.equal(await revokeClient(t.store, client.client_id), true);
      await new Promise((r) => setTimeout(r, 350));
      const res = await get();
      assert.equal(res.status, 401);
      assert.deepEqual(await res.json(), { error: 'invalid_token', message: 'the access token was revoked' });
      const again = await postToken(api, form({ grant_type: 'client_credentials', ...client }));
      assert.equal(again.status, 401);
    });
  });
}
