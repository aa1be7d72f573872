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

/** A read begun before its pages are wanted; `close()` ends it when they never will be. */
export interface EarlyRead<T> {
  pages: AsyncIterable<T>;
  close(): Promise<void>;
}

/**
 * Begins reading now (the first page is requested at once, then one page ahead as `readAhead`):
 * the next day's read starts while the current day's last writes and its commit finish.
 */
export function readEarly<T>(pages: AsyncIterable<T>): EarlyRead<T> {
  const iterator = readAhead(pages);
  const first = iterator.next();
  first.catch(() => undefined); // handled when the pages are read; not an unhandled rejection meanwhile
  return {
    pages: {
      async *[Symbol.asyncIterator]() {
        try {
          for (let next = await first; !next.done; next = await iterator.next()) yield next.value;
        } finally {
          await iterator.return(undefined);
        }
      },
    },
    async close() {
      await first.catch(() => undefined);
      await iterator.return(undefined);
    },
  };
}
