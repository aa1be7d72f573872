/**
 * A driver row → a partner record, the raw record the field mapping reads: date-times as ISO 8601
 * UTC with every fraction digit the source wrote, at least six (zone-less local values read in
 * the source's zone, instants in UTC: the session's zone),
 * dates as YYYY-MM-DD, exact decimals and big integers (read as text by the drivers) as numbers.
 * Everything else passes as the driver gives it. The row itself is kept by the caller for the
 * keyset: its cursor value is bound back exactly as read, never through the converted value.
 */
import type { ColumnType, ResultColumn } from './column-types.js';
import { addJsonIssue } from '../../src/kernel/strict-json.js';
import { sourceDateTimeToIso } from './datetime.js';

type Convert = (value: unknown) => unknown;

const SQL_DATE = /^\d{4}-\d{2}-\d{2}$/;
const SQL_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}(:?\d{2})?)?$/;
const INTEGER_TEXT = /^[-+]?\d+$/;

const keep: Convert = (value) => value;

function converter(type: ColumnType, zone: string): Convert {
  const dateTime: Convert = (value) => (typeof value === 'string' ? (sourceDateTimeToIso(value, zone) ?? value) : value);
  switch (type) {
    case 'timestamp':
      return dateTime;
    case 'timestamptz':
      // An instant in a UTC session: an offset when written, UTC when not (MySQL TIMESTAMP).
      return (value) => (typeof value === 'string' ? (sourceDateTimeToIso(value, 'UTC') ?? value) : value);
    case 'date':
      // The day as written (a driver that hands a Date would have shifted it: ours are set to text).
      return (value) => (typeof value === 'string' && value.length > 10 && SQL_DATE.test(value.slice(0, 10)) && /^[ T]00:00:00(\.0+)?$/.test(value.slice(10)) ? value.slice(0, 10) : value);
    case 'decimal':
    case 'float':
      return (value) => {
        if (typeof value !== 'string' || value.trim() === '') return value;
        const number = Number(value);
        return Number.isFinite(number) ? number : value;
      };
    case 'integer':
      return (value) => {
        if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
        if (typeof value !== 'string' || !INTEGER_TEXT.test(value)) return value;
        // Beyond 2^53 a number would not be the value: keep the exact text (validation then says what is wrong).
        const number = Number(value);
        return Number.isSafeInteger(number) ? number : value;
      };
    case 'untyped':
      // SQLite expressions (max(updated_at), date(ts)): a value shaped like a date-time is one.
      return (value) => (typeof value === 'string' && SQL_DATE_TIME.test(value) ? (sourceDateTimeToIso(value, zone) ?? value) : value);
    default:
      return keep;
  }
}

export interface RowConverter {
  (row: Record<string, unknown>): Record<string, unknown>;
}

/** Significant digits of a decimal's text (`0012.3400` → 4: 1, 2, 3, 4). */
function significantDigits(text: string): number {
  const [whole = '', fraction = ''] = text.replace(/^[+-]/, '').split('.');
  return `${whole}${fraction.replace(/0+$/, '')}`.replace(/^0+/, '').length || 0;
}

/** The spec's limit of significant digits (§8); past it a double is not the decimal the source holds. */
const EXACT_DIGITS = 15;

/** The converter of one result's rows (built once per result, applied per row). */
export function rowConverter(columns: readonly ResultColumn[], zone: string): RowConverter {
  const plan = columns.map((column) => ({ name: column.name, convert: converter(column.type, zone), decimal: column.type === 'decimal' }));
  return (row) => {
    const record: Record<string, unknown> = {};
    for (const { name, convert, decimal } of plan) {
      if (!Object.hasOwn(row, name)) continue;
      const value = row[name];
      const converted = value === null || value === undefined ? value : convert(value);
      // A DECIMAL of more digits than a double keeps (1.0000000000000001 read as 1): the number as
      // the source holds it is judged by the rules, as for a JSON number (rule maxSignificantDigits).
      if (decimal && typeof value === 'string' && typeof converted === 'number' && significantDigits(value.trim()) > EXACT_DIGITS) {
        addJsonIssue(record, { path: [name], rule: 'exact_number', message: `${name}: the source's DECIMAL ${value.trim()} has more than ${EXACT_DIGITS} significant digits: a number would not be it`, written: value.trim() });
      }
      // A column named __proto__ must stay a field, not become the record's prototype.
      if (name === '__proto__') Object.defineProperty(record, name, { value: converted, enumerable: true, writable: true, configurable: true });
      else record[name] = converted;
    }
    return record;
  };
}
