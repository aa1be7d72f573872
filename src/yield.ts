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
