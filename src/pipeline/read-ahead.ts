/**
 * Reads one page ahead: while the pipeline loads page n, the source is already fetching page
 * n+1 (a request in flight, a database cursor fetching), so waiting and loading overlap instead
 * of taking turns. An error of the page fetched ahead surfaces when that page is reached.
 */
export async function* readAhead<T>(pages: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = pages[Symbol.asyncIterator]();
  let pending = iterator.next();
  try {
    for (;;) {
      const result = await pending;
      if (result.done) return;
      pending = iterator.next();
      pending.catch(() => undefined); // handled when awaited above; not an unhandled rejection meanwhile
      yield result.value;
    }
  } finally {
    await iterator.return?.();
  }
}
