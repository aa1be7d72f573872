/**
 * Exact money arithmetic for commissions: decimal.js with enough precision that no operation on
 * partner amounts (at most 15 significant digits) and plan rates ever rounds, and one rounding
 * only, of each ledger line's target to the cent, half to even (docs/commissions.md, Money).
 */
import { Decimal } from 'decimal.js';

/** A private Decimal: 60 significant digits, half-even. Products of two 15-digit values need 30. */
export const Money = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -60, toExpPos: 60 });
export type Money = Decimal;

export const ZERO: Money = new Money(0);

/** A store decimal (PostgreSQL NUMERIC text, SQLite decimal text) or a validated JSON number → exact decimal. */
export function money(value: unknown): Money {
  if (value instanceof Decimal) return new Money(value);
  if (typeof value === 'number') {
    // A validated JSON number has at most 15 significant digits: its shortest text is exact.
    return new Money(String(value));
  }
  if (typeof value === 'string' && value.trim() !== '') return new Money(value.trim());
  throw new Error(`not a decimal amount: ${JSON.stringify(value)}`);
}

/** Like `money`, null and undefined kept as null. */
export function moneyOrNull(value: unknown): Money | null {
  return value === null || value === undefined ? null : money(value);
}

/** Rounded half to even to the cent: the only rounding of the engine. */
export function cents(value: Money): Money {
  return value.toDecimalPlaces(2, Decimal.ROUND_HALF_EVEN);
}

/** Text for the store and reports: cents as `12.30`, exact values without exponent. */
export function centsText(value: Money): string {
  return cents(value).toFixed(2);
}

export function exactText(value: Money): string {
  return value.toFixed();
}

export function sum(values: Iterable<Money>): Money {
  let total = ZERO;
  for (const v of values) total = total.plus(v);
  return total;
}
