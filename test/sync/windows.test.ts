import assert from 'node:assert/strict';
import { currentStart, nextStart } from '../../jobs/cursor-state.js';
import { backfillWindows, cursorWindow, dailyDays, dayWindows, recordDay } from '../../jobs/windows.js';
import { addDays } from '../../src/kernel/dates.js';

const cursor = { mode: 'cursor' as const, cursor_field: 'last_modified_date', from_param: 'since', lookback_ms: 10 * 60_000, start: '' };
const daily = { mode: 'daily' as const, date_param: 'date', late_days: 2, start: '' };
const at = (iso: string) => new Date(iso);

describe('pull windows', () => {
  it('a cursor window runs open-ended from the start minus the lookback; the fixed start of the run is its upper bound', () => {
    assert.deepEqual(cursorWindow(cursor, { watermark: '2026-11-22T10:05:00.000Z', start: '2026-11-22T10:00:00.000Z' }, at('2026-11-22T10:05:00.123Z')), {
      kind: 'cursor', from: '2026-11-22T09:50:00.000Z', to: '2026-11-22T10:05:00.123Z', open: true,
    });
  });

  it('a start at microseconds is rounded down, never up: the lower bound is inclusive', () => {
    assert.equal(cursorWindow({ ...cursor, lookback_ms: 0 }, { start: '2026-11-22T10:00:00.999999Z' }, at('2026-11-22T11:00:00Z')).from, '2026-11-22T10:00:00.999Z');
  });

  it('a state written before the start was kept (its watermark is our clock) starts at the greatest cursor value when that is earlier', () => {
    // The partner's clock is three weeks behind: the old watermark would skip everything it writes now.
    assert.equal(cursorWindow(cursor, { watermark: '2026-11-22T10:00:00.000Z', max_cursor: '2026-11-01T08:00:00.123456+02:00' }, at('2026-11-22T10:05:00Z')).from, '2026-11-01T05:50:00.123Z');
    assert.equal(cursorWindow(cursor, { watermark: '2026-11-22T10:00:00.000Z', max_cursor: '2099-01-01T00:00:00Z' }, at('2026-11-22T10:05:00Z')).from, '2026-11-22T09:50:00.000Z');
  });

  it('the next start: min(upper bound, greatest cursor value loaded); kept when nothing loaded; never back; never past the upper bound', () => {
    const upper = '2026-11-22T10:05:00.000Z';
    // a partner clock three weeks behind
    assert.equal(nextStart('2026-10-31T00:00:00Z', upper, '2026-11-01T08:00:00.5Z'), '2026-11-01T08:00:00.500000Z');
    // a partner clock two hours ahead, and a bogus 2099 stamp: capped at the upper bound
    assert.equal(nextStart('2026-11-22T09:00:00Z', upper, '2026-11-22T12:05:00Z'), '2026-11-22T10:05:00.000000Z');
    assert.equal(nextStart('2026-11-22T09:00:00Z', upper, '2099-12-31T23:59:59Z'), '2026-11-22T10:05:00.000000Z');
    // nothing loaded: the start stays
    assert.equal(nextStart('2026-11-22T09:00:00Z', upper, undefined), '2026-11-22T09:00:00.000000Z');
    // only records inside the lookback (older than the start): the start stays, it never goes back
    assert.equal(nextStart('2026-11-22T09:00:00Z', upper, '2026-11-22T08:55:00Z'), '2026-11-22T09:00:00.000000Z');
    assert.equal(currentStart({ start: '2026-11-22T09:00:00+01:00', watermark: upper }), '2026-11-22T08:00:00.000000Z');
  });

  it('a first cursor run starts at the configured start, else at midnight UTC 30 days back', () => {
    assert.equal(cursorWindow(cursor, undefined, at('2026-11-22T10:05:00Z')).from, '2026-10-23T00:00:00.000Z');
    assert.equal(cursorWindow({ ...cursor, start: '2026-01-01T12:00:00Z' }, undefined, at('2026-11-22T10:05:00Z')).from, '2026-01-01T12:00:00.000Z');
  });

  it('a daily run pulls the previous closed day and late_days before it, from the scheduled time', () => {
    assert.deepEqual(dailyDays(daily, undefined, at('2026-11-22T00:15:00Z')), ['2026-11-19', '2026-11-20', '2026-11-21']);
    // the same run scheduled for 23:59 the day before pulls one day earlier: the wall clock does not matter
    assert.deepEqual(dailyDays(daily, undefined, at('2026-11-21T23:59:00Z')), ['2026-11-18', '2026-11-19', '2026-11-20']);
  });

  it('after downtime a daily run catches up from the day after the last one loaded', () => {
    assert.deepEqual(dailyDays(daily, { last_day: '2026-11-15' }, at('2026-11-22T00:15:00Z')), ['2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20', '2026-11-21']);
    assert.deepEqual(dailyDays(daily, { last_day: '2026-11-21' }, at('2026-11-22T00:15:00Z')), ['2026-11-19', '2026-11-20', '2026-11-21']);
  });

  it('backfills cover closed days: whole days for daily streams, [from 00:00, to+1 00:00) for cursor streams', () => {
    assert.deepEqual(backfillWindows(daily, '2026-02-27', '2026-03-01'), [
      { kind: 'days', from: '2026-02-27', to: '2026-02-27' }, { kind: 'days', from: '2026-02-28', to: '2026-02-28' }, { kind: 'days', from: '2026-03-01', to: '2026-03-01' },
    ]);
    assert.deepEqual(backfillWindows(cursor, '2026-02-27', '2026-03-01'), [{ kind: 'cursor', from: '2026-02-27T00:00:00.000Z', to: '2026-03-02T00:00:00.000Z' }]);
    assert.deepEqual(dayWindows(['2026-03-01', '2026-03-02', '2026-03-03'], 2), [{ kind: 'days', from: '2026-03-01', to: '2026-03-02' }, { kind: 'days', from: '2026-03-03', to: '2026-03-03' }]);
  });

  it('daily state keeps the latest day and a bounded list of recent days', () => {
    let state = recordDay(undefined, '2026-11-20', 't1');
    state = recordDay(state, '2026-11-18', 't2');
    assert.equal(state.last_day, '2026-11-20');
    for (let d = 1; d <= 70; d++) state = recordDay(state, addDays('2026-08-01', d), 't');
    assert.equal(Object.keys(state.days ?? {}).length, 62);
    assert.ok(state.days?.['2026-11-20']);
  });
});
