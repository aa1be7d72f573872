/**
 * The clock every module takes instead of reading `Date.now()` deep inside: sources, the store,
 * windows, tokens and freshness deadlines are then testable without waiting. It sits below the
 * store and the connectors so that a source need not know the store to be told the time.
 */
export type Clock = () => Date;
export const systemClock: Clock = () => new Date();
