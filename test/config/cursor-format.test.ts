/**
 * A REST change field written as an epoch number (cursor_format): window bounds sent in its unit,
 * rounded so that no record inside the window is left out; values read compared as instants.
 */
import assert from 'node:assert/strict';
import { cursorBound, cursorInstant } from '../../src/config/cursor-format.js';
import { MaxCursor, nextStart } from '../../jobs/cursor-state.js';
import { windowParams } from '../../connectors/rest/source.js';

describe('cursor_format: epoch change fields', () => {
  it('sends the lower bound rounded down and the upper bound rounded up, in milliseconds or seconds', () => {
    assert.equal(cursorBound('2026-11-02T10:00:00.123456Z', 'unix_millis', 'from'), '1793613600123');
    assert.equal(cursorBound('2026-11-02T10:00:00.123456Z', 'unix_millis', 'to'), '1793613600124');
    assert.equal(cursorBound('2026-11-02T10:00:00.123000Z', 'unix_millis', 'to'), '1793613600123');
    assert.equal(cursorBound('2026-11-02T12:00:00.500+02:00', 'unix_seconds', 'from'), '1793613600');
    assert.equal(cursorBound('2026-11-02T12:00:00.500+02:00', 'unix_seconds', 'to'), '1793613601');
    assert.equal(cursorBound('2026-11-02T10:00:00Z', undefined, 'from'), '2026-11-02T10:00:00Z');
  });

  it('windowParams sends the bounds as the change field is written', () => {
    const incremental = { mode: 'cursor' as const, cursor_field: 'lastUpdate', cursor_format: 'unix_millis' as const, from_param: 'modified_since', to_param: 'modified_until', lookback_ms: 0, start: '' };
    assert.deepEqual(windowParams(incremental, { kind: 'cursor', from: '2026-11-02T10:00:00Z', to: '2026-11-02T11:00:00.000001Z' }), { modified_since: '1793613600000', modified_until: '1793617200001' });
  });

  it('reads epoch numbers (or digits as text) as ISO instants; other values stay as they are', () => {
    assert.equal(cursorInstant(1793613600123, 'unix_millis'), '2026-11-02T10:00:00.123Z');
    assert.equal(cursorInstant('1793613600', 'unix_seconds'), '2026-11-02T10:00:00.000Z');
    assert.equal(cursorInstant(1793613600123, undefined), 1793613600123);
    assert.equal(cursorInstant('not a number', 'unix_millis'), 'not a number');
  });

  it('the greatest epoch value loaded moves the start, compared as instants (9 digits of seconds sort before 10 as text)', () => {
    const max = new MaxCursor(undefined, '2026-11-03T00:00:00.000000Z');
    for (const v of [999_999_999_000, 1_793_613_600_123, 1_793_613_600_050, 4_102_444_800_000]) max.offer(cursorInstant(v, 'unix_millis'));
    assert.equal(max.value, '2026-11-02T10:00:00.123Z', 'a value past the run upper bound is not counted');
    assert.equal(nextStart('2026-11-01T00:00:00Z', '2026-11-03T00:00:00Z', max.value), '2026-11-02T10:00:00.123000Z');
  });
});

describe('cursor_format in a definition', () => {
  it('is unix_millis or unix_seconds on a REST cursor stream, and refused on a db stream', async () => {
    const { mkdtempSync, readFileSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { loadDefinition } = await import('../../src/config/load-definitions.js');
    const { packageRoot } = await import('../../src/paths.js');
    const dir = mkdtempSync(join(tmpdir(), 'partner-sync-cursor-format-'));
    try {
      const env = { SANDBOX_CLIENT_SECRET: 'x', REPLICA_PROP_URL: 'sqlite:/nonexistent.sqlite' };
      const rest = readFileSync(join(packageRoot(), 'config', 'partners', 'sandbox-casino.yaml'), 'utf8');
      const file = join(dir, 'sandbox-casino.yaml');
      writeFileSync(file, rest.replace(/^( +)cursor_field: last_modified_date\b.*$/m, '$1cursor_field: last_modified_date\n$1cursor_format: unix_millis'));
      const ok = await loadDefinition(file, env);
      assert.deepEqual(ok.errors, []);
      const customers = ok.definition?.streams.customers?.incremental;
      assert.equal(customers?.mode === 'cursor' ? customers.cursor_format : undefined, 'unix_millis');
      writeFileSync(file, rest.replace(/^( +)cursor_field: last_modified_date\b.*$/m, '$1cursor_field: last_modified_date\n$1cursor_format: millis'));
      const bad = await loadDefinition(file, env);
      assert.deepEqual(bad.errors.map((e) => [e.path, e.message]), [['streams.customers.incremental.cursor_format', 'must be one of unix_millis, unix_seconds, got "millis"']]);
      const db = readFileSync(join(packageRoot(), 'config', 'partners', 'replica-prop.yaml'), 'utf8');
      const dbFile = join(dir, 'replica-prop.yaml');
      writeFileSync(dbFile, db.replace(/^( +)lookback: PT10M( .*)?$/m, '$1lookback: PT10M\n$1cursor_format: unix_millis'));
      const refused = await loadDefinition(dbFile, env);
      assert.deepEqual(refused.errors.map((e) => e.message), ["is the REST form: a db stream's change column is read by its column type; remove it"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
