/**
 * Batches that only add approved deposits to a customer's history are read for what they add (the
 * stored FTD's deposit, the depositor days from the month of the earliest new deposit on), not for
 * the customer's whole history: after every batch of such a sequence (an earlier FTD, a same-day
 * deposit, a new month, an earlier month, a tie on the FTD's time, a deposit without a USD amount,
 * a pending deposit, then a reversal that is not an addition) the facts kept by difference equal,
 * row for row, what a full rebuild from the raw tables writes, on both stores.
 */
import assert from 'node:assert/strict';
import { affiliateReport } from '../../src/reports/affiliates.js';
import { rebuildFacts } from '../../src/reports/facts.js';
import type { SpecRecord } from '../../src/types.js';
import { STORES } from '../support/stores.js';
import { factTables, person, reportWorld, type ReportWorld } from './support.js';

const deposit = (id: string, customer: string, at: string, amount: number, extra: SpecRecord = {}): SpecRecord => ({
  transaction_id: id, customer_id: customer, transaction_type: 'deposit', amount_currency: amount, currency: 'USD', amount_usd: amount,
  transaction_date: at, status: 'approved', ...extra,
});

for (const backend of STORES) {
  describe(`deposit batches that only add, on ${backend.name}`, () => {
    let w: ReportWorld;
    beforeEach(async () => { w = await reportWorld(backend); });
    afterEach(async () => w.drop());

    /** The facts now against a rebuild of them from the raw tables (which then stay: they are equal). */
    async function assertAsRebuilt(step: string): Promise<void> {
      const kept = await factTables(w.t.store.knex);
      await rebuildFacts(w.t.store, 'casino', 'igaming');
      const rebuilt = await factTables(w.t.store.knex);
      for (const table of Object.keys(rebuilt)) assert.deepEqual(kept[table], rebuilt[table], `${step}: ${table} kept by difference ≠ rebuilt`);
    }

    it('keeps the FTD, depositor days and cells exact, batch after batch', async () => {
      await w.rates('date,currency,rate\n2026-11-03,EUR,1.1\n');
      await w.load('customers', [person('c1', 'aff-1'), person('c2', 'aff-2', { campaign_id: 'spring' })]);
      const steps: [string, SpecRecord[]][] = [
        ['first deposits', [deposit('t1', 'c1', '2026-11-10T12:00:00Z', 50), deposit('t2', 'c2', '2026-11-12T08:00:00+02:00', 20)]],
        ['an earlier deposit becomes the FTD', [deposit('t3', 'c1', '2026-11-05T09:00:00Z', 30)]],
        ['same day as a stored one, and a new month', [deposit('t4', 'c1', '2026-11-05T23:59:59.5Z', 10), deposit('t5', 'c1', '2026-12-01T00:00:00Z', 15)]],
        ['an earlier month: the FTD moves across months', [deposit('t6', 'c1', '2026-10-20T10:00:00-05:00', 5), deposit('t7', 'c2', '2026-12-02T00:00:00Z', 7)]],
        ['a tie on the FTD time, smaller id', [deposit('t0', 'c1', '2026-10-20T15:00:00Z', 9)]],
        ['no USD amount, converted by the day rate', [deposit('t8', 'c2', '2026-11-03T10:00:00Z', 100, { currency: 'EUR', amount_usd: undefined })]],
        ['a pending deposit, then more approved ones in one batch', [deposit('t9', 'c2', '2026-11-01T10:00:00Z', 40, { status: 'pending' }), deposit('t10', 'c2', '2026-11-02T10:00:00Z', 1), deposit('t11', 'c2', '2026-11-02T11:00:00Z', 2)]],
        ['the pending one approved (its old version was no approved deposit)', [deposit('t9', 'c2', '2026-11-01T10:00:00Z', 40)]],
        ['the FTD reversed (not an addition)', [deposit('t0', 'c1', '2026-10-20T15:00:00Z', 9, { status: 'reversed' })]],
        ['a deposit after the reversal', [deposit('t12', 'c1', '2026-10-21T00:00:00Z', 3)]],
      ];
      for (const [step, records] of steps) {
        await w.load('transactions', records.map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined))));
        await assertAsRebuilt(step);
      }
      // The figures a user reads: c1's FTD is t6 (15:00 UTC on 10-20, tied with t0, which was reversed), c2's is t9 (approved late, earliest).
      const ftd: Record<string, unknown>[] = await w.t.store.knex('report_ftd').where('partner_id', 'casino').orderBy('customer_id').select('customer_id', 'transaction_id');
      assert.deepEqual(ftd.map((r) => `${String(r.customer_id)}:${String(r.transaction_id)}`), ['c1:t6', 'c2:t9']);
      const report = await affiliateReport(w.t.store, { partner: 'casino', from: '2026-10-01', to: '2026-12-31' }, 'month');
      const month = (affiliate: string, m: string) => report.rows.find((r) => r.affiliate === affiliate && r.month === m);
      assert.deepEqual([month('aff-1', '2026-10')?.ftd_count, month('aff-1', '2026-10')?.depositors, month('aff-1', '2026-11')?.ftd_count, month('aff-1', '2026-11')?.depositors], [1, 1, 0, 1]);
      assert.deepEqual([month('aff-2', '2026-11')?.ftd_count, month('aff-2', '2026-11')?.ftd_usd, month('aff-2', '2026-12')?.depositors], [1, '40.00', 1]);
    });
  });
}
