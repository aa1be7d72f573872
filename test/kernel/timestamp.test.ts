/**
 * The two date-time readers (src/kernel/timestamp.ts): partner input by RFC 3339 alone, the
 * store's own text by its own reader; and the e-mail format's deliberate choices.
 */
import assert from 'node:assert/strict';
import { dateTimeProblem, parseDateTime, toUtcTimestamp } from '../../src/kernel/timestamp.js';
import { isEmail } from '../../src/spec/email-format.js';

describe('date-times from outside and from the store', () => {
  it('partner input: RFC 3339 to the store text, the fraction cut to microseconds, never rounded', () => {
    assert.equal(parseDateTime('1985-04-12T00:59:59.999999999999999Z'), '1985-04-12T00:59:59.999999Z');
    assert.equal(parseDateTime('1985-04-12T23:59:59.9999999-01:00'), '1985-04-13T00:59:59.999999Z');
    assert.equal(parseDateTime('1963-06-19t08:30:06.283185z'), '1963-06-19T08:30:06.283185Z');
    assert.equal(parseDateTime('1937-01-01T12:00:27.87+00:20'), '1937-01-01T11:40:27.870000Z');
    assert.equal(parseDateTime('2024-02-29T00:00:00-00:00'), '2024-02-29T00:00:00.000000Z');
  });

  it('partner input: the store\'s own forms and ISO 8601 forms outside RFC 3339 are refused, with the reason', () => {
    const refused: [string, string][] = [
      ['2026-01-01 10:00:00.000000+00', 'date and time must be separated by T, not a space'],
      ['2026-01-01T10:00:00.000000+00', 'an offset must be ±HH:MM, with minutes and a colon'],
      ['2026-01-01T10:00:00+0100', 'an offset must be ±HH:MM, with minutes and a colon'],
      ['2026-01-01T10:00:00,5Z', 'unexpected "," after the time (YYYY-MM-DDTHH:MM:SS[.fraction] then Z or ±HH:MM)'],
      ['2026-01-01T10:00:00 Z', 'unexpected " " after the time (YYYY-MM-DDTHH:MM:SS[.fraction] then Z or ±HH:MM)'],
      ['2100-02-29T10:00:00Z', 'day 29 is not in 2100-02'],
      ['2026-04-31T10:00:00Z', 'day 31 is not in 2026-04'],
      ['2026-00-10T10:00:00Z', 'month 00 does not exist'],
      ['2016-12-31T23:59:60Z', 'a leap second (second 60) cannot be stored'],
      ['2016-12-31T23:59:60.5+01:00', 'second 60 (a leap second) exists only at 23:59 UTC'],
      ['9999-12-31T23:00:00-05:00', 'outside the years 0001–9999 in UTC (year 10000)'],
    ];
    for (const [value, reason] of refused) {
      assert.throws(() => parseDateTime(value), (error: Error) => error.message === `date-time ${JSON.stringify(value)}: ${reason}`, value);
    }
    // a leap second at 23:59 UTC is RFC 3339 (the validator's format accepts it; its leapSecond rule refuses it)
    assert.equal(dateTimeProblem('2016-12-31T18:59:60.25-05:00'), undefined);
  });

  it('the store\'s text: SQLite\'s and PostgreSQL\'s forms read back; a leap second is not one of them', () => {
    assert.equal(toUtcTimestamp('2026-01-01 10:00:00.000000+00'), '2026-01-01T10:00:00.000000Z');
    assert.equal(toUtcTimestamp('2026-01-01 10:00:00.123+00'), '2026-01-01T10:00:00.123000Z');
    assert.equal(toUtcTimestamp('2026-01-01 10:00:00+05:30'), '2026-01-01T04:30:00.000000Z');
    assert.equal(toUtcTimestamp('2026-01-01T10:00:00.123456Z'), '2026-01-01T10:00:00.123456Z');
    assert.throws(() => toUtcTimestamp('2016-12-31 23:59:60+00'), /leap second/);
  });
});

describe('the e-mail format', () => {
  it('accepts RFC 5321 mailboxes: quoted local parts, address literals, long local parts', () => {
    for (const address of ['"joe bloggs"@example.com', '"a\\"b"@example.com', 'joe@[192.0.2.1]', 'joe@[IPv6:2001:db8::1]', `${'a'.repeat(65)}@example.com`, 'x@a-b.example']) {
      assert.ok(isEmail(address), address);
    }
  });

  it('refuses, deliberately, a one-label domain, other literal tags, zones, non-ASCII and bad labels', () => {
    for (const address of ['joe@localhost', 'joe@[tag:anything]', 'joe@[IPv6:fe80::1%eth0]', 'jöe@example.com', 'joe@-example.com', 'joe@example-.com', 'joe@example..com', '"unterminated@example.com', '"a"b@example.com']) {
      assert.ok(!isEmail(address), address);
    }
  });
});
