import assert from 'node:assert/strict';
import { createSpecValidator } from '../../src/spec/validator.js';
import { toUtcTimestamp } from '../../src/kernel/timestamp.js';
import { customer, deposit, gaming } from '../support/records.js';

describe('values the stores cannot hold are refused by the validator', () => {
  const validator = createSpecValidator();

  it('a NUL character in any string is a noNul violation naming the field', () => {
    assert.deepEqual(validator.validate('igaming', 'transactions', deposit('t1', 'c1', { note: 'ref\u0000x' })), [
      { field: 'note', rule: 'noNul', message: 'note: must not contain the NUL character U+0000 (no store can hold it) (got "ref\\u0000x")' },
    ]);
    assert.deepEqual(validator.validate('igaming', 'customers', customer('c\u0000', { first_name: 'A\u0000' })).map((v) => [v.field, v.rule, v.message]), [
      ['customer_id', 'noNul', 'customer_id: must not contain the NUL character U+0000 (no store can hold it) (got "c\\u0000")'],
      // personal data: the value is not shown
      ['first_name', 'noNul', 'first_name: must not contain the NUL character U+0000 (no store can hold it)'],
    ]);
  });

  it('a NUL is reported beside the schema’s own violations of the record', () => {
    const violations = validator.validate('igaming', 'transactions', deposit('t1', 'c1', { currency: 'eur', status: 'ok\u0000' }));
    assert.deepEqual(violations.map((v) => [v.field, v.rule]), [['currency', 'pattern'], ['status', 'noNul']]);
  });

  it('date-times outside the years 0001–9999 in UTC are yearRange violations', () => {
    const rule = (transaction_date: string) => validator.validate('igaming', 'transactions', deposit('t1', 'c1', { transaction_date }));
    assert.deepEqual(rule('0000-01-01T00:00:00Z'), [
      { field: 'transaction_date', rule: 'yearRange', message: 'transaction_date: must fall within the years 0001–9999 in UTC (year 0 in UTC) (got "0000-01-01T00:00:00Z")' },
    ]);
    assert.deepEqual(rule('9999-12-31T23:00:00-05:00'), [
      { field: 'transaction_date', rule: 'yearRange', message: 'transaction_date: must fall within the years 0001–9999 in UTC (year 10000 in UTC) (got "9999-12-31T23:00:00-05:00")' },
    ]);
    assert.deepEqual(rule('0001-01-01T00:30:00+01:00').map((v) => v.rule), ['yearRange']);
    // the edges themselves are storable
    assert.deepEqual(rule('0001-01-01T00:00:00Z'), []);
    assert.deepEqual(rule('9999-12-31T23:59:59.999999Z'), []);
    assert.deepEqual(rule('0001-01-01T00:30:00-01:00'), []);
    assert.deepEqual(rule('9999-12-31T23:00:00+05:00'), []);
    // an optional date-time too
    assert.deepEqual(validator.validate('igaming', 'customers', customer('c1', { last_modified_date: '0000-06-01T00:00:00Z' })).map((v) => [v.field, v.rule]), [['last_modified_date', 'yearRange']]);
  });

  it('a leap second is a leapSecond violation naming the field; second 60 off 23:59 UTC is a format violation', () => {
    const rule = (transaction_date: string) => validator.validate('igaming', 'transactions', deposit('t1', 'c1', { transaction_date }));
    assert.deepEqual(rule('1998-12-31T23:59:60Z'), [
      { field: 'transaction_date', rule: 'leapSecond', message: 'transaction_date: a leap second (second 60) cannot be stored: no store counts leap seconds (got "1998-12-31T23:59:60Z")' },
    ]);
    assert.deepEqual(rule('1998-12-31T15:59:60.123-08:00').map((v) => v.rule), ['leapSecond']);
    assert.deepEqual(validator.validate('igaming', 'customers', customer('c1', { last_modified_date: '2016-12-31T23:59:60.5z' })).map((v) => [v.field, v.rule]), [['last_modified_date', 'leapSecond']]);
    assert.deepEqual(rule('1998-12-31T22:59:60Z'), [
      {
        field: 'transaction_date',
        rule: 'format',
        message: 'transaction_date: must be an ISO 8601 date-time with time zone, e.g. 2024-05-01T12:00:00Z; second 60 (a leap second) exists only at 23:59 UTC (got "1998-12-31T22:59:60Z")',
      },
    ]);
    assert.deepEqual(rule('1998-12-31T23:59:59.999999999999999Z'), []);
  });

  it('a date in year 0000 is a yearRange violation', () => {
    assert.deepEqual(validator.validate('igaming', 'activity', gaming('0000-01-01', 'c1')), [
      { field: 'date', rule: 'yearRange', message: 'date: must fall within the years 0001–9999 (got "0000-01-01")' },
    ]);
  });
});

describe('date-times converted to UTC for the store', () => {
  it('years 0–99 with an offset stay in their century (not 1900–1999)', () => {
    assert.equal(toUtcTimestamp('0050-06-01T10:00:00+02:00'), '0050-06-01T08:00:00.000000Z');
    assert.equal(toUtcTimestamp('0001-01-01T00:30:00-01:00'), '0001-01-01T01:30:00.000000Z');
    assert.equal(toUtcTimestamp('0099-12-31T23:30:00-01:00'), '0100-01-01T00:30:00.000000Z');
  });

  it('a leap second cannot be converted, with or without an offset (no stand-in that changes the instant)', () => {
    assert.throws(() => toUtcTimestamp('2016-12-31T23:59:60Z'), /a leap second \(second 60\) cannot be stored/);
    assert.throws(() => toUtcTimestamp('2016-12-31T23:59:60.5Z'), /a leap second \(second 60\) cannot be stored/);
    assert.throws(() => toUtcTimestamp('2016-12-31T18:59:60-05:00'), /a leap second \(second 60\) cannot be stored/);
  });

  it('the store\'s own forms come back as the stored text: canonical UTC, PostgreSQL\'s UTC output; leap seconds and year 0000 refused', () => {
    assert.equal(toUtcTimestamp('2026-10-05T13:45:12.123456Z'), '2026-10-05T13:45:12.123456Z');
    assert.equal(toUtcTimestamp('2026-10-05 13:45:12.123456+00'), '2026-10-05T13:45:12.123456Z');
    assert.equal(toUtcTimestamp('2026-10-05 13:45:12.12+00'), '2026-10-05T13:45:12.120000Z');
    assert.equal(toUtcTimestamp('2026-10-05 13:45:12+00'), '2026-10-05T13:45:12.000000Z');
    assert.equal(toUtcTimestamp('2026-10-05t13:45:12,1234567Z'), '2026-10-05T13:45:12.123456Z');
    assert.equal(toUtcTimestamp('2026-10-05T13:45:12.5+00:00'), '2026-10-05T13:45:12.500000Z');
    assert.equal(toUtcTimestamp('2026-10-05T13:45:12.5-00:00'), '2026-10-05T13:45:12.500000Z');
    assert.throws(() => toUtcTimestamp('2026-10-05T13:45:12.Z'), /not of the form/);
    assert.throws(() => toUtcTimestamp('2016-12-31T23:59:60.000000Z'), /leap second/);
    assert.throws(() => toUtcTimestamp('2016-12-31 23:59:60.250000+00'), /leap second/);
    assert.throws(() => toUtcTimestamp('0000-01-01T00:00:00.000000Z'), /outside the years 0001–9999 in UTC \(year 0\)/);
    assert.throws(() => toUtcTimestamp('2026-10-05T13:45:1x.123456Z'), /not of the form/);
    assert.throws(() => toUtcTimestamp('2026-10-05T13:45:12.123456z '), /not of the form/);
  });

  it('a date-time outside the years 0001–9999 in UTC cannot be converted', () => {
    assert.throws(() => toUtcTimestamp('0000-01-01T00:00:00Z'), /outside the years 0001–9999 in UTC \(year 0\)/);
    assert.throws(() => toUtcTimestamp('9999-12-31T23:00:00-05:00'), /outside the years 0001–9999 in UTC \(year 10000\)/);
  });
});
