import assert from 'node:assert/strict';
import { formatMicros, instantKey, parseDay, queryInstantKey } from '../../src/sandbox/instant.js';

describe('sandbox instants', () => {
  it('orders date-times at full precision, across precisions', () => {
    const texts = [
      '2026-11-02T10:00:00Z',
      '2026-11-02T10:00:00.000001Z',
      '2026-11-02T10:00:00.1Z',
      '2026-11-02T10:00:00.123Z',
      '2026-11-02T10:00:00.123456Z',
      '2026-11-02T10:00:00.123457Z',
      '2026-11-02T10:00:00.5Z',
      '2026-11-02T10:00:01Z',
    ];
    const keys = texts.map((t) => instantKey(t) as string);
    assert.deepEqual([...keys].sort(), keys);
    assert.equal(new Set(keys).size, keys.length);
  });

  it('gives equal instants equal keys, whatever the zone or trailing zeros', () => {
    assert.equal(instantKey('2026-11-02T10:00:00.500Z'), instantKey('2026-11-02T12:00:00.5+02:00'));
    assert.equal(instantKey('2026-11-02T10:00:00Z'), instantKey('2026-11-02T10:00:00.000000Z'));
    assert.equal(instantKey('2026-11-02T00:30:00-01:00'), instantKey('2026-11-02T01:30:00Z'));
  });

  it('rejects what is not an RFC 3339 date-time or not in the calendar', () => {
    for (const bad of ['2026-11-02', '2026-11-02T10:00:00', '2026-02-29T10:00:00Z', '2026-04-31T00:00:00Z', '2026-11-02T24:00:00Z', 'yesterday', '']) {
      assert.equal(instantKey(bad), undefined, bad);
    }
    assert.notEqual(instantKey('2024-02-29T10:00:00Z'), undefined);
  });

  it('takes back an unencoded + of a query parameter', () => {
    assert.equal(queryInstantKey('2026-11-02T12:00:00 02:00'), instantKey('2026-11-02T10:00:00Z'));
  });

  it('parses calendar days and formats microseconds', () => {
    assert.equal(parseDay('2026-02-30'), undefined);
    assert.equal(typeof parseDay('2026-11-02'), 'number');
    const micros = Date.parse('2026-11-02T10:00:00.123Z') * 1000 + 456;
    assert.equal(formatMicros(micros, 'us'), '2026-11-02T10:00:00.123456Z');
    assert.equal(formatMicros(micros, 'ms'), '2026-11-02T10:00:00.123Z');
  });
});
