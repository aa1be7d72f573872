/**
 * The two custom JSON Schema keywords of the spec's numeric limits (spec §2 general formats, §8):
 *
 * - `maxSignificantDigits: 15`, on every numeric field. Digits are counted as a SQL DECIMAL(15)
 *   would need them: from the first non-zero digit to the last non-zero fractional digit or the
 *   units digit, whichever comes later. Trailing zeros of the integer part count (1e15 has 16
 *   digits), leading zeros of a fraction do not (0.000000000000001 has 1).
 * - `maxDecimalPlaces: 2`, on amount_currency and lots_traded.
 *
 * Both work on the number JSON parsing produced, i.e. on the shortest decimal string that
 * round-trips to the double (`String(n)`): 123.4500 arrives as 123.45 and has 5 significant
 * digits and 2 decimal places. An integer that JSON parsing had to round (12345678901234567 becomes
 * 12345678901234568) is still caught, because its integer part alone has 17 digits.
 *
 * Every numeric field of every record passes through these checks, so each has a float-only fast
 * path; the string-based counters below are the definition and the fallback.
 */
import { _, str } from 'ajv/dist/2020.js';
import type { FuncKeywordDefinition, KeywordErrorDefinition } from 'ajv/dist/2020.js';

/**
 * Exact powers of ten: every 10^k with k <= 22 is a double, so dividing an integer below 2^53 by one
 * of them is a single correctly rounded operation, the same rounding a JSON parser applies to the
 * decimal string `m / 10^k`.
 */
const POW10: readonly number[] = Array.from({ length: 23 }, (_unused, k) => Number('1e' + k));
/** 10^-1 .. 10^-8 as JSON would parse them; the fast path finds a fraction's leading zeros with them. */
const NEG_POW10: readonly number[] = Array.from({ length: 8 }, (_unused, k) => Number('1e-' + (k + 1)));
/**
 * Largest |n| * 10^places the fast path takes. n's own rounding (half an ulp, at most 2^-53 of it)
 * and the rounding of the product (the same again) stay below 2^-52 of the product, so below 0.5
 * under 2^51: Math.round then finds the integer m the decimal string would have, if there is one.
 */
const MAX_SCALED = 2 ** 51;

interface DecimalParts {
  /** Digits of the shortest round-trip string, without sign, point, exponent, leading zeros. */
  digits: string;
  /** Power of ten of the last digit in `digits`: -2 for 123.45, 0 for 1500, 20 for 1.5e+21. */
  lastPower: number;
}

/** Splits the shortest round-trip string of a finite number into its digits and their scale. */
function decimalParts(n: number): DecimalParts {
  return textParts(String(Math.abs(n)));
}

/** The same of a JSON number's text as written (`-1.50E+3`). */
function textParts(written: string): DecimalParts {
  const text = written.startsWith('-') ? written.slice(1) : written;
  const e = text.search(/[eE]/);
  const mantissa = e < 0 ? text : text.slice(0, e);
  const exponent = e < 0 ? 0 : Number(text.slice(e + 1));
  const point = mantissa.indexOf('.');
  const fraction = point < 0 ? '' : mantissa.slice(point + 1);
  const all = point < 0 ? mantissa : mantissa.slice(0, point) + fraction;
  const first = all.search(/[1-9]/);
  return { digits: first < 0 ? '' : all.slice(first), lastPower: exponent - fraction.length };
}

/**
 * Significant digits of a finite number as the spec counts them (see the module comment):
 * 123.45 → 5, 1000 → 4, 1e15 → 16, 0.00012 → 2, 1e-7 → 1, 0 → 0.
 */
export function significantDigits(n: number): number {
  return countSignificant(decimalParts(n));
}

/** Significant digits of a JSON number as written, counted the same way (`1.0000000000000001` → 17). */
export function writtenSignificantDigits(text: string): number {
  return countSignificant(textParts(text));
}

/** Decimal places of a JSON number as written (`1.0000000000000001` → 16; `1.50` → 1). */
export function writtenDecimalPlaces(text: string): number {
  return countPlaces(textParts(text));
}

function countSignificant({ digits, lastPower }: DecimalParts): number {
  if (digits === '') return 0;
  // Trailing zeros of the digit string down to the units digit count too: 1500 = "15" at 10^2.
  const trimmed = digits.replace(/0+$/, '');
  const lastNonZero = lastPower + (digits.length - trimmed.length);
  return trimmed.length + Math.max(lastNonZero, 0);
}

/** Decimal places of a finite number's shortest round-trip string: 10.1 → 1, 1e-7 → 7, 1e21 → 0. */
export function decimalPlaces(n: number): number {
  return countPlaces(decimalParts(n));
}

function countPlaces({ digits, lastPower }: DecimalParts): number {
  if (digits === '') return 0;
  const trimmed = digits.replace(/0+$/, '');
  return Math.max(-(lastPower + (digits.length - trimmed.length)), 0);
}

/**
 * True when n has a decimal representation with at most `places` fractional digits that parses to
 * n, i.e. when its shortest round-trip string has at most that many. Only valid while
 * |n| * 10^places < MAX_SCALED and places <= 22 (the callers make sure).
 */
function roundTripsWith(n: number, places: number): boolean {
  const scale = POW10[places] as number;
  return Math.round(n * scale) / scale === n;
}

/** `significantDigits(n) <= limit`, without building a string in the common cases. */
export function withinSignificantDigits(n: number, limit: number): boolean {
  if (!Number.isFinite(n)) return false;
  const a = n < 0 ? -n : n;
  if (limit <= 15) {
    const bound = POW10[limit] as number;
    // An integer has as many digits as its integer part; a non-integer one more at least.
    if (Number.isInteger(a)) return a < bound;
    if (a >= bound) return false;
    // Money amounts: at most 2 decimals below 10^(limit-2) fit, one multiply-round-divide to tell.
    if (limit >= 2 && a < (POW10[limit - 2] as number) && roundTripsWith(a, 2)) return true;
    if (a >= 1) {
      let intDigits = 1;
      while (intDigits < limit && a >= (POW10[intDigits] as number)) intDigits++;
      return roundTripsWith(a, limit - intDigits);
    }
    let zeros = 0;
    while (zeros < NEG_POW10.length && a < (NEG_POW10[zeros] as number)) zeros++;
    if (zeros < NEG_POW10.length && zeros + limit <= 22) return roundTripsWith(a, zeros + limit);
  }
  return significantDigits(n) <= limit;
}

/** `decimalPlaces(n) <= limit`, without building a string in the common cases. */
export function withinDecimalPlaces(n: number, limit: number): boolean {
  if (!Number.isFinite(n)) return false;
  if (Number.isInteger(n)) return true;
  const a = n < 0 ? -n : n;
  if (limit <= 22 && a * (POW10[limit] as number) < MAX_SCALED) return roundTripsWith(a, limit);
  return decimalPlaces(n) <= limit;
}

function limitError(what: string): KeywordErrorDefinition {
  return {
    message: ({ schemaCode }) => str`must have at most ${schemaCode} ${what}`,
    params: ({ schemaCode }) => _`{limit: ${schemaCode}}`,
  };
}

const limitMetaSchema = { type: 'integer', minimum: 0 };

/** `maxSignificantDigits: N` (spec §8: at most 15 significant digits in numeric amounts). */
export const maxSignificantDigits: FuncKeywordDefinition = {
  keyword: 'maxSignificantDigits',
  type: 'number',
  schemaType: 'number',
  metaSchema: limitMetaSchema,
  errors: false,
  error: limitError('significant digits'),
  compile: (limit: number) => (data: number) => withinSignificantDigits(data, limit),
};

/** `maxDecimalPlaces: N` (spec §8: amount_currency and lots_traded have at most 2 decimal places). */
export const maxDecimalPlaces: FuncKeywordDefinition = {
  keyword: 'maxDecimalPlaces',
  type: 'number',
  schemaType: 'number',
  metaSchema: limitMetaSchema,
  errors: false,
  error: limitError('decimal places'),
  compile: (limit: number) => (data: number) => withinDecimalPlaces(data, limit),
};

/** Both keywords, for `ajv.addKeyword`. */
export const specKeywords: readonly FuncKeywordDefinition[] = [maxSignificantDigits, maxDecimalPlaces];
