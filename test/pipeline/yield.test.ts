/**
 * eachInSlices (src/yield.ts): a long piece of CPU work over many items lets the event loop run
 * between its slices, so a reply another job waits for is handled while it goes on, and every item
 * is still handled once, in order.
 */
import assert from 'node:assert/strict';
import { eachInSlices } from '../../src/yield.js';

describe('eachInSlices', () => {
  it('handles every item once, in order, from an array, a Map and a generator', async () => {
    const seen: number[] = [];
    await eachInSlices([1, 2, 3, 4, 5], 2, (n) => seen.push(n));
    await eachInSlices(new Map([[6, 'a'], [7, 'b']]).keys(), 1, (n) => seen.push(n));
    await eachInSlices((function* () { yield 8; yield 9; })(), 100, (n) => seen.push(n));
    await eachInSlices([], 3, (n: number) => seen.push(n));
    assert.deepEqual(seen, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('lets a waiting callback run between slices, not only at the end', async () => {
    const order: string[] = [];
    // What another job's statement reply looks like to this process: a callback due at once.
    setImmediate(() => order.push('reply'));
    await eachInSlices(Array.from({ length: 10 }, (_, i) => i), 4, (i) => order.push(`item ${i}`));
    const reply = order.indexOf('reply');
    // Handled after the first slice of 4 items, before the rest.
    assert.equal(reply, 4, order.join(', '));
    assert.equal(order.length, 11);
  });

  it('a slice larger than the items never yields: the work stays in one turn', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('reply'));
    await eachInSlices([1, 2, 3], 10, (i) => order.push(`item ${i}`));
    order.push('done');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(order, ['item 1', 'item 2', 'item 3', 'done', 'reply']);
  });
});
