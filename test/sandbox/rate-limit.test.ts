import assert from 'node:assert/strict';
import { createRateLimiter } from '../../src/sandbox/rate-limit.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import { errorOf, get, sandboxFor, token, type ManualClock } from './helpers.js';

describe('sandbox rate limit', () => {
  let sandbox: Sandbox & { clock: ManualClock };
  beforeEach(async () => (sandbox = await sandboxFor({ customers: 3, rateLimitPerMinute: 5 })));
  afterEach(() => sandbox.close());

  const call = (access: string) => get(sandbox, access, '/api/v1/igaming/customers');

  it('allows rateLimitPerMinute requests per token per rolling 60 s, then 429 with Retry-After in seconds', async () => {
    const access = await token(sandbox);
    for (let i = 0; i < 5; i++) {
      assert.equal((await call(access)).status, 200);
      sandbox.clock.advance(10_000); // requests at 0, 10, 20, 30, 40 s
    }
    const refused = await call(access); // at 50 s
    const error = await errorOf(refused);
    assert.equal(error.status, 429);
    assert.equal(error.error, 'rate_limited');
    assert.equal(refused.headers.get('retry-after'), '10', 'the request at 0 s leaves the window at 60 s');
    sandbox.clock.advance(9_999);
    assert.equal((await call(access)).status, 429);
    sandbox.clock.advance(1);
    assert.equal((await call(access)).status, 200, 'room again once the oldest request is 60 s old');
    assert.equal((await call(access)).status, 429);
  });

  it('limits per access token: a new token has its own budget', async () => {
    const a = await token(sandbox);
    const b = await token(sandbox);
    for (let i = 0; i < 5; i++) assert.equal((await call(a)).status, 200);
    assert.equal((await call(a)).status, 429);
    assert.equal((await call(b)).status, 200);
  });

  it('sends Retry-After as an HTTP-date with the retryAfterAsDate fault', async () => {
    sandbox.faults.retryAfterAsDate = true;
    const access = await token(sandbox);
    for (let i = 0; i < 5; i++) await call(access);
    sandbox.clock.advance(30_000);
    const refused = await call(access);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), new Date(sandbox.clock().getTime() + 30_000).toUTCString());
  });

  it('reports 429s and the most requests any token made in a 60 s window', async () => {
    const access = await token(sandbox);
    for (let i = 0; i < 8; i++) await call(access);
    sandbox.clock.advance(61_000);
    await call(access);
    const stats = sandbox.stats();
    assert.equal(stats.rateLimited, 3);
    assert.equal(stats.tooManyRequests, 3);
    assert.equal(stats.maxRequestsPerWindow, 8, 'refused requests count as seen');
    assert.deepEqual(Object.values(stats.maxRequestsPerWindowByToken), [8]);
    assert.equal(stats.requestsByPath['/api/v1/igaming/customers'], 9);
    assert.equal(stats.responsesByStatus['200'], 7, 'the token request and 6 API requests');
    sandbox.resetStats();
    assert.equal(sandbox.stats().requests, 0);
    assert.equal(sandbox.stats().maxRequestsPerWindow, 0);
  });

  it('the limiter alone: refused requests do not use up the window', () => {
    const limiter = createRateLimiter(() => 2);
    assert.deepEqual(limiter.take('t', 0), { allowed: true });
    assert.deepEqual(limiter.take('t', 500), { allowed: true });
    assert.deepEqual(limiter.take('t', 1000), { allowed: false, retryAfterSeconds: 59 });
    assert.deepEqual(limiter.take('t', 59_999), { allowed: false, retryAfterSeconds: 1 });
    assert.deepEqual(limiter.take('t', 60_000), { allowed: true });
    assert.deepEqual(limiter.take('u', 60_000), { allowed: true });
  });
});
