/**
 * Calendar helpers on UTC text: days `YYYY-MM-DD`, months `YYYY-MM`, store timestamps
 * `YYYY-MM-DDTHH:MM:SS.ffffffZ` (fixed width, so text order is time order).
 */
import { toUtcTimestamp } from './timestamp.js';


/** Any spec or store date-time → its UTC day. */
export function utcDay(timestamp: string): string {
  return toUtcTimestamp(timestamp).slice(0, 10);
}

export function monthOf(day: string): string {
  return day.slice(0, 7);
}

/**
 * A day plus `days`, on integers (the proleptic Gregorian calendar's day numbers): detection and
 * commissions call it for every day of every window, where building a Date and its ISO text cost
 * a tenth of a bulk run. Years 0001-0099 stay in their century (Date.UTC reads them as 19xx).
 */
export function addDays(day: string, days: number): string {
  const y = Number(day.slice(0, 4));
  const m = Number(day.slice(5, 7));
  const d = Number(day.slice(8, 10)) + days;
  // Within the month's first 28 days: no calendar needed.
  if (d >= 1 && d <= 28 && Number.isInteger(d)) return `${day.slice(0, 8)}${d < 10 ? '0' : ''}${d}`;
  const [yy, mm, dd] = civilFromDays(daysFromCivil(y, m, 1) + d - 1);
  return `${String(yy).padStart(4, '0')}-${mm < 10 ? '0' : ''}${mm}-${dd < 10 ? '0' : ''}${dd}`;
}

/** Days since 1970-01-01 of a (year, month 1-12, day) (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The (year, month, day) of a day number since 1970-01-01 (civil_from_days). */
function civilFromDays(n: number): [number, number, number] {
  const z = n + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

/** Days from `from` to `to`, both included. */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) out.push(day);
  return out;
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
