import assert from 'node:assert/strict';
import nock from 'nock';
import { SourceError } from '../../connectors/source.js';
import { safeUrl } from '../../connectors/rest/http.js';
import { createRestSource } from '../../connectors/rest/source.js';
import { noRedaction } from '../../src/log.js';
import { capturedLogger, collect, fakeTime, PATH, restSource, restStream, testDeps, useNock } from './fixtures.js';

describe('rest source: HTTPS and the request log', () => {
  useNock();

  it('refuses to build a client for a plain-http public base_url', () => {
    assert.throws(
      () => createRestSource(restSource({ base_url: 'http://partner.example' }), testDeps(fakeTime())),
      (error: unknown) => error instanceof SourceError && /^base_url must use https:\/\/ .*got http:\/\/partner\.example$/.test(error.message),
    );
  });

  it('refuses a plain-http public token_url', () => {
    const auth = { type: 'oauth2_client_credentials' as const, token_url: 'http://login.partner.example/token', client_id: 'c', client_secret: 's3cr3t-value' };
    assert.throws(() => createRestSource(restSource({ auth }), testDeps(fakeTime())), /^SourceError: token_url must use https:\/\//);
  });

  it('allows plain http to 127.0.0.1 (the sandbox, tests)', async () => {
    const api = nock('http://127.0.0.1:8099').get(PATH).query(true).reply(200, { data: [] });
    const source = createRestSource(restSource({ base_url: 'http://127.0.0.1:8099' }), testDeps(fakeTime()));
    assert.deepEqual(await collect(source, restStream()), []);
    assert.ok(api.isDone());
  });

  it('keeps a base_url path prefix', async () => {
    const api = nock('https://partner.example').get(`/tenant-7${PATH}`).query(true).reply(200, { data: [] });
    const source = createRestSource(restSource({ base_url: 'https://partner.example/tenant-7/' }), testDeps(fakeTime()));
    await collect(source, restStream());
    assert.ok(api.isDone());
  });

  it('logs each request at debug level as method, URL, status and ms; no headers', async () => {
    nock('https://partner.example').get(PATH).query(true).reply(200, { data: [] });
    const { logger, lines } = capturedLogger(noRedaction);
    const source = createRestSource(restSource(), testDeps(fakeTime(), { logger }));
    await collect(source, restStream());
    await new Promise((resolve) => setImmediate(resolve));
    const logged = lines().map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.equal(logged.length, 1);
    assert.equal(logged[0]?.level, 'debug');
    assert.match(String(logged[0]?.message), /^GET https:\/\/partner\.example\/api\/v1\/igaming\/customers\?page=1&per_page=2 -> 200 \(\d+ ms\)$/);
    assert.equal(logged[0]?.status, 200);
    assert.equal(typeof logged[0]?.ms, 'number');
    assert.doesNotMatch(lines().join('\n'), /static-bearer-token|authorization/i);
  });

  it('safeUrl removes the values of secret-looking query parameters and userinfo', () => {
    assert.equal(safeUrl('https://u:p@h.example/x?page=2&api_key=abc&access_token=t&sig=z&cursor=c1'), 'https://h.example/x?page=2&api_key=***&access_token=***&sig=***&cursor=c1');
  });
});
