import assert from 'node:assert/strict';
import nock from 'nock';
import { createRestSource } from '../../connectors/rest/source.js';
import type { RestAuth } from '../../src/config/definition.js';
import { BASE, capturedLogger, collect, fakeTime, PATH, rejection, restSource, restStream, testDeps, useNock } from './fixtures.js';

// The definition's secret: the logger's redactor knows it. The access token is learnt at run time: only the source knows it.
const SECRET = 'cs-TOPSECRET-7f3a9';
const ACCESS_TOKEN = 'at-RUNTIME-TOKEN-5be1c';
const redact = (s: string): string => s.split(SECRET).join('***');
const OAUTH: RestAuth = { type: 'oauth2_client_credentials', token_url: '/oauth/token', client_id: 'client-42', client_secret: SECRET };
const echo = `{"debug":"Authorization: Bearer ${ACCESS_TOKEN}; client_secret=${SECRET}"}`;

describe('rest source: secrets never reach errors or logs', () => {
  useNock();

  async function run(setup: () => void, auth: RestAuth = OAUTH): Promise<{ error: Error; logs: string }> {
    setup();
    const { logger, lines } = capturedLogger(redact);
    const source = createRestSource(restSource({ auth, retries: { max: 1, min_delay_ms: 10, max_delay_ms: 20, max_retry_after_ms: 1000 } }), testDeps(fakeTime(), { logger, redact }));
    const error = await rejection(collect(source, restStream()));
    await new Promise((resolve) => setImmediate(resolve));
    return { error, logs: lines().join('\n') };
  }

  function assertClean(text: string): void {
    assert.ok(!text.includes(SECRET), `client secret leaked: ${text}`);
    assert.ok(!text.includes(ACCESS_TOKEN.slice(3)), `access token leaked: ${text}`);
  }

  const token = () => nock(BASE).post('/oauth/token').reply(200, { access_token: ACCESS_TOKEN, token_type: 'bearer', expires_in: 3600 });

  it('5xx bodies that echo the token and the secret (retried, logged, then reported)', async () => {
    const { error, logs } = await run(() => {
      token();
      nock(BASE).get(PATH).query(true).times(2).reply(500, echo);
    });
    assert.match(error.message, /HTTP 500 Internal Server Error: .*Bearer \*\*\*; client_secret=\*\*\*/);
    assert.match(logs, /retry 1 of 1/);
    assert.match(logs, /-> 500/);
    assertClean(error.message);
    assertClean(logs);
  });

  it('a 4xx body, a 401 twice, and a token refusal that echo them', async () => {
    for (const setup of [
      () => {
        token();
        nock(BASE).get(PATH).query(true).reply(400, echo);
      },
      () => {
        token();
        nock(BASE).post('/oauth/token').reply(200, { access_token: `${ACCESS_TOKEN}-2`, token_type: 'bearer' });
        nock(BASE).get(PATH).query(true).times(2).reply(401, `${echo} and Bearer ${ACCESS_TOKEN}-2`);
      },
      // No token was issued here, so only the client secret can be echoed.
      () => nock(BASE).post('/oauth/token').reply(401, { error: `invalid_client ${SECRET}`, error_description: `bad client_secret=${SECRET}` }),
      () => nock(BASE).post('/oauth/token').reply(400, `client_secret=${SECRET}`),
    ]) {
      const { error, logs } = await run(setup);
      assertClean(error.message);
      assertClean(String((error.cause as Error | undefined)?.message ?? ''));
      assertClean(logs);
      nock.cleanAll();
    }
  });

  it('a network error message that carries the token', async () => {
    const { error, logs } = await run(() => {
      token();
      nock(BASE).get(PATH).query(true).times(2).replyWithError(`connection reset while sending Bearer ${ACCESS_TOKEN}`);
    });
    assert.match(error.message, /request failed: connection reset while sending Bearer \*\*\*/);
    assertClean(error.message);
    assertClean(String((error.cause as Error | undefined)?.message ?? ''));
    assertClean(logs);
  });

  it('static bearer tokens and API keys are scrubbed too, as are secret query values in URLs', async () => {
    const staticToken = 'static-TOKEN-9c2d7';
    for (const auth of [{ type: 'bearer', token: staticToken }, { type: 'api_key', header: 'X-Api-Key', key: staticToken }] as RestAuth[]) {
      const { error, logs } = await run(() => {
        nock(BASE).get(PATH).query(true).reply(403, `forbidden for ${staticToken}`);
      }, auth);
      assert.match(error.message, /HTTP 403 Forbidden: forbidden for \*\*\*$/);
      assert.ok(!error.message.includes(staticToken) && !logs.includes(staticToken));
      nock.cleanAll();
    }
    const { error } = await run(() => {
      token();
      nock(BASE).get(PATH).query(true).reply(404, 'no');
    });
    assert.doesNotMatch(error.message, /authorization/i);
  });
});
