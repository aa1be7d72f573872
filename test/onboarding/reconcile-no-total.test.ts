/** A REST partner whose answer has no meta.total: reconcile says its count was not checked, never silence. */
import assert from 'node:assert/strict';
import { reconciliationLines, type Reconciliation } from '../../src/onboarding/reconcile.js';

describe('reconcile without meta.total', () => {
  it('prints a note per stream whose partner count was not checked', () => {
    const r: Reconciliation = { partner: 'p1', from: '2026-10-01', to: '2026-10-01', ok: true, days: [], unmappable: [], totals: [], source_sql_skipped: [], no_total: ['customers', 'activity'], values: { sample: 200, seed: 1, streams: [] } };
    const lines = reconciliationLines(r);
    assert.ok(lines.includes("note customers: no meta.total: the partner's count was not checked"), lines.join('\n'));
    assert.ok(lines.includes("note activity: no meta.total: the partner's count was not checked"), lines.join('\n'));
  });
});
