/**
 * Lets the event loop run between slices of a long piece of CPU work (validating and rendering a
 * batch), so that replies of the store and the source are handled as they arrive: a store
 * statement waiting for its next round trip does not wait for a whole batch's work.
 */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Records handled between two yields. */
export const SLICE = 1000;
