/**
 * Time, as the worker sees it: the current instant and one-shot timers. Passed in (never read deep
 * inside), so that a simulated UTC day of schedules runs in a test without waiting for it.
 */
import type { Clock } from '../kernel/clock.js';

export type TimerHandle = { readonly id: unknown };

export interface Timers {
  now(): Date;
  /** Calls `fn` once, `ms` from now (ms ≥ 0). */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** This clock and Node's timers (a pending timer keeps the process alive: the daemon's loop is one). */
export function clockTimers(clock: Clock): Timers {
  return {
    now: clock,
    setTimeout(fn, ms) {
      return { id: setTimeout(fn, Math.max(0, Math.min(ms, 2_147_483_647))) };
    },
    clearTimeout(handle) {
      clearTimeout(handle.id as NodeJS.Timeout);
    },
  };
}

/** Resolves after `ms` on these timers. */
export function sleep(timers: Timers, ms: number): Promise<void> {
  return new Promise((resolve) => timers.setTimeout(resolve, ms));
}
