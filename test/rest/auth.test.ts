import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import nock from 'nock';
import { SourceError } from '../../connectors/source.js';
import { createRestSource } from '../../connectors/rest/source.js';
import type { RestAuth } from '../../src/config/definition.js';
import { BASE, collect, cursorPaging, fakeTime, pagePaging, PATH, records, rejection, restSource, restStream, testDeps, useNock } from './fixtures.js';

const OAUTH: RestAuth = { type: 'oauth2_client_credentials', token_url: '/oauth/token', client_id: 'client-42', client_secret: 'cs-very-secret', scope: 'read' };

const tokenBody = (access_token: string, expires_in = 3600) => ({ access_token, token_type: 'Bearer', expires_in, scope: 'read' });

describe('rest source: authentication', () => {
  useNock();

  it('requests the token as spec §5 says: a form-encoded POST of grant_type, client_id, client_secret (and scope)', async () => {
    let form: string | undefined;
    let headers: IncomingHttpHeaders | undefined;
    nock(BASE)
      .post('/oauth/token')
      .reply(function (_uri, body) {
        form = typeof body === 'string' ? body : JSON.stringify(body);
        headers = this.req.headers as IncomingHttpHeaders;
        return [200, tokenBody('tok-1')];
      })
      .get(PATH)
      .query(true)
      .matchHeader('authorization', 'Bearer tok-1')
      .reply(200, { data: [] });
    const source = createRestSource(restSource({ auth: OAUTH }), testDeps(fakeTime()));
    await collect(source, restStream());
    assert.equal(headers?.['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(headers?.authorization, undefined);
    assert.deepEqual([...new URLSearchParams(form)], [
      ['grant_type', 'client_credentials'],
      ['client_id', 'client-42'],
      ['client_secret', 'cs-very-secret'],
      ['scope', 'read'],
    ]);
  });

  it('caches the token across pages and windows', async () => {
    const token = nock(BASE).post('/oauth/token').once().reply(200, tokenBody('tok-1'));
    const api = nock(BASE)
      .matchHeader('authorization', 'Bearer tok-1')
      .get(PATH)
      .query({ per_page: '2' })
      .reply(200, { data: records('a'), meta: { next_cursor: 'n1' } })
      .get(PATH)
      .query({ per_page: '2', cursor: 'n1' })
      .reply(200, { data: records('b'), meta: { next_cursor: '' } })
      .get(PATH)
      .query({ per_page: '2' })
      .reply(200, { data: [] });
    const source = createRestSource(restSource({ auth: OAUTH }), testDeps(fakeTime()));
    assert.deepEqual(await collect(source, restStream(cursorPaging())), [records('a'), records('b')]);
    assert.deepEqual(await collect(source, restStream(cursorPaging())), []);
    assert.ok(token.isDone() && api.isDone());
  });

  it('renews the token before it expires (a 60 s margin on a 3600 s token), by the injected clock', async () => {
    const time = fakeTime();
    const source = createRestSource(restSource({ auth: OAUTH }), testDeps(time));
    nock(BASE).post('/oauth/token').reply(200, tokenBody('tok-1'));
    nock(BASE).get(PATH).query(true).times(2).matchHeader('authorization', 'Bearer tok-1').reply(200, { data: [] });
    await collect(source, restStream());
    time.advance(3540_000 - 1); // still inside the lifetime less the margin
    await collect(source, restStream());

    time.advance(1);
    const renewal = nock(BASE).post('/oauth/token').reply(200, tokenBody('tok-2'));
    const api = nock(BASE).get(PATH).query(true).matchHeader('authorization', 'Bearer tok-2').reply(200, { data: [] });
    await collect(source, restStream());
    assert.ok(renewal.isDone() && api.isDone());
  });

  it('a short-lived token is renewed 10% of its lifetime early', async () => {
    const time = fakeTime();
    const source = createRestSource(restSource({ auth: OAUTH }), testDeps(time));
    nock(BASE).post('/oauth/token').reply(200, tokenBody('tok-1', 100));
    nock(BASE).get(PATH).query(true).times(2).matchHeader('authorization', 'Bearer tok-1').reply(200, { data: [] });
    await collect(source, restStream());
    time.advance(89_999);
    await collect(source, restStream());
    time.advance(1);
    nock(BASE).post('/oauth/token').reply(200, tokenBody('tok-2', 100));
    const api = nock(BASE).get(PATH).query(true).matchHeader('authorization', 'Bearer tok-2').reply(200, { data: [] });
    await collect(source, restStream());
    assert.ok(api.isDone());
  });

  it('renews once on a 401 mid-run and repeats the request with the new token', async () => {
    nock(BASE).post('/oauth/token').reply(200, tokenBody('tok-1')).post('/oauth/token').reply(200, tokenBody('tok-2'));
    const api = nock(BASE)
      .get(PATH)
      .query({ page: '1', per_page: '2' })
      .matchHeader('authorization', 'Bearer tok-1')
      .reply(200, { data: records('a', 'b') })
      .get(PATH)
      .query({ page: '2', per_page: '2' })
      .matchHeader('authorization', 'Bearer tok-1')
      .reply(401, { error: 'invalid_token' })
      .get(PATH)
      .query({ page: '2', per_page: '2' })
      .matchHeader('authorization', 'Bearer tok-2')
      .reply(200, { data: records('c') })
      .get(PATH)
      .query({ page: '3', per_page: '2' })
      .matchHeader('authorization', 'Bearer tok-2')
      .reply(200, { data: [] });
    const source = createRestSource(restSource({ auth: OAUTH }), testDeps(fakeTime()));
    assert.deepEqual(await collect(source, restStream(pagePaging())), [records('a', 'b'), records('c')]);
    assert.ok(api.isDone());
    assert.equal(source.stats.retries, 0);
  });

  it('a second 401 after the renewal is a SourceError "authentication failed"', async () => {
    nock(BASE).post('/oauth/token').reply(200, tokenBody('tok-1')).post('/oauth/token').reply(200, tokenBody('tok-2'));
    nock(BASE).get(PATH).query(true).times(2).reply(401, { error: 'invalid_token', error_description: 'nope' });
    const source = createRestSource(restSource({ auth: OAUTH }), testDeps(fakeTime()));
    const error = await rejection(collect(source, restStream()));
    assert.ok(error instanceof SourceError);
    assert.equal(error.status, 401);
    assert.match(error.message, /^GET https:\/\/partner\.example\/api\/v1\/igaming\/customers\?page=1&per_page=2: HTTP 401 Unauthorized: .*invalid_token.*: authentication failed \(OAuth token from https:\/\/partner\.example\/oauth\/token refused again after renewing it\)$/);
    assert.equal(nock.pendingMocks().length, 0);
  });

  it('a refused token request names the token URL and the partner error code, never the secret', async () => {
    nock(BASE).post('/oauth/token').reply(401, { error: 'invalid_client', error_description: 'Client authentication failed' });
    const source = createRestSource(restSource({ auth: OAUTH }), testDeps(fakeTime()));
    const error = await rejection(collect(source, restStream()));
    assert.ok(error instanceof SourceError);
    assert.equal(error.status, 401);
    assert.equal(
      error.message,
      'POST https://partner.example/oauth/token: token request refused: HTTP 401 Unauthorized: partner error "invalid_client": Client authentication failed (check client_id / client_secret / scope)',
    );
    assert.doesNotMatch(error.message, /cs-very-secret/);
    assert.equal(source.stats.retries, 0);
  });

  it('a token endpoint 5xx is retried like any request', async () => {
    nock(BASE).post('/oauth/token').reply(503, 'busy').post('/oauth/token').reply(200, tokenBody('tok-1'));
    nock(BASE).get(PATH).query(true).matchHeader('authorization', 'Bearer tok-1').reply(200, { data: [] });
    const time = fakeTime();
    const source = createRestSource(restSource({ auth: OAUTH }), testDeps(time));
    await collect(source, restStream());
    assert.equal(source.stats.retries, 1);
    assert.equal(time.sleeps.length, 1);
  });

  it('a token response without access_token is a clear error', async () => {
    nock(BASE).post('/oauth/token').reply(200, { token_type: 'Bearer' });
    const source = createRestSource(restSource({ auth: OAUTH }), testDeps(fakeTime()));
    const error = await rejection(collect(source, restStream()));
    assert.match(error.message, /POST https:\/\/partner\.example\/oauth\/token: token response has no access_token \(fields: token_type\)/);
  });

  it('an absolute token_url on another host is used as is', async () => {
    const idp = nock('https://login.partner.example').post('/oauth2/token').reply(200, tokenBody('tok-x'));
    nock(BASE).get(PATH).query(true).matchHeader('authorization', 'Bearer tok-x').reply(200, { data: [] });
    const source = createRestSource(restSource({ auth: { ...OAUTH, token_url: 'https://login.partner.example/oauth2/token' } }), testDeps(fakeTime()));
    await collect(source, restStream());
    assert.ok(idp.isDone());
  });

  it('parallel streams share one in-flight token request', async () => {
    const token = nock(BASE).post('/oauth/token').once().delay(30).reply(200, tokenBody('tok-1'));
    nock(BASE).get(PATH).query(true).times(3).matchHeader('authorization', 'Bearer tok-1').reply(200, { data: [] });
    const source = createRestSource(restSource({ auth: OAUTH }), testDeps(fakeTime()));
    await Promise.all([collect(source, restStream()), collect(source, restStream()), collect(source, restStream())]);
    assert.ok(token.isDone());
    assert.equal(source.stats.requests, 4);
  });

  it('parallel streams refused with the same token renew it once', async () => {
    const tokens = nock(BASE).post('/oauth/token').reply(200, tokenBody('tok-1')).post('/oauth/token').delay(20).reply(200, tokenBody('tok-2'));
    nock(BASE).get(PATH).query(true).times(2).matchHeader('authorization', 'Bearer tok-1').reply(401, '');
    nock(BASE).get(PATH).query(true).times(2).matchHeader('authorization', 'Bearer tok-2').reply(200, { data: [] });
    const source = createRestSource(restSource({ auth: OAUTH }), testDeps(fakeTime()));
    await Promise.all([collect(source, restStream()), collect(source, restStream())]);
    assert.ok(tokens.isDone());
    assert.equal(nock.pendingMocks().length, 0);
    assert.equal(source.stats.requests, 6);
  });

  it('static bearer token: sent as Authorization: Bearer; a 401 fails at once (nothing to renew)', async () => {
    const api = nock(BASE).get(PATH).query(true).matchHeader('authorization', 'Bearer static-bearer-token').reply(200, { data: [] });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    await collect(source, restStream());
    assert.ok(api.isDone());

    nock(BASE).get(PATH).query(true).reply(401, { error: 'invalid_token' });
    const error = await rejection(collect(source, restStream()));
    assert.match(error.message, /HTTP 401 Unauthorized: .*authentication failed \(static bearer token refused\)$/);
    assert.equal(nock.pendingMocks().length, 0);
  });

  it('API key: sent in the configured header, no Authorization header', async () => {
    let headers: IncomingHttpHeaders | undefined;
    nock(BASE)
      .get(PATH)
      .query(true)
      .reply(function () {
        headers = this.req.headers as IncomingHttpHeaders;
        return [200, { data: [] }];
      });
    const source = createRestSource(restSource({ auth: { type: 'api_key', header: 'X-Api-Key', key: 'k-123456' } }), testDeps(fakeTime()));
    await collect(source, restStream());
    assert.equal(headers?.['x-api-key'], 'k-123456');
    assert.equal(headers?.authorization, undefined);
    assert.equal(headers?.accept, 'application/json');
    assert.match(String(headers?.['user-agent']), /^partner-sync/);
  });
});
