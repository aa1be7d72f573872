import assert from 'node:assert/strict';
import { mysqlColumn, pgColumn, sqliteColumn, type ResultColumn } from '../../connectors/sql/column-types.js';
import { addMicros, instantToIso, instantToSourceText, parseInstant, sourceDateTimeToIso } from '../../connectors/sql/datetime.js';
import { rowConverter } from '../../connectors/sql/rows.js';
import { createMapper } from '../../src/pipeline/map-record.js';

describe('sql values: date-times at the source precision', () => {
  it('zone-less text is read in the source zone; offsets are honoured; every fraction digit is kept, padded to six', () => {
    assert.equal(sourceDateTimeToIso('2024-05-01 10:00:00.123456', 'UTC'), '2024-05-01T10:00:00.123456Z');
    assert.equal(sourceDateTimeToIso('2024-05-01 10:00:00', 'UTC'), '2024-05-01T10:00:00.000000Z');
    assert.equal(sourceDateTimeToIso('2024-05-01 10:00:00.5', 'UTC'), '2024-05-01T10:00:00.500000Z');
    assert.equal(sourceDateTimeToIso('2024-05-01 10:00:00.999999', 'Europe/Malta'), '2024-05-01T08:00:00.999999Z');
    assert.equal(sourceDateTimeToIso('2024-01-01 00:30:00.000001', 'Europe/Malta'), '2023-12-31T23:30:00.000001Z');
    assert.equal(sourceDateTimeToIso('2024-05-01 10:00:00.25+00', 'Europe/Malta'), '2024-05-01T10:00:00.250000Z');
    assert.equal(sourceDateTimeToIso('2024-05-01 10:00:00.000001+05:30', 'UTC'), '2024-05-01T04:30:00.000001Z');
    assert.equal(sourceDateTimeToIso('2024-05-01 10:00:00-03', 'UTC'), '2024-05-01T13:00:00.000000Z');
    assert.equal(sourceDateTimeToIso('1900-01-01 00:00:00+00:53:28', 'UTC'), '1899-12-31T23:06:32.000000Z');
    assert.equal(sourceDateTimeToIso('2024-05-01T10:00:00.123456789Z', 'UTC'), '2024-05-01T10:00:00.123456789Z');
    for (const notADateTime of ['0000-00-00 00:00:00', '2023-02-29 10:00:00', 'infinity', '2024-05-01', '10:00:00']) {
      assert.equal(sourceDateTimeToIso(notADateTime, 'UTC'), undefined, notADateTime);
    }
  });

  it('bounds: microsecond arithmetic, written as zone-less source text without trailing zeros', () => {
    const from = parseInstant('2024-05-01T00:00:00.000Z');
    assert.ok(from);
    assert.equal(instantToSourceText(from, 'UTC'), '2024-05-01 00:00:00');
    assert.equal(instantToSourceText(addMicros(from, -1), 'UTC'), '2024-04-30 23:59:59.999999');
    assert.equal(instantToSourceText(addMicros(from, 500_000), 'Europe/Malta'), '2024-05-01 02:00:00.5');
    assert.equal(instantToIso(addMicros(from, -30_000_000)), '2024-04-30T23:59:30.000000Z');
    assert.deepEqual(parseInstant('2024-05-01 10:00:00.123456789', 'UTC'), { seconds: Date.UTC(2024, 4, 1, 10) / 1000, micros: 123456 });
  });
});

describe('sql values: local wall times around a DST change (Europe/Malta)', () => {
  const z = 'Europe/Malta';
  const bound = (iso: string) => instantToSourceText(parseInstant(iso) as NonNullable<ReturnType<typeof parseInstant>>, z);

  it('a repeated wall time is its later occurrence, a skipped one the instant of the change: readings keep the order of the text', () => {
    // Autumn: 03:00 CEST → 02:00 CET at 01:00Z, so 02:00..02:59 occur twice.
    assert.equal(sourceDateTimeToIso('2026-10-25 01:59:59.5', z), '2026-10-24T23:59:59.500000Z');
    assert.equal(sourceDateTimeToIso('2026-10-25 02:30:00.25', z), '2026-10-25T01:30:00.250000Z');
    assert.equal(sourceDateTimeToIso('2026-10-25 03:00:00', z), '2026-10-25T02:00:00.000000Z');
    // Spring: 02:00 CET → 03:00 CEST at 01:00Z, so 02:00..02:59 do not exist.
    assert.equal(sourceDateTimeToIso('2026-03-29 01:59:59.999999', z), '2026-03-29T00:59:59.999999Z');
    assert.equal(sourceDateTimeToIso('2026-03-29 02:30:00.7', z), '2026-03-29T01:00:00.000000Z');
    assert.equal(sourceDateTimeToIso('2026-03-29 03:00:00', z), '2026-03-29T01:00:00.000000Z');
    assert.equal(sourceDateTimeToIso('2026-11-01 01:30:00', 'America/New_York'), '2026-11-01T06:30:00.000000Z');
  });

  it('a bound is the smallest wall time whose reading is at or after it', () => {
    assert.equal(bound('2026-10-24T23:59:59Z'), '2026-10-25 01:59:59');
    // In the first pass of the repeated hour: its start, whose reading (the second pass) comes after.
    assert.equal(bound('2026-10-25T00:00:00Z'), '2026-10-25 02:00:00');
    assert.equal(bound('2026-10-25T00:30:00.25Z'), '2026-10-25 02:00:00');
    assert.equal(bound('2026-10-25T01:30:00.5Z'), '2026-10-25 02:30:00.5');
    // At the spring change the skipped wall times (read as that instant) come first.
    assert.equal(bound('2026-03-29T01:00:00Z'), '2026-03-29 02:00:00');
    assert.equal(bound('2026-03-29T01:00:00.1Z'), '2026-03-29 03:00:00.1');
  });
});

describe('sql values: driver rows to partner records', () => {
  const columns = (list: [string, ResultColumn['type']][]): ResultColumn[] => list.map(([name, type]) => ({ name, type, typeName: type }));

  it('decimals and big integers read as text become numbers; dates stay days; the exact text stays when a number cannot hold it', () => {
    const convert = rowConverter(
      columns([['id', 'integer'], ['big', 'integer'], ['amount', 'decimal'], ['day', 'date'], ['at', 'timestamp'], ['at_tz', 'timestamptz'], ['name', 'string'], ['missing', 'string']]),
      'UTC',
    );
    assert.deepEqual(convert({ id: '42', big: '9007199254740993', amount: '-1234.50', day: '2024-05-01', at: '2024-05-01 10:00:00.000001', at_tz: '2024-05-01 12:00:00+02', name: '2024-05-01 10:00:00', missing: null }), {
      id: 42,
      big: '9007199254740993',
      amount: -1234.5,
      day: '2024-05-01',
      at: '2024-05-01T10:00:00.000001Z',
      at_tz: '2024-05-01T10:00:00.000000Z',
      name: '2024-05-01 10:00:00',
      missing: null,
    });
  });

  it('SQLite expressions (no declared type): a value shaped like a date-time is one; a column named __proto__ stays a field', () => {
    const convert = rowConverter(columns([['m', 'untyped'], ['d', 'untyped'], ['__proto__', 'string']]), 'UTC');
    const record = convert(JSON.parse('{"m":"2024-05-01 10:00:00.123","d":"2024-05-01","__proto__":"x"}') as Record<string, unknown>);
    assert.deepEqual(Object.keys(record), ['m', 'd', '__proto__']);
    assert.equal(record.m, '2024-05-01T10:00:00.123000Z');
    assert.equal(record.d, '2024-05-01');
    assert.equal(Object.getPrototypeOf(record), Object.prototype);
  });

  it('driver column metadata folds into kinds', () => {
    assert.deepEqual(mysqlColumn({ name: 'a', columnType: 0x0c }), { name: 'a', type: 'timestamp', typeName: 'DATETIME' });
    assert.deepEqual(mysqlColumn({ name: 'b', columnType: 0xfc, characterSet: 63 }), { name: 'b', type: 'binary', typeName: 'BLOB' });
    assert.deepEqual(pgColumn({ name: 'c', dataTypeID: 1184 }), { name: 'c', type: 'timestamptz', typeName: 'timestamp with time zone' });
    assert.deepEqual(sqliteColumn({ name: 'd', type: 'DECIMAL(15,2)' }), { name: 'd', type: 'decimal', typeName: 'DECIMAL(15,2)' });
    assert.deepEqual(sqliteColumn({ name: 'e', type: null }), { name: 'e', type: 'untyped', typeName: 'no declared type' });
  });
});

describe('sql values: a DECIMAL of more digits than a double keeps', () => {
  it('is judged as the source holds it: the mapping rejects 1.00000000000000010000 (17 significant digits) by maxSignificantDigits; 12.50000000 maps to 12.5', () => {
    const convert = rowConverter([pgColumn({ name: 'id', dataTypeID: 25 }), pgColumn({ name: 'amount', dataTypeID: 1700 })], 'UTC');
    const map = createMapper('igaming', 'transactions', { passthrough: false, fields: { transaction_id: 'id', customer_id: { const: 'c1' }, transaction_type: { const: 'deposit' }, amount_currency: 'amount', currency: { const: 'EUR' }, transaction_date: { const: '2026-01-01T00:00:00Z' }, status: { const: 'approved' } } }, { map: {}, unmapped: 'keep' });
    const long = map(convert({ id: 't1', amount: '1.00000000000000010000' }));
    assert.ok('error' in long, JSON.stringify(long));
    assert.equal(long.error.field, 'amount_currency');
    assert.equal(long.error.rule, 'maxSignificantDigits');
    assert.match(long.error.message, /1\.00000000000000010000/);
    const exact = map(convert({ id: 't2', amount: '12.50000000' }));
    assert.ok('record' in exact, JSON.stringify(exact));
    assert.equal(exact.record.amount_currency, 12.5);
  });
});
