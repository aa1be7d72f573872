/**
 * Lets the event loop run between slices of a long piece of CPU work (validating and rendering a
 * batch), so that replies of the store and the source are handled as they arrive: a store
 * statement waiting for its next round trip does not wait for a whole batch's work.
 */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Records handled between two yields: about a millisecond of work, so that a store statement's
 * reply (a COPY that may start, a savepoint released) waits at most that long for this process.
 */
export const SLICE = 250;

/**
 * Calls `fn` on each item, letting the event loop run every `slice` items: a bulk settle's CPU work
 * over tens of thousands of customers (the fraud rules' facts) does not hold up, for a second at a
 * time, the statements of the jobs evaluated beside it in the same process.
 */
export async function eachInSlices<T>(items: Iterable<T>, slice: number, fn: (item: T) => void): Promise<void> {
  let n = 0;
  for (const item of items) {
    if (n > 0 && n % slice === 0) await yieldToEventLoop();
    n += 1;
    fn(item);
  }
}
