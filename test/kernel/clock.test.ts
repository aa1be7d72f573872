/**
 * The process clock: the machine's, or a test clock that starts at PARTNER_SYNC_TEST_NOW and runs
 * on, only with PARTNER_SYNC_TEST=1; a setting that cannot be honoured is an error, never ignored.
 */
import assert from 'node:assert/strict';
import { ClockSettingError, clockEnv, offsetClock, processClock, systemClock } from '../../src/kernel/clock.js';

describe('process clock', () => {
  // A machine clock that the test moves by hand.
  let machine = Date.parse('2026-12-02T05:00:00.000Z');
  const base = () => new Date(machine);

  it('is the machine clock when no test clock is set', () => {
    assert.equal(processClock({}), systemClock);
    assert.equal(processClock({ PARTNER_SYNC_TEST: '1', PARTNER_SYNC_TEST_NOW: '' }), systemClock);
  });

  it('starts at PARTNER_SYNC_TEST_NOW and runs at the machine clock rate', () => {
    const clock = processClock({ PARTNER_SYNC_TEST: '1', PARTNER_SYNC_TEST_NOW: '2027-02-28T23:59:59+01:00' }, base);
    assert.equal(clock().toISOString(), '2027-02-28T22:59:59.000Z');
    machine += 90_500;
    assert.equal(clock().toISOString(), '2027-02-28T23:01:29.500Z');
  });

  it('refuses a test clock without its switch, and an instant without a zone', () => {
    assert.throws(() => processClock({ PARTNER_SYNC_TEST_NOW: '2031-01-01T00:00:00Z' }, base),
      (e: unknown) => e instanceof ClockSettingError && /^PARTNER_SYNC_TEST_NOW is set \(2031-01-01T00:00:00Z\) but PARTNER_SYNC_TEST is not 1/.test(e.message));
    for (const bad of ['2031-01-01', '2031-01-01T00:00:00', '2031-02-30T00:00:00Z', 'tomorrow']) {
      assert.throws(() => processClock({ PARTNER_SYNC_TEST: '1', PARTNER_SYNC_TEST_NOW: bad }, base),
        { message: `PARTNER_SYNC_TEST_NOW must be an RFC 3339 date-time with a zone such as 2026-11-22T10:00:00Z, got ${JSON.stringify(bad)}` }, bad);
    }
  });

  it('hands a subprocess the instant a clock reads now', () => {
    const clock = offsetClock(base, 86_400_000);
    assert.deepEqual(clockEnv(clock), { PARTNER_SYNC_TEST: '1', PARTNER_SYNC_TEST_NOW: new Date(machine + 86_400_000).toISOString() });
    assert.equal(processClock(clockEnv(clock), base)().getTime(), machine + 86_400_000);
  });
});
