import assert from 'node:assert/strict';
import { MemoryRateLimiter, RATE_LIMIT_PER_MINUTE, StoreRateLimiter, type RateDecision } from '../../src/api/rate-limit.js';
import { STORES, type TestStore } from '../support/stores.js';

const T = 1_795_000_000_000; // a whole second, in ms

describe('rate limit: requests per rolling minute per token', () => {
  it('is 1000 per minute by default (spec §8)', () => {
    assert.equal(RATE_LIMIT_PER_MINUTE, 1000);
    assert.equal(new MemoryRateLimiter().limit, 1000);
  });

  it('in one process: refuses past the limit within any 60 s, Retry-After until the oldest leave', () => {
    let now = T;
    const limiter = new MemoryRateLimiter(20, () => now);
    for (let i = 0; i < 10; i++) assert.equal(limiter.take('a').allowed, true);
    now = T + 30_000;
    for (let i = 0; i < 10; i++) assert.equal(limiter.take('a').allowed, true);
    assert.deepEqual(limiter.take('a'), { allowed: false, retryAfterS: 30 });
    assert.equal(limiter.take('b').allowed, true, 'another token has its own limit');
    now = T + 59_999;
    assert.equal(limiter.take('a').allowed, false);
    now = T + 60_000;
    assert.equal(limiter.take('a').allowed, true, 'the first ten left the window');
  });
});

for (const backend of STORES.filter((b) => b.name === 'postgres')) {
  describe(`rate limit shared through the store (${backend.name})`, () => {
    let t: TestStore;
    beforeEach(async () => (t = await backend.create()));
    afterEach(async () => t.drop());

    it('two limiters on one store admit the limit together, never more; the window rolls', async () => {
      let now = T;
      const a = new StoreRateLimiter(t.store, { limit: 50, chunk: 10, nowMs: () => now });
      const b = new StoreRateLimiter(t.store, { limit: 50, chunk: 10, nowMs: () => now });
      try {
        const decisions: RateDecision[] = [];
        // Concurrent takes on both, as two serve processes would see them.
        await Promise.all(Array.from({ length: 60 }, async (_, i) => decisions.push(await (i % 2 === 0 ? a : b).take('tok'))));
        assert.equal(decisions.filter((d) => d.allowed).length, 50);
        const refused = decisions.filter((d) => !d.allowed);
        assert.equal(refused.length, 10);
        for (const d of refused) assert.equal(d.retryAfterS, 60);
        now = T + 60_000;
        assert.equal((await a.take('tok')).allowed, true, 'a minute later the window is free again');
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('many tokens claiming at once (their claims share round trips): each gets exactly its own limit, with its own Retry-After', async () => {
      let now = T;
      const a = new StoreRateLimiter(t.store, { limit: 6, chunk: 2, nowMs: () => now });
      const b = new StoreRateLimiter(t.store, { limit: 6, chunk: 2, nowMs: () => now });
      try {
        const keys = Array.from({ length: 25 }, (_, k) => `tok-${k}`);
        // tok-0 used 4 of its 6 half a minute earlier: its refusals end sooner than the others'.
        assert.ok((await Promise.all([1, 2, 3, 4].map(() => a.take('tok-0')))).every((d) => d.allowed));
        now = T + 30_000;
        const decisions = new Map<string, RateDecision[]>(keys.map((k) => [k, []]));
        await Promise.all(keys.flatMap((k) => Array.from({ length: 9 }, async (_, i) => decisions.get(k)?.push(await (i % 2 === 0 ? a : b).take(k)))));
        for (const k of keys) {
          const got = decisions.get(k) ?? [];
          const allowed = got.filter((d) => d.allowed).length;
          assert.equal(allowed, k === 'tok-0' ? 2 : 6, k);
          for (const d of got.filter((x) => !x.allowed)) assert.equal(d.retryAfterS, k === 'tok-0' ? 30 : 60, k);
        }
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('gives unused quota back: a lease of an earlier second returns to the store', async () => {
      let now = T;
      const a = new StoreRateLimiter(t.store, { limit: 80, chunk: 10, nowMs: () => now });
      const b = new StoreRateLimiter(t.store, { limit: 80, chunk: 10, nowMs: () => now });
      try {
        assert.equal((await a.take('tok')).allowed, true); // a holds a lease of 10, 9 unused
        now = T + 1000;
        await a.close(); // gives the 9 back
        let allowed = 0;
        for (let i = 0; i < 100; i++) if ((await b.take('tok')).allowed) allowed++;
        assert.equal(allowed, 79);
      } finally {
        await b.close();
      }
    });
  });
}
