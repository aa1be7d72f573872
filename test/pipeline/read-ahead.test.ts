import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { readAhead, readEarly } from '../../src/pipeline/read-ahead.js';

/** An endless source of pages that tells whether it was closed. */
function endless(): { pages: AsyncGenerator<number>; closed(): boolean } {
  let closed = false;
  async function* pages() {
    try {
      for (let i = 1; ; i++) yield i;
    } finally {
      closed = true;
    }
  }
  return { pages: pages(), closed: () => closed };
}

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
    const source = endless();
    for await (const page of readAhead(source.pages)) if (page === 2) break;
    assert.ok(source.closed());
  });
});

describe('readEarly', () => {
  it('requests the first page at once, before the pages are iterated, and yields every page in order', async () => {
    const events: string[] = [];
    async function* pages() {
      for (let i = 1; i <= 3; i++) {
        events.push(`fetch ${i}`);
        yield i;
      }
    }
    const early = readEarly(pages());
    await sleep(5);
    assert.deepEqual(events.slice(0, 1), ['fetch 1']);
    const seen: number[] = [];
    for await (const page of early.pages) seen.push(page);
    assert.deepEqual(seen, [1, 2, 3]);
  });

  it('close() ends a read whose pages are never taken: the source is closed', async () => {
    const source = endless();
    const early = readEarly(source.pages);
    await early.close();
    assert.equal(source.closed(), true);
  });

  it('a failure of the first page surfaces when the pages are read, not before', async () => {
    async function* pages(): AsyncGenerator<number> {
      await sleep(1);
      throw new Error('budget spent');
      yield 0; // eslint wants a yield in a generator; never reached
    }
    const early = readEarly(pages());
    await sleep(5); // no unhandled rejection meanwhile (mocha would report it)
    await assert.rejects(async () => {
      for await (const page of early.pages) assert.fail(`unexpected page ${page}`);
    }, /budget spent/);
  });
});
