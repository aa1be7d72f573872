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
 * - A leap second (`23:59:60Z`, `15:59:60.123-08:00`): RFC 3339 allows it, but PostgreSQL's
 *   timestamptz has no second 60 and SQLite would keep the text, so the stores would disagree on
 *   the instant, and any stand-in (`23:59:59.999999`) changes it. Rule `leapSecond`
 *   (../kernel/timestamp.ts refuses it in the same way for every date-time the service reads).
 *
 * These checks run for every record, so the common case is a few character tests per field.
 */
import type { Violation } from '../types.js';
import { isDateTime, isLeapSecond, utcYear } from '../kernel/timestamp.js';
import { PERSONAL_DATA_FIELDS } from './errors.js';

/** The fields of a schema that hold strings, and those of them that are dates or date-times. */
export interface StorableFacts {
  strings: readonly string[];
  dateTimes: readonly string[];
  dates: readonly string[];
  /** True for every record holding a value these rules refuse (and for few others). */
  suspect: (record: Record<string, unknown>) => boolean;
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

/**
 * A test that is true for every record holding a value these rules refuse (and for few others):
 * one function per schema with its field names written in, so each field is a constant-key
 * property load, not a lookup by a variable key (that cost a fifth of the validator's speed).
 */
function compileSuspect(facts: Omit<StorableFacts, 'suspect'>): (record: Record<string, unknown>) => boolean {
  const tests: string[] = [];
  for (const name of facts.strings) {
    const key = JSON.stringify(name);
    // A date-time: year 0000/9999 (yearRange) or second 60 (leapSecond).
    const edge = facts.dateTimes.includes(name) ? '(v.charCodeAt(0) === 48 || v.charCodeAt(0) === 57 || (v.charCodeAt(17) === 54 && v.charCodeAt(18) === 48)) || ' : facts.dates.includes(name) ? 'v.charCodeAt(0) === 48 || ' : '';
    tests.push(`v = r[${key}]; if (typeof v === 'string' && (${edge}v.indexOf('\\u0000') >= 0)) return true;`);
  }
  // The body is built from the schema's own property names, each a JSON string literal.
  return new Function('r', `let v; ${tests.join(' ')} return false;`) as (record: Record<string, unknown>) => boolean;
}

/** The violations of the store's limits in a record; undefined when there are none (the common case). */
export function storableViolations(record: unknown, facts: StorableFacts): Violation[] | undefined {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
  if (!facts.suspect(record as Record<string, unknown>)) return undefined;
  const fields = record as Record<string, unknown>;
  let out: Violation[] | undefined;
  // The schema's own string fields: a property it does not know is refused already (additionalProperties).
  for (const field of facts.strings) {
    const value = fields[field];
    if (typeof value === 'string' && value.indexOf('\u0000') >= 0) {
      (out ??= []).push({ field, rule: 'noNul', message: `${field}: must not contain the NUL character U+0000 (no store can hold it)${show(field, value)}` });
    }
  }
  for (const field of facts.dateTimes) {
    const value = fields[field];
    if (typeof value !== 'string') continue;
    if (isLeapSecond(value) && isDateTime(value)) {
      (out ??= []).push({ field, rule: 'leapSecond', message: `${field}: a leap second (second 60) cannot be stored: no store counts leap seconds${show(field, value)}` });
      continue;
    }
    if (!nearTheEdge(value)) continue;
    const year = utcYear(value);
    if (year !== undefined && (year < 1 || year > 9999)) {
      (out ??= []).push({ field, rule: 'yearRange', message: `${field}: must fall within the years 0001–9999 in UTC (year ${year} in UTC)${show(field, value)}` });
    }
  }
  for (const field of facts.dates) {
    const value = fields[field];
    if (typeof value === 'string' && value.charCodeAt(0) === 48 && value.startsWith('0000-')) {
      (out ??= []).push({ field, rule: 'yearRange', message: `${field}: must fall within the years 0001–9999${show(field, value)}` });
    }
  }
  return out;
}

/** Which properties of a schema hold strings, dates and date-times (by their `type` and `format`). */
export function storableFacts(properties: Record<string, unknown>): StorableFacts {
  const strings: string[] = [];
  const dateTimes: string[] = [];
  const dates: string[] = [];
  for (const [name, schema] of Object.entries(properties)) {
    if (schema === null || typeof schema !== 'object') continue;
    const { type, format } = schema as { type?: unknown; format?: unknown };
    if (type === 'string' || (Array.isArray(type) && type.includes('string'))) strings.push(name);
    if (format === 'date-time') dateTimes.push(name);
    else if (format === 'date') dates.push(name);
  }
  return { strings, dateTimes, dates, suspect: compileSuspect({ strings, dateTimes, dates }) };
}
