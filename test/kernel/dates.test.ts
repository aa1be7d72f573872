/**
 * Day arithmetic on UTC day text: addDays works on integer day numbers (no Date per call), so it
 * is checked against the calendar of Date itself over two centuries, and where Date.UTC is wrong
 * (years 0001-0099, which it reads as 19xx).
 */
import assert from 'node:assert/strict';
import { addDays } from '../../src/kernel/dates.js';

const viaDate = (day: string, days: number): string => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

describe('addDays', () => {
  it('agrees with the calendar of Date for every third day of 1900-2100, by -400 to +1000 days', () => {
    let checked = 0;
    for (let t = Date.UTC(1900, 0, 1); t < Date.UTC(2101, 0, 1); t += 3 * 86_400_000) {
      const day = new Date(t).toISOString().slice(0, 10);
      for (const n of [-400, -366, -365, -31, -29, -28, -1, 0, 1, 27, 28, 29, 30, 31, 59, 60, 365, 366, 1000]) {
        assert.equal(addDays(day, n), viaDate(day, n), `${day} + ${n}`);
        checked += 1;
      }
    }
    assert.ok(checked > 400_000);
  });

  it('crosses month, leap-day and year ends', () => {
    assert.equal(addDays('2024-02-28', 1), '2024-02-29');
    assert.equal(addDays('2023-02-28', 1), '2023-03-01');
    assert.equal(addDays('2026-12-31', 1), '2027-01-01');
    assert.equal(addDays('2027-01-01', -1), '2026-12-31');
    assert.equal(addDays('2000-03-01', -1), '2000-02-29');
    assert.equal(addDays('1900-03-01', -1), '1900-02-28');
  });

  it('keeps years 0001-0099 in their century and reaches 9999-12-31', () => {
    assert.equal(addDays('0050-12-31', 1), '0051-01-01');
    assert.equal(addDays('0001-01-01', 30), '0001-01-31');
    assert.equal(addDays('0004-02-28', 1), '0004-02-29');
    assert.equal(addDays('9999-12-30', 1), '9999-12-31');
  });
});
