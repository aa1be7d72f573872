/**
 * Values the spec's schemas accept but no store can hold, refused at validation so that they
 * become rejects instead of failing the whole batch they arrive in (spec §2 strings and
 * date-times; the store's limits, which the schemas handed to partners do not state):
 *
 * - U+0000 (NUL) in any string: PostgreSQL's text and jsonb cannot hold it ("invalid byte sequence
 *   for encoding UTF8: 0x00"), so one such string would fail every record of its batch, and a pull
 *   would meet the same page every run. Rule `noNul`.
 * - A date or date-time outside the years 0001–9999 once converted to UTC
 *   (`0000-01-01T00:00:00Z`; `9999-12-31T23:00:00-05:00` is year 10000 in UTC): PostgreSQL refuses
 *   year 0 and years past 9999, and SQLite's fixed-width text would no longer sort by time. Rule
 *   `yearRange`.
 *
 * These checks run for every record, so the common case is a few character tests per field.
 */
import type { Violation } from '../types.js';
import { PERSONAL_DATA_FIELDS } from './errors.js';

/** The fields of a schema whose values are dates or date-times. */
export interface StorableFacts {
  dateTimes: readonly string[];
  dates: readonly string[];
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?([Zz]|[+-]\d{2}(?::?\d{2})?)$/;

/** The UTC year of an RFC 3339 date-time, or undefined when it is not one (the format rule reports that). */
export function utcYear(value: string): number | undefined {
  const m = DATE_TIME.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, , zone = 'Z'] = m;
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const digits = zone.slice(1).replace(':', '');
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0'));
  }
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0–99 as 1900–1999.
  const at = new Date(0);
  at.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  at.setUTCHours(Number(h), Number(mi) - offsetMinutes, 0, 0);
  return at.getUTCFullYear();
}

/** Only years 0000, 0001, 9999 can leave the range after an offset of less than a day. */
function nearTheEdge(value: string): boolean {
  const c0 = value.charCodeAt(0);
  if (c0 === 48) return value.startsWith('000') && (value.charCodeAt(3) === 48 || value.charCodeAt(3) === 49);
  return c0 === 57 && value.startsWith('9999');
}

function show(field: string, value: string): string {
  if (PERSONAL_DATA_FIELDS.has(field)) return '';
  return value.length <= 40 ? ` (got ${JSON.stringify(value)})` : ` (got ${JSON.stringify(value.slice(0, 40)).slice(0, -1)}..." (${value.length} characters))`;
}

/** The violations of the store's limits in a record; undefined when there are none (the common case). */
export function storableViolations(record: unknown, facts: StorableFacts): Violation[] | undefined {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
  const fields = record as Record<string, unknown>;
  let out: Violation[] | undefined;
  for (const field in fields) {
    if (!Object.prototype.hasOwnProperty.call(fields, field)) continue;
    const value = fields[field];
    if (typeof value === 'string' && value.indexOf('\u0000') >= 0) {
      (out ??= []).push({ field, rule: 'noNul', message: `${field}: must not contain the NUL character U+0000 (no store can hold it)${show(field, value)}` });
    }
  }
  for (const field of facts.dateTimes) {
    const value = fields[field];
    if (typeof value !== 'string' || !nearTheEdge(value)) continue;
    const year = utcYear(value);
    if (year !== undefined && (year < 1 || year > 9999)) {
      (out ??= []).push({ field, rule: 'yearRange', message: `${field}: must fall within the years 0001–9999 in UTC (year ${year} in UTC)${show(field, value)}` });
    }
  }
  for (const field of facts.dates) {
    const value = fields[field];
    if (typeof value === 'string' && value.startsWith('0000-')) {
      (out ??= []).push({ field, rule: 'yearRange', message: `${field}: must fall within the years 0001–9999${show(field, value)}` });
    }
  }
  return out;
}

/** Which properties of a schema hold dates and date-times (by their `format`). */
export function storableFacts(properties: Record<string, unknown>): StorableFacts {
  const dateTimes: string[] = [];
  const dates: string[] = [];
  for (const [name, schema] of Object.entries(properties)) {
    const format = schema !== null && typeof schema === 'object' ? (schema as { format?: unknown }).format : undefined;
    if (format === 'date-time') dateTimes.push(name);
    else if (format === 'date') dates.push(name);
  }
  return { dateTimes, dates };
}
