import assert from 'node:assert/strict';
import {
  decimalPlaces,
  significantDigits,
  withinDecimalPlaces,
  withinSignificantDigits,
} from '../../src/spec/keywords.js';
import { seededRandom } from './fixtures.js';

// Numbers are written as JSON text and parsed, as they arrive from partners.
const json = (text: string): number => JSON.parse(text) as number;

describe('spec keywords: significant digits', () => {
  const counts: [string, number][] = [
    ['0', 0],
    ['-0', 0],
    ['7', 1],
    ['123.45', 5],
    ['123.4500', 5],
    ['-123.45', 5],
    ['1000', 4],
    ['100.5', 4],
    ['999999999999999', 15],
    ['1000000000000000', 16],
    ['1e15', 16],
    ['1E+15', 16],
    ['1e21', 22],
    ['1.5e21', 22],
    ['0.00012', 2],
    ['0.000000000000001', 1],
    ['1e-7', 1],
    ['1.5e-7', 2],
    ['-2.5E-10', 2],
    ['1.000000000000001', 16],
    ['0.1234567890123456', 16],
    // JSON parsing already rounded this one to 12345678901234568: still 17 digits
    ['12345678901234567', 17],
  ];
  for (const [text, expected] of counts) {
    it(`${text} has ${expected}`, () => assert.equal(significantDigits(json(text)), expected));
  }

  it('0.1 + 0.2 has the 17 digits of its shortest round-trip string', () => {
    assert.equal(significantDigits(0.1 + 0.2), 17);
  });

  const limit15: [string, boolean][] = [
    ['123456789012345', true],
    ['-123456789012345', true],
    ['1234567890123456', false],
    ['-1234567890123456', false],
    ['999999999999999', true],
    ['1e15', false],
    ['-1e15', false],
    ['1e14', true],
    ['1.5e21', false],
    ['1234567890123.45', true],
    ['1234567890123.456', false],
    ['99999999999999.9', true],
    ['99999999999999.99', false],
    ['999999999999999.5', false],
    ['1.00000000000001', true],
    ['1.000000000000001', false],
    ['0.123456789012345', true],
    ['-0.123456789012345', true],
    ['0.1234567890123456', false],
    ['0.000000000000001', true],
    ['0.000000000000001234567890123456', false],
    ['0.00000000000000123456789012345', true],
    ['1e-7', true],
    ['-1e-7', true],
    ['1.23456789012345e-10', true],
    ['1.234567890123456e-10', false],
    ['5e-324', true],
    ['0', true],
  ];
  for (const [text, ok] of limit15) {
    it(`${text} ${ok ? 'fits' : 'does not fit'} in 15 significant digits`, () => {
      assert.equal(withinSignificantDigits(json(text), 15), ok);
    });
  }

  it('rejects non-finite numbers (never valid JSON)', () => {
    assert.equal(withinSignificantDigits(Number.NaN, 15), false);
    assert.equal(withinSignificantDigits(Number.POSITIVE_INFINITY, 15), false);
  });
});

describe('spec keywords: decimal places', () => {
  const counts: [string, number][] = [
    ['10', 0],
    ['10.1', 1],
    ['10.10', 1],
    ['10.123', 3],
    ['-10.123', 3],
    ['1e-7', 7],
    ['1.5e-7', 8],
    ['1e21', 0],
    ['1.5e21', 0],
    ['0.000000000000001', 15],
  ];
  for (const [text, expected] of counts) {
    it(`${text} has ${expected}`, () => assert.equal(decimalPlaces(json(text)), expected));
  }

  const limit2: [string, boolean][] = [
    ['10', true],
    ['10.1', true],
    ['10.12', true],
    ['10.120', true],
    ['-10.12', true],
    ['10.123', false],
    ['-10.123', false],
    ['0.01', true],
    ['0.001', false],
    ['1e-7', false],
    ['1e21', true],
    ['123456789012345.6', true],
    ['12345678901234.567', false],
    ['90071992547409.91', true],
  ];
  for (const [text, ok] of limit2) {
    it(`${text} ${ok ? 'has' : 'does not have'} at most 2 decimal places`, () => {
      assert.equal(withinDecimalPlaces(json(text), 2), ok);
    });
  }

  it('0.1 + 0.2 does not have 2 decimal places (0.30000000000000004)', () => {
    assert.equal(withinDecimalPlaces(0.1 + 0.2, 2), false);
  });
});

describe('spec keywords: fast paths agree with the string definition', () => {
  /** Numbers of every shape: 1-17 random digits at scales from 1e-25 to 1e22, either sign. */
  function sample(rnd: () => number): number {
    const digits = 1 + Math.floor(rnd() * 17);
    let mantissa = String(1 + Math.floor(rnd() * 9));
    for (let i = 1; i < digits; i++) mantissa += String(Math.floor(rnd() * 10));
    const exponent = Math.floor(rnd() * 48) - 25;
    const sign = rnd() < 0.3 ? '-' : '';
    return Number(`${sign}${mantissa}e${exponent}`);
  }

  /** Decimals m / 10^k as a partner's system computes them: large cents, rounded arithmetic. */
  function computed(rnd: () => number): number {
    const k = Math.floor(rnd() * 6);
    const m = Math.floor(rnd() * 2 ** (20 + Math.floor(rnd() * 34)));
    const n = m / 10 ** k;
    return rnd() < 0.5 ? n : -n * (1 + rnd());
  }
  const draw = (rnd: () => number, i: number): number =>
    i % 3 === 0 ? computed(rnd) : i % 7 === 0 ? Math.round(sample(rnd) * 100) / 100 : sample(rnd);

  it('withinSignificantDigits(n, limit) === (significantDigits(n) <= limit) on 300,000 numbers', () => {
    const rnd = seededRandom(15);
    for (let i = 0; i < 300_000; i++) {
      const n = draw(rnd, i);
      const limit = i % 5 === 0 ? Math.floor(rnd() * 20) : 15;
      assert.equal(withinSignificantDigits(n, limit), significantDigits(n) <= limit, `${n} with limit ${limit}`);
    }
  });

  it('withinDecimalPlaces(n, limit) === (decimalPlaces(n) <= limit) on 300,000 numbers', () => {
    const rnd = seededRandom(2);
    for (let i = 0; i < 300_000; i++) {
      const n = draw(rnd, i);
      const limit = i % 5 === 0 ? Math.floor(rnd() * 25) : 2;
      assert.equal(withinDecimalPlaces(n, limit), decimalPlaces(n) <= limit, `${n} with limit ${limit}`);
    }
  });
});
