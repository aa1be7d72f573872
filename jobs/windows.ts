/**
 * Which window a stream pulls, as pure functions of its stored state, its definition and the time
 * the run was scheduled for (not the wall clock deep inside: that is what makes reruns and
 * backfills land on the same windows).
 *
 * Cursor streams (customers, transactions): from the stream's start minus the lookback
 * (cursor-state.ts: the start follows the source's data, not our clock), the lower bound
 * inclusive, read without an upper limit (a record stamped in our future loads now); the upper
 * bound fixed when the run starts caps how far the start may move. Records changed inside the
 * lookback are re-pulled and upserted, which is harmless, while a strict `>` on the last value
 * seen loses rows that share it or that the partner commits late.
 *
 * Daily streams (activity): whole closed UTC days, the previous day and `late_days` before it,
 * plus any day missed since the last one loaded.
 */
import type { CursorWindow, DaysWindow, PullWindow } from '../connectors/source.js';
import type { Incremental } from '../src/config/definition.js';
import { addDays, daysBetween } from '../src/kernel/dates.js';
import { cut } from '../src/store/dialects.js';
import { currentStart, type CursorState } from './cursor-state.js';

/** State of a daily stream in sync_state. */
export interface DailyState {
  /** The latest day loaded by an incremental run. */
  last_day?: string;
  /** Recent days and when each last loaded. */
  days?: Record<string, string>;
  /** The last window was stopped by the reject-rate guard: why (a day that loads clears it). */
  halted?: { at?: string; detail: string };
}

export const utcDay = (date: Date): string => date.toISOString().slice(0, 10);

/** When a stream with no state starts: its `start`, else midnight UTC `fallbackDays` before `now`. */
function startOf(start: string | undefined, now: Date, fallbackDays: number): Date {
  if (start && start.trim() !== '') {
    const parsed = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(start) ? `${start}T00:00:00Z` : start);
    if (!Number.isNaN(parsed)) return new Date(parsed);
  }
  return new Date(`${addDays(utcDay(now), -fallbackDays)}T00:00:00.000Z`);
}

/**
 * An incremental run's cursor window: [start − lookback, ∞) read, `startedAt` the upper bound the
 * stream's start may move to. `from` is given when a window in progress is continued.
 */
export function cursorWindow(incremental: Extract<Incremental, { mode: 'cursor' }>, state: CursorState | undefined, startedAt: Date, from?: string): CursorWindow {
  const to = startedAt.toISOString();
  if (from !== undefined) return { kind: 'cursor', from, to, open: true };
  const start = currentStart(state);
  // Whole milliseconds, rounded down: the lower bound is inclusive, so rounding down only re-reads.
  const begin = start !== undefined
    ? new Date(Date.parse(`${start.slice(0, 23)}Z`) - incremental.lookback_ms)
    : startOf(incremental.start, startedAt, 30);
  return { kind: 'cursor', from: (begin.getTime() < startedAt.getTime() ? begin : startedAt).toISOString(), to, open: true };
}

/** Groups consecutive days into windows of at most `perWindow` days. */
export function dayWindows(days: readonly string[], perWindow = 1): DaysWindow[] {
  return cut(days, perWindow).map((group) => ({ kind: 'days', from: group[0] as string, to: group.at(-1) as string }));
}

/** The closed days an incremental run of a daily stream pulls, oldest first. */
export function dailyDays(incremental: Extract<Incremental, { mode: 'daily' }>, state: DailyState | undefined, scheduledFor: Date): string[] {
  const lastClosed = addDays(utcDay(scheduledFor), -1);
  let first = addDays(lastClosed, -incremental.late_days);
  if (state?.last_day) {
    const next = addDays(state.last_day, 1);
    if (next < first) first = next; // catch up on days missed while not running
  } else if (incremental.start && incremental.start.trim() !== '') {
    first = utcDay(startOf(incremental.start, scheduledFor, 0));
  }
  return daysBetween(first, lastClosed);
}

/** A backfill of closed days `from`..`to` (inclusive) through the same windows. */
export function backfillWindows(incremental: Incremental, from: string, to: string, daysPerWindow = 1): PullWindow[] {
  if (incremental.mode === 'daily') return dayWindows(daysBetween(from, to), daysPerWindow);
  return [{ kind: 'cursor', from: `${from}T00:00:00.000Z`, to: `${addDays(to, 1)}T00:00:00.000Z` }];
}

/** Keeps the `days` map of a daily state short. */
export function recordDay(state: DailyState | undefined, day: string, loadedAt: string, keep = 62): DailyState {
  const days = { ...(state?.days ?? {}), [day]: loadedAt };
  const kept = Object.keys(days).sort().slice(-keep);
  const lastDay = state?.last_day && state.last_day > day ? state.last_day : day;
  return { last_day: lastDay, days: Object.fromEntries(kept.map((d) => [d, days[d] as string])) };
}
