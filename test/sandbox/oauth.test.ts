import assert from 'node:assert/strict';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CLIENT, errorOf, form, get, sandboxFor, token, type ManualClock } from './helpers.js';

describe('sandbox OAuth 2.0 client credentials', () => {
  let sandbox: Sandbox & { clock: ManualClock };
  before(async () => (sandbox = await sandboxFor({ customers: 5 })));
  after(() => sandbox.close());

  const tokenUrl = () => `${sandbox.url}/oauth/token`;

  it('issues a Bearer token for form-encoded client credentials (spec §2.6)', async () => {
    const res = await fetch(tokenUrl(), form({ grant_type: 'client_credentials', ...CLIENT }));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const body = (await res.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 3600);
    assert.equal(body.scope, 'read write');
    assert.match(String(body.access_token), /^[\w-]+\.[\w-]+\.[\w-]+$/, 'JWT-like');
    const list = await get(sandbox, String(body.access_token), '/api/v1/igaming/customers');
    assert.equal(list.status, 200);
  });

  it('accepts HTTP Basic client authentication (RFC 6749 §2.3.1)', async () => {
    const basic = Buffer.from(`${CLIENT.client_id}:${CLIENT.client_secret}`).toString('base64');
    const res = await fetch(tokenUrl(), { ...form({ grant_type: 'client_credentials' }), headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${basic}` } });
    assert.equal(res.status, 200);
  });

  it('a wrong secret or an unknown client is 401 invalid_client with a JSON body', async () => {
    for (const client of [{ ...CLIENT, client_secret: 'wrong' }, { ...CLIENT, client_id: 'nobody' }]) {
      const res = await fetch(tokenUrl(), form({ grant_type: 'client_credentials', ...client }));
      assert.deepEqual(await errorOf(res), { status: 401, error: 'invalid_client', description: 'unknown client or wrong client secret' });
    }
    const basic = Buffer.from(`${CLIENT.client_id}:wrong`).toString('base64');
    const res = await fetch(tokenUrl(), { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${basic}` }, body: 'grant_type=client_credentials' });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Basic realm="sandbox"');
  });

  it('missing credentials are 401 invalid_client', async () => {
    const res = await fetch(tokenUrl(), form({ grant_type: 'client_credentials' }));
    assert.equal((await errorOf(res)).error, 'invalid_client');
  });

  it('another grant is 400 unsupported_grant_type; no grant is 400 invalid_request', async () => {
    let res = await fetch(tokenUrl(), form({ grant_type: 'password', ...CLIENT }));
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: string }).error, 'unsupported_grant_type');
    res = await fetch(tokenUrl(), form({ ...CLIENT }));
    assert.deepEqual(await errorOf(res), { status: 400, error: 'invalid_request', description: 'grant_type is required' });
  });

  it('a JSON body instead of a form is 400 invalid_request', async () => {
    const res = await fetch(tokenUrl(), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials', ...CLIENT }) });
    const error = await errorOf(res);
    assert.equal(error.status, 400);
    assert.equal(error.error, 'invalid_request');
    assert.match(error.description, /application\/x-www-form-urlencoded.*got application\/json/);
  });

  it('two authentication methods at once, or a repeated parameter, are 400 invalid_request', async () => {
    const basic = Buffer.from(`${CLIENT.client_id}:${CLIENT.client_secret}`).toString('base64');
    let res = await fetch(tokenUrl(), { ...form({ grant_type: 'client_credentials', ...CLIENT }), headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${basic}` } });
    assert.equal((await errorOf(res)).error, 'invalid_request');
    res = await fetch(tokenUrl(), { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&grant_type=client_credentials' });
    assert.equal((await errorOf(res)).error, 'invalid_request');
  });

  it('GET on the token endpoint is 405', async () => {
    const res = await fetch(tokenUrl());
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'POST');
  });

  it('an API request without a token, with another scheme or with an unknown token is 401 with a JSON body', async () => {
    const url = `${sandbox.url}/api/v1/igaming/customers`;
    let res = await fetch(url);
    assert.equal((await errorOf(res)).status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="sandbox"');
    res = await fetch(url, { headers: { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } });
    assert.equal((await errorOf(res)).status, 401);
    res = await fetch(url, { headers: { Authorization: 'Bearer not-a-token' } });
    assert.deepEqual(await errorOf(res), { status: 401, error: 'invalid_token', description: 'unknown access token' });
    // Unknown paths need a token too: no probing without credentials.
    res = await fetch(`${sandbox.url}/api/v1/casino/customers`);
    assert.equal(res.status, 401);
  });

  it('a token expires after expires_in seconds on the sandbox clock', async () => {
    const access = await token(sandbox);
    sandbox.clock.advance(3599_000);
    assert.equal((await get(sandbox, access, '/api/v1/igaming/customers')).status, 200);
    sandbox.clock.advance(1000);
    const res = await get(sandbox, access, '/api/v1/igaming/customers');
    const error = await errorOf(res);
    assert.equal(error.status, 401);
    assert.equal(error.error, 'invalid_token');
    assert.match(error.description, /access token expired at /);
    assert.match(String(res.headers.get('www-authenticate')), /error="invalid_token"/);
  });

  it('counts 401s and tokens in the statistics', async () => {
    const stats = sandbox.stats();
    assert.ok(stats.unauthorized >= 8, JSON.stringify(stats));
    assert.ok(stats.tokensIssued >= 3);
  });

  it('defaults to one client from SANDBOX_CLIENT_ID / SANDBOX_CLIENT_SECRET, else the demo credentials', async () => {
    const saved = { id: process.env.SANDBOX_CLIENT_ID, secret: process.env.SANDBOX_CLIENT_SECRET };
    try {
      delete process.env.SANDBOX_CLIENT_ID;
      process.env.SANDBOX_CLIENT_SECRET = 's3cr+t/with%chars';
      const box = await startSandbox({ customers: 1 });
      try {
        let res = await fetch(`${box.url}/oauth/token`, form({ grant_type: 'client_credentials', client_id: 'sandbox-client', client_secret: 's3cr+t/with%chars' }));
        assert.equal(res.status, 200);
        const encoded = Buffer.from(`sandbox-client:${encodeURIComponent('s3cr+t/with%chars')}`).toString('base64');
        res = await fetch(`${box.url}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${encoded}` }, body: 'grant_type=client_credentials' });
        assert.equal(res.status, 200, 'form-encoded Basic credentials');
        res = await fetch(`${box.url}/oauth/token`, form({ grant_type: 'client_credentials', client_id: 'sandbox-client', client_secret: 'sandbox-secret' }));
        assert.equal(res.status, 401);
      } finally {
        await box.close();
      }
    } finally {
      if (saved.id === undefined) delete process.env.SANDBOX_CLIENT_ID;
      else process.env.SANDBOX_CLIENT_ID = saved.id;
      if (saved.secret === undefined) delete process.env.SANDBOX_CLIENT_SECRET;
      else process.env.SANDBOX_CLIENT_SECRET = saved.secret;
    }
  });

  it('binds 127.0.0.1 only', () => assert.match(sandbox.url, /^http:\/\/127\.0\.0\.1:\d+$/));
});
