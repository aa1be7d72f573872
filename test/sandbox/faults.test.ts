import assert from 'node:assert/strict';
import type { Sandbox } from '../../src/sandbox/server.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { CLIENT, errorOf, get, getPage, sandboxFor, token, walkCursor, type ManualClock } from './helpers.js';

describe('sandbox faults', () => {
  let sandbox: Sandbox & { clock: ManualClock };
  let access: string;
  beforeEach(async () => {
    sandbox = await sandboxFor({ customers: 30 });
    access = await token(sandbox);
  });
  afterEach(() => sandbox.close());

  const statuses = async (box: Sandbox, accessToken: string, n: number) => {
    const seen: number[] = [];
    for (let i = 0; i < n; i++) {
      const res = await get(box, accessToken, '/api/v1/igaming/customers', { per_page: 1 });
      await res.arrayBuffer();
      seen.push(res.status);
    }
    return seen;
  };

  it('are all off by default', () => {
    assert.deepEqual(sandbox.faults, {
      errorRate: 0, latencyMs: 0, throttleEvery: 0, throttleRetryAfter: 1, retryAfterAsDate: false,
      tokenTtlSeconds: undefined, duplicateAcrossPages: false, malformedEvery: 0, repeatCursor: false, emptyPages: false,
    });
  });

  it('errorRate answers that fraction of API requests 500/502/503, the same sequence for the same seed', async () => {
    sandbox.faults.errorRate = 0.3;
    const first = await statuses(sandbox, access, 60);
    const failed = first.filter((s) => s >= 500);
    assert.ok(failed.length > 5 && failed.length < 35, `${failed.length} of 60 failed`);
    assert.ok(failed.every((s) => s === 500 || s === 502 || s === 503));
    assert.equal(sandbox.stats().serverErrorsInjected, failed.length);

    const twin = await sandboxFor({ customers: 30, faults: { errorRate: 0.3 } });
    try {
      assert.deepEqual(await statuses(twin, await token(twin), 60), first);
    } finally {
      await twin.close();
    }
  });

  it('a 502 is a gateway’s HTML page; 500 and 503 are JSON errors', async () => {
    sandbox.faults.errorRate = 1;
    const bodies = new Map<number, string>();
    for (let i = 0; i < 30 && bodies.size < 3; i++) {
      const res = await get(sandbox, access, '/api/v1/igaming/customers');
      bodies.set(res.status, `${res.headers.get('content-type')} ${await res.text()}`);
    }
    assert.match(String(bodies.get(502)), /^text\/html.*502 Bad Gateway/);
    assert.match(String(bodies.get(500)), /^application\/json.*"error":"server_error"/);
    assert.match(String(bodies.get(503)), /^application\/json.*"error":"temporarily_unavailable"/);
  });

  it('latencyMs delays each partner request', async () => {
    sandbox.faults.latencyMs = 120;
    const started = Date.now();
    await (await get(sandbox, access, '/api/v1/igaming/customers')).arrayBuffer();
    assert.ok(Date.now() - started >= 110);
  });

  it('throttleEvery answers every Nth API request 429 with Retry-After throttleRetryAfter', async () => {
    Object.assign(sandbox.faults, { throttleEvery: 3, throttleRetryAfter: 7 });
    const seen = await statuses(sandbox, access, 9);
    assert.deepEqual(seen, [200, 200, 429, 200, 200, 429, 200, 200, 429]);
    const res = await get(sandbox, access, '/api/v1/igaming/customers');
    await get(sandbox, access, '/api/v1/igaming/customers');
    const third = await get(sandbox, access, '/api/v1/igaming/customers');
    assert.equal(res.status, 200);
    assert.equal(third.status, 429);
    assert.equal(third.headers.get('retry-after'), '7');
    assert.equal(sandbox.stats().throttled, 4);
    sandbox.faults.retryAfterAsDate = true;
    await statuses(sandbox, access, 2);
    const dated = await get(sandbox, access, '/api/v1/igaming/customers');
    assert.equal(dated.headers.get('retry-after'), new Date(sandbox.clock().getTime() + 7000).toUTCString());
  });

  it('tokenTtlSeconds overrides the lifetime of tokens issued while it is set', async () => {
    sandbox.faults.tokenTtlSeconds = 2;
    const res = await fetch(`${sandbox.url}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', ...CLIENT }) });
    const body = (await res.json()) as { access_token: string; expires_in: number };
    assert.equal(body.expires_in, 2);
    sandbox.clock.advance(2000);
    assert.equal((await errorOf(await get(sandbox, body.access_token, '/api/v1/igaming/customers'))).error, 'invalid_token');
    assert.equal((await get(sandbox, access, '/api/v1/igaming/customers')).status, 200, 'earlier tokens keep their lifetime');
  });

  it('duplicateAcrossPages repeats the last record of each page as the first of the next (page and cursor)', async () => {
    sandbox.faults.duplicateAcrossPages = true;
    const all = sandbox.data.customers('igaming');
    const p1 = await getPage(sandbox, access, '/api/v1/igaming/customers', { per_page: 10 });
    const p2 = await getPage(sandbox, access, '/api/v1/igaming/customers', { per_page: 10, page: 2 });
    const p3 = await getPage(sandbox, access, '/api/v1/igaming/customers', { per_page: 10, page: 3 });
    assert.deepEqual(p2.data[0], p1.data.at(-1));
    assert.deepEqual(p3.data[0], p2.data.at(-1));
    assert.equal(p1.meta.total, 30);
    const walked = await walkCursor(sandbox, access, '/api/v1/igaming/customers', { per_page: 10 });
    assert.equal(walked.pages, 4, '30 records, 9 new per page after the first');
    const unique = new Map(walked.records.map((r) => [r.customer_id, r]));
    assert.deepEqual([...unique.values()], all, 'nothing lost');
    assert.equal(walked.records.length, 33);
  });

  it('malformedEvery truncates every Nth page body', async () => {
    sandbox.faults.malformedEvery = 2;
    const texts: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await get(sandbox, access, '/api/v1/igaming/customers', { per_page: 3 });
      assert.equal(res.status, 200);
      texts.push(await res.text());
    }
    const parses = texts.map((t) => {
      try {
        JSON.parse(t);
        return true;
      } catch {
        return false;
      }
    });
    assert.deepEqual(parses, [true, false, true, false]);
    assert.ok(texts[0]!.startsWith(texts[1]!), 'a truncated copy of the page');
    assert.equal(sandbox.stats().malformedInjected, 2);
  });

  it('repeatCursor: next_cursor never changes (an endless-pagination partner)', async () => {
    sandbox.faults.repeatCursor = true;
    const first = await getPage(sandbox, access, '/api/v1/igaming/customers', { per_page: 10 });
    const cursor = first.meta.next_cursor as string;
    for (let i = 0; i < 4; i++) {
      const page = await getPage(sandbox, access, '/api/v1/igaming/customers', { per_page: 10, cursor });
      assert.equal(page.meta.next_cursor, cursor);
      assert.equal(page.data.length, 10);
    }
    const last = await getPage(sandbox, access, '/api/v1/igaming/customers', { page: 1, per_page: 500 });
    assert.equal(typeof last.meta.next_cursor, 'string', 'even past the last record');
  });

  it('can be set from the start, and are checked', async () => {
    await assert.rejects(startSandbox({ faults: { errorRate: 2 } }), /errorRate: must be a number from 0 to 1, got 2/);
    await assert.rejects(startSandbox({ faults: { nope: true } as never }), /unknown fault "nope"; faults are errorRate, latencyMs/);
  });
});
