import assert from 'node:assert/strict';
import { addDays, backfillWindows, cursorWindow, dailyDays, dayWindows, recordDay } from '../../jobs/windows.js';

const cursor = { mode: 'cursor' as const, cursor_field: 'last_modified_date', from_param: 'since', lookback_ms: 10 * 60_000, start: '' };
const daily = { mode: 'daily' as const, date_param: 'date', late_days: 2, start: '' };
const at = (iso: string) => new Date(iso);

describe('pull windows', () => {
  it('a cursor window runs from the watermark minus the lookback to the fixed start of the run', () => {
    assert.deepEqual(cursorWindow(cursor, { watermark: '2026-11-22T10:00:00.000Z' }, at('2026-11-22T10:05:00.123Z')), {
      kind: 'cursor', from: '2026-11-22T09:50:00.000Z', to: '2026-11-22T10:05:00.123Z',
    });
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
