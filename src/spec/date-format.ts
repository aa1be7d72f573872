/**
 * The `date` format (RFC 3339 full-date, YYYY-MM-DD, a real calendar day), the same rule as
 * ajv-formats' but checked character by character: it runs for every activity record, and the
 * regular expression's match arrays were a good share of the garbage of a bulk load. The
 * calendar is the date-times' own (../kernel/timestamp.ts).
 */
import { daysInMonth } from '../kernel/timestamp.js';

const ZERO = 48;
const NINE = 57;
const DASH = 45;

function digit(text: string, at: number): number {
  const c = text.charCodeAt(at);
  return c >= ZERO && c <= NINE ? c - ZERO : -1;
}

export function isFullDate(text: string): boolean {
  if (text.length !== 10 || text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH) return false;
  let year = 0;
  for (let i = 0; i < 4; i++) {
    const d = digit(text, i);
    if (d < 0) return false;
    year = year * 10 + d;
  }
  const m1 = digit(text, 5);
  const m2 = digit(text, 6);
  const d1 = digit(text, 8);
  const d2 = digit(text, 9);
  if (m1 < 0 || m2 < 0 || d1 < 0 || d2 < 0) return false;
  const month = m1 * 10 + m2;
  const day = d1 * 10 + d2;
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}
