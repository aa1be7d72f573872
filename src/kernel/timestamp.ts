/**
 * Date-times on the wire and in the store. Two readers, kept apart on purpose:
 *
 * - Input from outside (record fields of `format: date-time`, the API's `modified_since`, a CLI
 *   `--before`): `dateTimeProblem`, `isDateTime` and `parseDateTime`, exactly RFC 3339 §5.6
 *   `date-time`: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`. Chosen where the RFC leaves room:
 *   `t` and `z` may be lower case (§5.6 allows it, as does the JSON Schema `date-time` format);
 *   a space instead of `T` is refused (only a note of §5.6 lets an application choose it; the
 *   schemas handed to partners say `date-time`, and a partner's validator refuses it); an offset
 *   has hours 00–23, minutes 00–59, a colon and both parts (`+01`, `+0100` are ISO 8601, not RFC
 *   3339); a fraction may have any number of digits. Second 60 is a leap second only at 23:59
 *   UTC (the time minus its offset): `isDateTime` accepts it, as RFC 3339 does, but no store can
 *   hold it (below), so the validator refuses it by its own rule and `parseDateTime` throws.
 * - The service's own values (the store's text, a value that passed the rules above, a pull
 *   source's cursor value): `toUtcTimestamp`, which also reads the store's forms
 *   (`2026-01-01 10:00:00.000000+00`, PostgreSQL's output). Never hand it what a partner sends in a
 *   record or a client in a parameter.
 *
 * Both give one fixed-width UTC text, `YYYY-MM-DDTHH:MM:SS.ffffffZ`, so text order is time order
 * in both stores and every module that compares or buckets times agrees on the instant. The
 * fraction is cut to the store's six digits, never rounded: `06.999999999999999Z` is stored as
 * `06.999999Z`, in its own second (rounding would carry into the next second, or into second 60).
 *
 * Leap seconds are refused, not kept: PostgreSQL's timestamptz has no second 60 (it reads
 * `23:59:60` as the next day's midnight) and SQLite would keep the text, so the stores would
 * disagree; storing it as `23:59:59.999999` (as this service once did) changed the instant and lost
 * the fraction of `15:59:60.123-08:00`. A refused record is a reject the partner can see and
 * correct; a changed instant is not.
 *
 * The checks go character by character: they run for every date-time of every record, and the
 * regular expressions' match arrays were a good share of a bulk load's garbage.
 */

const ZERO = 48;
const NINE = 57;
const DASH = 45;
const COLON = 58;
const DOT = 46;
const PLUS = 43;
const UPPER_T = 84;
const LOWER_T = 116;
const UPPER_Z = 90;
const LOWER_Z = 122;
const SPACE = 32;
const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The form, for messages. */
export const DATE_TIME_FORM = 'YYYY-MM-DDTHH:MM:SS[.fraction] then Z or ±HH:MM';

/** A text that `parseDateTime` refuses, with the reason. */
export class DateTimeError extends Error {
  constructor(readonly reason: string, readonly value: string) {
    super(`date-time ${JSON.stringify(value)}: ${reason}`);
    this.name = 'DateTimeError';
  }
}

function two(text: string, at: number): number {
  const a = text.charCodeAt(at) - ZERO;
  const b = text.charCodeAt(at + 1) - ZERO;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

export function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/** Days of a month 1–12 in a year. */
export function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month] as number);
}

/**
 * The offset in minutes (east of UTC) of an RFC 3339 date-time, or the reason it is not one.
 * A number, not an object, so that the valid path allocates nothing.
 */
function scan(text: string): number | string {
  const n = text.length;
  if (n < 19) return `too short for ${DATE_TIME_FORM}`;
  const y1 = two(text, 0);
  const y2 = two(text, 2);
  if (y1 < 0 || y2 < 0 || text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH) return `the date must be YYYY-MM-DD`;
  const month = two(text, 5);
  const day = two(text, 8);
  if (month < 0 || day < 0) return `the date must be YYYY-MM-DD`;
  const sep = text.charCodeAt(10);
  if (sep !== UPPER_T && sep !== LOWER_T) return sep === SPACE ? 'date and time must be separated by T, not a space' : `the date must be followed by T and the time (${DATE_TIME_FORM})`;
  const hour = two(text, 11);
  const minute = two(text, 14);
  const second = two(text, 17);
  if (hour < 0 || minute < 0 || second < 0 || text.charCodeAt(13) !== COLON || text.charCodeAt(16) !== COLON) return 'the time must be HH:MM:SS';
  if (month < 1 || month > 12) return `month ${text.slice(5, 7)} does not exist`;
  const year = y1 * 100 + y2;
  if (day < 1 || day > daysInMonth(year, month)) return `day ${text.slice(8, 10)} is not in ${text.slice(0, 7)}`;
  if (hour > 23) return `hour ${text.slice(11, 13)} does not exist (00–23)`;
  if (minute > 59) return `minute ${text.slice(14, 16)} does not exist (00–59)`;
  if (second > 60) return `second ${text.slice(17, 19)} does not exist (00–59, 60 for a leap second)`;
  let i = 19;
  if (text.charCodeAt(i) === DOT) {
    i += 1;
    const start = i;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c < ZERO || c > NINE) break;
      i += 1;
    }
    if (i === start) return 'a decimal point must be followed by digits';
  }
  let offset: number;
  const z = text.charCodeAt(i);
  if (z === UPPER_Z || z === LOWER_Z) {
    if (i + 1 !== n) return `nothing may follow the zone Z`;
    offset = 0;
  } else if (z === PLUS || z === DASH) {
    if (n - i !== 6 || text.charCodeAt(i + 3) !== COLON) return 'an offset must be ±HH:MM, with minutes and a colon';
    const oh = two(text, i + 1);
    const om = two(text, i + 4);
    if (oh < 0 || om < 0) return 'an offset must be ±HH:MM, with minutes and a colon';
    if (oh > 23 || om > 59) return `offset ${text.slice(i)} does not exist (hours 00–23, minutes 00–59)`;
    offset = (z === DASH ? -1 : 1) * (oh * 60 + om);
  } else {
    return i === n ? 'a time zone is required: Z or ±HH:MM' : `unexpected ${JSON.stringify(text[i])} after the time (${DATE_TIME_FORM})`;
  }
  if (second === 60 && ((((hour * 60 + minute - offset) % 1440) + 1440) % 1440) !== 1439) {
    return 'second 60 (a leap second) exists only at 23:59 UTC';
  }
  return offset;
}

/** Why a text is not an RFC 3339 date-time, or undefined when it is one (a leap second at 23:59:60 UTC is one). */
export function dateTimeProblem(text: string): string | undefined {
  const r = scan(text);
  return typeof r === 'string' ? r : undefined;
}

/** True for an RFC 3339 date-time (the JSON Schema `date-time` format). */
export function isDateTime(text: string): boolean {
  return typeof scan(text) === 'number';
}

/** True for a date-time whose second is 60 (call on a text that isDateTime accepts). */
export function isLeapSecond(text: string): boolean {
  return text.charCodeAt(17) === 54 && text.charCodeAt(18) === ZERO;
}

/** The UTC year of an RFC 3339 date-time (after its offset), or undefined when it is not one. */
export function utcYear(text: string): number | undefined {
  const offset = scan(text);
  if (typeof offset === 'string') return undefined;
  return utcFields(text, offset).getUTCFullYear();
}

/** The date-time's second, shifted to UTC, as a Date (whole seconds; second 60 read as 59). */
function utcFields(text: string, offset: number): Date {
  const at = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0–99 as 1900–1999.
  at.setUTCFullYear(two(text, 0) * 100 + two(text, 2), two(text, 5) - 1, two(text, 8));
  const second = two(text, 17);
  at.setUTCHours(two(text, 11), two(text, 14) - offset, second === 60 ? 59 : second, 0);
  return at;
}

/**
 * An RFC 3339 date-time from outside → the store's UTC text (`YYYY-MM-DDTHH:MM:SS.ffffffZ`,
 * the fraction cut to six digits). Throws a DateTimeError with the reason for anything else, for
 * a leap second and for a year outside 0001–9999 in UTC (no store holds them).
 */
export function parseDateTime(text: string): string {
  const offset = scan(text);
  if (typeof offset === 'string') throw new DateTimeError(offset, text);
  if (isLeapSecond(text)) throw new DateTimeError('a leap second (second 60) cannot be stored', text);
  const zone = (text.charCodeAt(text.length - 1) | 32) === LOWER_Z ? text.length - 1 : text.length - 6;
  const fraction = zone > 20 ? text.slice(20, Math.min(zone, 26)).padEnd(6, '0') : '000000';
  const time = text.slice(11, 19);
  if (offset === 0 && !text.startsWith('0000')) return `${text.slice(0, 10)}T${time}.${fraction}Z`;
  const at = utcFields(text, offset);
  const year = at.getUTCFullYear();
  if (!(year >= 1 && year <= 9999)) throw new DateTimeError(`outside the years 0001–9999 in UTC (year ${year})`, text);
  return `${at.toISOString().slice(0, 19)}.${fraction}Z`;
}

/**
 * The service's own date-times → the store's UTC text: the store's text (SQLite's `...ffffffZ`;
 * PostgreSQL's `YYYY-MM-DD HH:MM:SS[.f]+00`), a value that passed the date-time rule, and the
 * ISO 8601 texts that pull sources' cursor columns hold (`+0100`, `+01`, a space before the
 * zone, a decimal comma), which no spec rule governs. Not for what partners send in records or
 * clients in parameters: that is parseDateTime. Throws for anything else, for a leap second and
 * for years outside 0001–9999 in UTC.
 */
export function toUtcTimestamp(value: string): string {
  // UTC values (what the store keeps and returns, what most partners send) without the
  // expression's match: a month's import and settle matched some 500 MB of garbage.
  const utc = plainUtc(value);
  if (utc !== undefined) return utc;
  const m = STORE_OR_SOURCE.exec(value);
  if (!m) throw new DateTimeError(`not of the form ${DATE_TIME_FORM}`, value);
  const [, y, mo, d, h, mi, s, frac = '', zone = 'Z'] = m;
  if (s === '60') throw new DateTimeError('a leap second (second 60) cannot be stored', value);
  const fraction = (frac + '000000').slice(0, 6);
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    offsetMinutes = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0'));
  }
  if (offsetMinutes === 0 && y !== '0000') return `${y}-${mo}-${d}T${h}:${mi}:${s}.${fraction}Z`;
  const at = new Date(0);
  at.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  at.setUTCHours(Number(h), Number(mi) - offsetMinutes, Number(s), 0);
  const year = at.getUTCFullYear();
  if (!(year >= 1 && year <= 9999)) throw new DateTimeError(`outside the years 0001–9999 in UTC (year ${year})`, value);
  return `${at.toISOString().slice(0, 19)}.${fraction}Z`;
}

/** toUtcTimestamp's wider grammar (the store's and sources' forms); never used on partner records or parameters. */
const STORE_OR_SOURCE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?\s*([Zz]|[+-]\d{2}(?::?\d{2})?)$/;

/**
 * `YYYY-MM-DD(T| )HH:MM:SS[.f...](Z|+00|+00:00)`, a year other than 0000 and no leap second: the
 * UTC text, its fraction cut or padded to six digits (the value itself when it is that already);
 * undefined for anything else.
 */
function plainUtc(value: string): string | undefined {
  const n = value.length;
  if (n < 20) return undefined;
  for (let i = 0; i < 19; i += 1) {
    const c = value.charCodeAt(i);
    if (i === 4 || i === 7) { if (c !== DASH) return undefined; }
    else if (i === 13 || i === 16) { if (c !== COLON) return undefined; }
    else if (i === 10) { if (c !== UPPER_T && c !== LOWER_T && c !== SPACE) return undefined; }
    else if (c < ZERO || c > NINE) return undefined;
  }
  if (value.startsWith('0000') || isLeapSecond(value)) return undefined;
  let zone: number;
  if (value.charCodeAt(n - 1) === UPPER_Z || value.charCodeAt(n - 1) === LOWER_Z) zone = n - 1;
  else if (value.endsWith('+00')) zone = n - 3;
  else if (value.endsWith('+00:00')) zone = n - 6;
  else return undefined;
  let fraction = '';
  if (zone > 19) {
    const sep = value.charCodeAt(19);
    if ((sep !== DOT && sep !== 44) || zone === 20) return undefined;
    for (let i = 20; i < zone; i += 1) {
      const c = value.charCodeAt(i);
      if (c < ZERO || c > NINE) return undefined;
    }
    if (n === 27 && zone === 26 && value.charCodeAt(10) === UPPER_T && value.charCodeAt(26) === UPPER_Z) return value;
    fraction = value.slice(20, Math.min(zone, 26));
  } else if (zone !== 19) return undefined;
  return `${value.slice(0, 10)}T${value.slice(11, 19)}.${fraction.padEnd(6, '0')}Z`;
}
