import assert from 'node:assert/strict';
import nock from 'nock';
import { BudgetExhausted, type SourceStats } from '../../connectors/source.js';
import { createBudget } from '../../connectors/rest/budget.js';
import { createRateLimiter } from '../../connectors/rest/rate-limiter.js';
import { createRestSource } from '../../connectors/rest/source.js';
import { BASE, collect, fakeTime, PATH, records, rejection, restSource, restStream, START, testDeps, useNock, type FakeTime } from './fixtures.js';

const WINDOW = 60_000;

/** The most requests any rolling window of `WINDOW` ms holds. */
function busiestWindow(times: number[]): number {
  let most = 0;
  for (const start of times) most = Math.max(most, times.filter((t) => t >= start && t < start + WINDOW).length);
  return most;
}

function limiter(time: FakeTime, perMinute: number, deadline = START + 3_600_000) {
  const stats: SourceStats = { requests: 0, retries: 0, throttled: 0, waitedMs: 0 };
  const budget = createBudget({ clock: time.clock, sleep: time.sleep, deadline, stats });
  return { limiter: createRateLimiter(perMinute, { clock: time.clock, budget }), stats };
}

describe('rest rate limiter (sliding log)', () => {
  it('never lets more than N requests into any rolling window: 5 per minute, 12 requests', async () => {
    const time = fakeTime();
    const { limiter: limit, stats } = limiter(time, 5);
    const sent: number[] = [];
    for (let i = 0; i < 12; i += 1) {
      await limit.acquire();
      sent.push(time.now() - START);
      time.advance(1000); // each request takes a second
    }
    assert.deepEqual(sent, [0, 1000, 2000, 3000, 4000, 60_000, 61_000, 62_000, 63_000, 64_000, 120_000, 121_000]);
    assert.equal(busiestWindow(sent), 5);
    assert.equal(stats.waitedMs, 2 * 55_000);
  });

  it('is a rolling window, not a fixed minute: no 2N burst across a minute boundary', async () => {
    const time = fakeTime(START + 59_000); // one second before a minute boundary
    const { limiter: limit } = limiter(time, 5);
    const sent: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      await limit.acquire();
      sent.push(time.now());
    }
    assert.equal(busiestWindow(sent), 5);
    assert.equal(sent[5], START + 59_000 + WINDOW);
  });

  it('parallel callers take turns and still respect the limit', async () => {
    const time = fakeTime();
    const { limiter: limit } = limiter(time, 3);
    const sent: number[] = [];
    await Promise.all(Array.from({ length: 7 }, () => limit.acquire().then(() => sent.push(time.now() - START))));
    assert.equal(sent.length, 7);
    assert.equal(busiestWindow(sent), 3);
  });

  it('a wait past the deadline is BudgetExhausted', async () => {
    const time = fakeTime();
    const { limiter: limit } = limiter(time, 2, START + 10_000);
    await limit.acquire();
    await limit.acquire();
    const error = await rejection(limit.acquire());
    assert.ok(error instanceof BudgetExhausted);
    assert.match(error.message, /^rate limit of 2 requests per 60 s: waiting 60000 ms would end past the run's budget/);
  });
});

describe('rest source: requests_per_minute', () => {
  useNock();

  it('paces the pages of a stream: 5 per minute over 13 requests, no rolling minute above 5, waits in stats', async () => {
    const time = fakeTime();
    const sent: number[] = [];
    let page = 0;
    nock(BASE)
      .get(PATH)
      .query(true)
      .times(13)
      .reply(() => {
        sent.push(time.now() - START);
        page += 1;
        time.advance(200);
        return [200, { data: page <= 12 ? records(`r${page}`) : [] }];
      });
    const source = createRestSource(restSource({ requests_per_minute: 5 }), testDeps(time));
    const pages = await collect(source, restStream());
    assert.equal(pages.length, 12);
    assert.equal(sent.length, 13);
    assert.equal(busiestWindow(sent), 5);
    assert.deepEqual(sent.slice(4, 7), [800, 60_000, 60_200]);
    assert.equal(source.stats.waitedMs, time.sleeps.reduce((a, b) => a + b, 0));
    assert.ok(source.stats.waitedMs > 0);
  });
});
