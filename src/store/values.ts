/**
 * Conversions between validated spec values and store values. Date-times are stored in UTC with
 * exactly six fraction digits (PostgreSQL's precision, and a fixed width keeps SQLite's text
 * order chronological); digits past the sixth are cut, never rounded up. Decimals are stored as
 * their exact decimal text.
 */
import { Decimal } from 'decimal.js';
import { toUtcTimestamp } from '../kernel/timestamp.js';

/** A store's timestamp (SQLite text or PostgreSQL `YYYY-MM-DD HH:MM:SS[.f]+00`) → `...ffffffZ`. */
export function fromStoreTimestamp(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString().replace('Z', '000Z');
  return toUtcTimestamp(String(value));
}

/** A JSON number → its exact decimal text without exponent (1e-7 → "0.0000001"). */
export function decimalText(value: number): string {
  const text = String(value);
  return text.includes('e') ? new Decimal(text).toFixed() : text;
}

/** A store's decimal (PostgreSQL NUMERIC text or SQLite text) → a JSON number, null kept. */
export function fromStoreDecimal(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  return Number(value);
}

/** A store's date (`YYYY-MM-DD`, or a Date from a driver) → `YYYY-MM-DD`. */
export function fromStoreDate(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  return String(value).slice(0, 10);
}
