/**
 * The clock every module takes instead of reading `Date.now()` deep inside: sources, the store,
 * windows, tokens and freshness deadlines are then testable without waiting. It sits below the
 * store and the connectors so that a source need not know the store to be told the time.
 *
 * A process (a command, the worker, `serve`) takes its clock once, from `processClock`: the
 * machine's, or, for tests only, one that starts at a given instant and runs from there. A test
 * that loads data at an injected time can then run a command as a subprocess on the same day, and
 * no test depends on the day it runs.
 */
import { isDateTime, isLeapSecond } from './timestamp.js';

export type Clock = () => Date;
export const systemClock: Clock = () => new Date();

/** Set to `1` to let `TEST_CLOCK_NOW` set the clock; nothing else reads it. */
export const TEST_CLOCK_SWITCH = 'PARTNER_SYNC_TEST';
/** An RFC 3339 instant with a zone (`2026-11-22T10:00:00Z`): the process's clock starts there and runs. */
export const TEST_CLOCK_NOW = 'PARTNER_SYNC_TEST_NOW';

export class ClockSettingError extends Error {}

/**
 * The clock of this process: the machine's, unless the test switch is on and `TEST_CLOCK_NOW`
 * names an instant. A test clock set without the switch, or an instant that is not one, is an
 * error rather than a silent fall back to either clock.
 */
export function processClock(env: NodeJS.ProcessEnv = process.env, base: Clock = systemClock): Clock {
  const at = env[TEST_CLOCK_NOW];
  if (at === undefined || at === '') return base;
  if (env[TEST_CLOCK_SWITCH] !== '1') {
    throw new ClockSettingError(`${TEST_CLOCK_NOW} is set (${at}) but ${TEST_CLOCK_SWITCH} is not 1: the test clock is for tests only; unset ${TEST_CLOCK_NOW} to run on the machine's clock`);
  }
  // The rules of every date-time the service reads (./timestamp.ts): Date.parse alone takes 2031-02-30 as 2 March.
  const start = isDateTime(at) && !isLeapSecond(at) && !at.startsWith('0000') ? Date.parse(at) : Number.NaN;
  if (Number.isNaN(start)) throw new ClockSettingError(`${TEST_CLOCK_NOW} must be an RFC 3339 date-time with a zone such as 2026-11-22T10:00:00Z, got ${JSON.stringify(at)}`);
  return offsetClock(base, start - base().getTime());
}

/** `base` moved by `offsetMs`: it runs at the same rate. */
export function offsetClock(base: Clock, offsetMs: number): Clock {
  return offsetMs === 0 ? base : () => new Date(base().getTime() + offsetMs);
}

/** The environment that gives a subprocess this clock's current instant as its start (tests). */
export function clockEnv(clock: Clock): Record<string, string> {
  return { [TEST_CLOCK_SWITCH]: '1', [TEST_CLOCK_NOW]: clock().toISOString() };
}
