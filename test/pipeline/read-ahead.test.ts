import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { readAhead } from '../../src/pipeline/read-ahead.js';

describe('readAhead', () => {
  it('fetches page n+1 while page n is being loaded, and yields every page in order', async () => {
    const events: string[] = [];
    async function* pages() {
      for (let i = 1; i <= 3; i++) {
        events.push(`fetch ${i}`);
        await sleep(5);
        yield i;
      }
    }
    const seen: number[] = [];
    for await (const page of readAhead(pages())) {
      events.push(`load ${page} start`);
      await sleep(20);
      events.push(`load ${page} end`);
      seen.push(page);
    }
    assert.deepEqual(seen, [1, 2, 3]);
    // page 2 was requested before page 1 finished loading
    assert.ok(events.indexOf('fetch 2') < events.indexOf('load 1 end'), events.join(', '));
  });

  it('surfaces an error of the page fetched ahead when that page is reached', async () => {
    async function* pages() {
      yield 1;
      throw new Error('partner failed on page 2');
    }
    const seen: number[] = [];
    await assert.rejects(async () => {
      for await (const page of readAhead(pages())) seen.push(page);
    }, /partner failed on page 2/);
    assert.deepEqual(seen, [1]);
  });

  it('closes the source when the consumer stops early', async () => {
    let closed = false;
    async function* pages() {
      try {
        for (let i = 1; ; i++) yield i;
      } finally {
        closed = true;
      }
    }
    for await (const page of readAhead(pages())) if (page === 2) break;
    assert.ok(closed);
  });
});
