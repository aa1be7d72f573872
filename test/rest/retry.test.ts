import assert from 'node:assert/strict';
import nock from 'nock';
import { BudgetExhausted, SourceError } from '../../connectors/source.js';
import { backoffDelay, parseRetryAfter } from '../../connectors/rest/retry.js';
import { createRestSource } from '../../connectors/rest/source.js';
import { BASE, collect, fakeTime, PATH, records, rejection, restSource, restStream, START, testDeps, useNock } from './fixtures.js';

const POLICY = { max: 3, min_delay_ms: 100, max_delay_ms: 2000, max_retry_after_ms: 120_000 };

describe('rest source: retries, backoff and Retry-After', () => {
  useNock();

  it('retries 5xx with exponential backoff (full jitter) and then succeeds', async () => {
    nock(BASE)
      .get(PATH)
      .query(true)
      .reply(503, 'busy')
      .get(PATH)
      .query(true)
      .reply(500, { error: 'oops' })
      .get(PATH)
      .query({ page: '1', per_page: '2' })
      .reply(200, { data: records('a') })
      .get(PATH)
      .query({ page: '2', per_page: '2' })
      .reply(200, { data: [] });
    const time = fakeTime();
    const source = createRestSource(restSource(), testDeps(time));
    assert.deepEqual(await collect(source, restStream()), [records('a')]);
    // random 0.5: retry 1 between 100 and 200, retry 2 between 100 and 400.
    assert.deepEqual(time.sleeps, [150, 250]);
    assert.deepEqual(source.stats, { requests: 4, retries: 2, throttled: 0, waitedMs: 400 });
  });

  it('gives up after retries.max retries with the last status and body excerpt', async () => {
    nock(BASE).get(PATH).query(true).times(4).reply(502, '<html>Bad gateway</html>', { 'Content-Type': 'text/html' });
    const time = fakeTime();
    const source = createRestSource(restSource(), testDeps(time));
    const error = await rejection(collect(source, restStream()));
    assert.ok(error instanceof SourceError);
    assert.equal(error.status, 502);
    assert.equal(error.message, 'GET https://partner.example/api/v1/igaming/customers?page=1&per_page=2: HTTP 502 Bad Gateway: <html>Bad gateway</html> (gave up after 3 retries)');
    assert.deepEqual(time.sleeps, [150, 250, 450]);
    assert.equal(source.stats.retries, 3);
    assert.equal(source.stats.requests, 4);
  });

  it('retries a timeout (nock delay beyond timeout_ms) and then succeeds', async () => {
    nock(BASE)
      .get(PATH)
      .query(true)
      .delay(500)
      .reply(200, { data: records('late') })
      .get(PATH)
      .query({ page: '1', per_page: '2' })
      .reply(200, { data: records('a') })
      .get(PATH)
      .query({ page: '2', per_page: '2' })
      .reply(200, { data: [] });
    const source = createRestSource(restSource({ timeout_ms: 50 }), testDeps(fakeTime()));
    assert.deepEqual(await collect(source, restStream()), [records('a')]);
    assert.equal(source.stats.retries, 1);
  });

  it('a timeout that persists fails with a clear message after the retries', async () => {
    nock(BASE).get(PATH).query(true).times(2).delay(500).reply(200, { data: [] });
    const source = createRestSource(restSource({ timeout_ms: 50, retries: { ...POLICY, max: 1 } }), testDeps(fakeTime()));
    const error = await rejection(collect(source, restStream()));
    assert.ok(error instanceof SourceError);
    assert.equal(error.message, 'GET https://partner.example/api/v1/igaming/customers?page=1&per_page=2: no response within 50 ms (timeout) (gave up after 1 retry)');
    assert.equal(source.stats.retries, 1);
  });

  it('retries a network error, and reports one that persists', async () => {
    const reset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    nock(BASE).get(PATH).query(true).replyWithError(reset()).get(PATH).query(true).reply(200, { data: [] });
    const source = createRestSource(restSource({ retries: { ...POLICY, max: 1 } }), testDeps(fakeTime()));
    assert.deepEqual(await collect(source, restStream()), []);
    assert.equal(source.stats.retries, 1);

    nock(BASE).get(PATH).query(true).times(2).replyWithError(reset());
    const error = await rejection(collect(source, restStream()));
    assert.equal(error.message, 'GET https://partner.example/api/v1/igaming/customers?page=1&per_page=2: request failed: socket hang up (ECONNRESET) (gave up after 1 retry)');
    assert.equal(source.stats.retries, 2);
  });

  it('retries 408 like a timeout', async () => {
    nock(BASE).get(PATH).query(true).reply(408, '').get(PATH).query(true).reply(200, { data: [] });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    await collect(source, restStream());
    assert.equal(source.stats.retries, 1);
  });

  it('does not retry other 4xx: a SourceError with the status and a body excerpt of at most 300 characters', async () => {
    nock(BASE).get(PATH).query(true).reply(422, { errors: 'x'.repeat(1000) });
    const time = fakeTime();
    const source = createRestSource(restSource(), testDeps(time));
    const error = await rejection(collect(source, restStream()));
    assert.ok(error instanceof SourceError);
    assert.equal(error.status, 422);
    const prefix = 'GET https://partner.example/api/v1/igaming/customers?page=1&per_page=2: HTTP 422 Unprocessable Entity: ';
    assert.ok(error.message.startsWith(`${prefix}{"errors":"xxx`), error.message);
    assert.equal(error.message.length - prefix.length, 300);
    assert.deepEqual(time.sleeps, []);
    assert.equal(source.stats.requests, 1);
  });

  it('a malformed JSON page is a clear SourceError after retrying it', async () => {
    nock(BASE).get(PATH).query(true).times(2).reply(200, '{"data": [ {"customer_id": "a"} ');
    const source = createRestSource(restSource({ retries: { ...POLICY, max: 1 } }), testDeps(fakeTime()));
    const error = await rejection(collect(source, restStream()));
    assert.ok(error instanceof SourceError);
    assert.match(error.message, /^GET https:\/\/partner\.example\/api\/v1\/igaming\/customers\?page=1&per_page=2: HTTP 200 but the body is not valid JSON \(.+\): \{"data": \[ \{"customer_id": "a"\} \(gave up after 1 retry\)$/);
    assert.equal(source.stats.retries, 1);
  });

  it('does not follow redirects (they could carry credentials elsewhere)', async () => {
    nock(BASE).get(PATH).query(true).reply(302, '', { Location: 'http://elsewhere.example/x?token=abc' });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const error = await rejection(collect(source, restStream()));
    assert.match(error.message, /HTTP 302: the partner redirects to http:\/\/elsewhere\.example\/x\?token=\*\*\*; redirects are not followed/);
  });

  it('429 with Retry-After in seconds: waits that long (by the injected sleep), counted as throttled', async () => {
    nock(BASE).get(PATH).query(true).reply(429, '', { 'Retry-After': '7' }).get(PATH).query(true).reply(200, { data: [] });
    const time = fakeTime();
    const source = createRestSource(restSource(), testDeps(time));
    await collect(source, restStream());
    assert.deepEqual(time.sleeps, [7000]);
    assert.deepEqual(source.stats, { requests: 2, retries: 0, throttled: 1, waitedMs: 7000 });
  });

  it('429 with Retry-After as an HTTP-date: waits until then by the injected clock', async () => {
    const until = new Date(START + 42_000).toUTCString();
    nock(BASE).get(PATH).query(true).reply(429, '', { 'Retry-After': until }).get(PATH).query(true).reply(200, { data: [] });
    const time = fakeTime();
    const source = createRestSource(restSource(), testDeps(time));
    await collect(source, restStream());
    assert.deepEqual(time.sleeps, [42_000]);
  });

  it('429 without Retry-After: the backoff; a Retry-After above max_retry_after_ms: the cap', async () => {
    nock(BASE)
      .get(PATH)
      .query(true)
      .reply(429, '')
      .get(PATH)
      .query(true)
      .reply(429, '', { 'Retry-After': '3600' })
      .get(PATH)
      .query(true)
      .reply(200, { data: [] });
    const time = fakeTime();
    const source = createRestSource(restSource(), testDeps(time));
    await collect(source, restStream());
    assert.deepEqual(time.sleeps, [150, 120_000]);
    assert.equal(source.stats.throttled, 2);
  });

  it('429s are bounded too: after retries.max waits the request fails', async () => {
    nock(BASE).get(PATH).query(true).times(3).reply(429, 'slow down', { 'Retry-After': '1' });
    const time = fakeTime();
    const source = createRestSource(restSource({ retries: { ...POLICY, max: 2 } }), testDeps(time));
    const error = await rejection(collect(source, restStream()));
    assert.ok(error instanceof SourceError && !(error instanceof BudgetExhausted));
    assert.equal(error.status, 429);
    assert.match(error.message, /HTTP 429 Too Many Requests: slow down \(still throttled after 2 waits\)$/);
    assert.deepEqual(time.sleeps, [1000, 1000]);
    assert.equal(source.stats.throttled, 3);
  });

  it('a Retry-After that would end past the deadline throws BudgetExhausted instead of waiting', async () => {
    nock(BASE).get(PATH).query(true).reply(429, '', { 'Retry-After': '60' });
    const time = fakeTime();
    const source = createRestSource(restSource(), testDeps(time, { deadline: START + 30_000 }));
    const error = await rejection(collect(source, restStream()));
    assert.ok(error instanceof BudgetExhausted);
    assert.ok(error instanceof SourceError);
    assert.match(error.message, /HTTP 429 Too Many Requests.*Retry-After: waiting 60000 ms would end past the run's budget \(deadline 2026-03-01T00:00:30\.000Z, 30000 ms left\)/);
    assert.deepEqual(time.sleeps, []);
    assert.equal(source.stats.throttled, 1);
  });

  it('the default deadline is clock() + run_budget_ms; a backoff past it is BudgetExhausted', async () => {
    nock(BASE).get(PATH).query(true).reply(500, '');
    const source = createRestSource(restSource({ run_budget_ms: 100 }), testDeps(fakeTime()));
    const error = await rejection(collect(source, restStream()));
    assert.ok(error instanceof BudgetExhausted);
    assert.match(error.message, /backoff before retry 1: waiting 150 ms would end past the run's budget/);
  });
});

describe('rest retry: units', () => {
  it('parseRetryAfter: delta-seconds, HTTP-dates (past ones are 0), garbage is undefined', () => {
    const now = new Date(START);
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter(new Date(START + 5000).toUTCString(), now), 5000);
    assert.equal(parseRetryAfter('Sun, 01 Mar 2026 00:00:10 GMT', now), 10_000);
    assert.equal(parseRetryAfter('Sat, 28 Feb 2026 23:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter(undefined, now), undefined);
    assert.equal(parseRetryAfter('', now), undefined);
    assert.equal(parseRetryAfter('-5', now), undefined);
    assert.equal(parseRetryAfter('soon', now), undefined);
  });

  it('backoffDelay: within [min_delay_ms, min(max_delay_ms, min_delay_ms * 2^n)]', () => {
    assert.equal(backoffDelay(1, POLICY, () => 0), 100);
    assert.equal(backoffDelay(1, POLICY, () => 0.999999), 200);
    assert.equal(backoffDelay(3, POLICY, () => 0.999999), 800);
    assert.equal(backoffDelay(10, POLICY, () => 0.999999), 2000);
    assert.equal(backoffDelay(10, POLICY, () => 0), 100);
  });
});
