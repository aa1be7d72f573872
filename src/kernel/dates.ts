/**
 * Calendar helpers on UTC text: days `YYYY-MM-DD`, months `YYYY-MM`, store timestamps
 * `YYYY-MM-DDTHH:MM:SS.ffffffZ` (fixed width, so text order is time order).
 */
import { toUtcTimestamp } from './timestamp.js';

const DAY_MS = 86_400_000;

/** Any spec or store date-time → its UTC day. */
export function utcDay(timestamp: string): string {
  return toUtcTimestamp(timestamp).slice(0, 10);
}

export function monthOf(day: string): string {
  return day.slice(0, 7);
}

export function addDays(day: string, days: number): string {
  const ms = Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10))) + days * DAY_MS;
  return new Date(ms).toISOString().slice(0, 10);
}

/** Store timestamp + days (microseconds kept). */
export function addDaysToTimestamp(timestamp: string, days: number): string {
  const ts = toUtcTimestamp(timestamp);
  return addDays(ts.slice(0, 10), days) + ts.slice(10);
}

export function firstDayOf(month: string): string {
  return `${month}-01`;
}

export function nextMonth(month: string): string {
  const y = Number(month.slice(0, 4));
  const m = Number(month.slice(5, 7));
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
}

export function lastDayOf(month: string): string {
  return addDays(firstDayOf(nextMonth(month)), -1);
}

/** True for a real calendar day in `YYYY-MM-DD`. */
export function isDay(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const d = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === text;
}

export function isMonth(text: string): boolean {
  return /^\d{4}-(0[1-9]|1[0-2])$/.test(text);
}
