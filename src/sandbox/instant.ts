/**
 * Date-times at full precision. Partner timestamps carry milliseconds, microseconds or more, and
 * JavaScript's Date keeps only milliseconds, so the sandbox never compares Dates: it turns each
 * ISO 8601 date-time into a sortable key (the UTC second, then the fraction without trailing
 * zeros) that compares correctly as a plain string at any precision.
 */
import { parseDateTime } from '../kernel/timestamp.js';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const MS_PER_DAY = 86_400_000;
export const MICROS_PER_DAY = 86_400_000_000;

/**
 * The sortable key of an RFC 3339 date-time, or undefined when the text is not one (or names a day
 * that is not in the calendar). Keys of equal instants are equal (`...00.5Z` and `...02:00.500+02:00`),
 * and string order is time order: `2026-11-02T10:00:00.` + `123` < `...` + `123456`.
 */
export function instantKey(text: string): string | undefined {
  // The service's own rules for a date-time (../kernel/timestamp.ts): a leap second is not an instant here either.
  let utc: string;
  try {
    utc = parseDateTime(text);
  } catch {
    return undefined;
  }
  const zone = (text.charCodeAt(text.length - 1) | 32) === 122 ? text.length - 1 : text.length - 6;
  const fraction = zone > 20 ? text.slice(20, zone) : '';
  return `${utc.slice(0, 19)}.${fraction.replace(/0+$/, '')}`;
}

/**
 * instantKey for a query parameter: an unencoded `+` of an offset arrives as a space
 * (`?since=2026-11-02T10:00:00+02:00`), which is taken back as `+`.
 */
export function queryInstantKey(text: string): string | undefined {
  return instantKey(text.replace(/ (\d{2}:\d{2})$/, '+$1'));
}

function utcMs(y: number, mo: number, d: number, h = 0, mi = 0, s = 0): number | undefined {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  // A day past the month's end rolls over into the next month: not in the calendar.
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return undefined;
  return date.getTime();
}

/** The day number (days since 1970-01-01) of a calendar date YYYY-MM-DD, or undefined. */
export function parseDay(text: string): number | undefined {
  const m = DATE.exec(text);
  if (m === null) return undefined;
  const ms = utcMs(Number(m[1]), Number(m[2]), Number(m[3]));
  return ms === undefined ? undefined : ms / MS_PER_DAY;
}

/** YYYY-MM-DD of a day number. */
export function formatDay(day: number): string {
  return new Date(day * MS_PER_DAY).toISOString().slice(0, 10);
}

/** The day number of the UTC day a Date falls on. */
export function dayOf(date: Date): number {
  return Math.floor(date.getTime() / MS_PER_DAY);
}

/** Day of the week of a day number: 0 Sunday ... 6 Saturday. */
export function weekday(day: number): number {
  return new Date(day * MS_PER_DAY).getUTCDay();
}

/**
 * An ISO date-time in UTC from microseconds since the epoch: with millisecond precision
 * (`...10:00:00.123Z`, the microseconds dropped) or microsecond precision (`...10:00:00.123456Z`).
 */
export function formatMicros(micros: number, precision: 'ms' | 'us'): string {
  const whole = Math.floor(micros);
  const iso = new Date(Math.floor(whole / 1000)).toISOString();
  if (precision === 'ms') return iso;
  return `${iso.slice(0, 23)}${String(((whole % 1000) + 1000) % 1000).padStart(3, '0')}Z`;
}
