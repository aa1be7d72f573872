/**
 * A bulk run's settle: the report facts are recomputed beside the commissions (on PostgreSQL on
 * another connection, once the fraud rules ended; on SQLite after them). Both always end; a failure of the facts
 * does not keep the commissions from being booked, is thrown once both ended, and leaves the facts'
 * days pending for the next settle, which then ends exact.
 */
import assert from 'node:assert/strict';
import { resumeJobs } from '../../jobs/load-hooks.js';
import { silentLogger } from '../../src/log.js';
import { raw, customer, deposit } from '../support/records.js';
import { STORES } from '../support/stores.js';
import { reportWorld, type ReportWorld } from '../reports/support.js';

async function count(w: ReportWorld, table: string): Promise<number> {
  return Number(((await w.t.store.knex(table).count({ n: '*' })) as { n: unknown }[])[0]?.n ?? 0);
}

for (const backend of STORES) {
  describe(`a bulk run's settle: report facts beside the commissions (${backend.name})`, function () {
    this.timeout(120_000);
    let w: ReportWorld;
    beforeEach(async () => {
      w = await reportWorld(backend);
    });
    afterEach(async () => w?.drop());

    const bulk = async (runId: string) => {
      w.loader.evaluateRun(runId, 'group');
      const ids = ['c1', 'c2', 'c3'];
      await w.loader.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId, records: raw(ids.map((id) => customer(id))) });
      // USD deposits: no rate needed. Each first deposit is a CPA of 100.00 (test PLANS).
      await w.loader.load({ partner: 'casino', variant: 'igaming', entity: 'transactions', runId, records: raw(ids.map((id) => deposit(`t-${id}`, id, { currency: 'USD', amount_currency: 50 }))) });
    };

    it('books the commissions and fills the facts in one settle', async () => {
      await bulk('bulk-1');
      assert.equal(await count(w, 'commission_ledger'), 0, 'nothing is booked before the settle');
      await w.loader.endDeferred('bulk-1');
      const ledger = (await w.t.store.knex('commission_ledger').select('customer_id', 'amount_usd').orderBy('customer_id')) as { customer_id: string; amount_usd: unknown }[];
      assert.deepEqual(ledger.map((l) => [l.customer_id, Number(l.amount_usd).toFixed(2)]), [['c1', '100.00'], ['c2', '100.00'], ['c3', '100.00']]);
      const cell = (await w.t.store.knex('report_cells').where({ partner_id: 'casino', day: '2026-11-02' }).first('ftd_count', 'deposit_count')) as { ftd_count: unknown; deposit_count: unknown };
      assert.deepEqual([Number(cell.ftd_count), Number(cell.deposit_count)], [3, 3]);
      assert.equal(await count(w, 'report_pending'), 0);
      assert.equal(await count(w, 'commission_pending'), 0);
    });

    it('a failed facts recompute is thrown after the commissions are booked, and the next settle ends exact', async () => {
      await bulk('bulk-2');
      // The facts' table is gone for the settle: its recompute fails.
      await w.t.store.knex.schema.renameTable('report_depositors', 'report_depositors_away');
      await assert.rejects(w.loader.endDeferred('bulk-2'), /report_depositors/);
      assert.equal(await count(w, 'commission_ledger'), 3, 'the commissions were booked all the same');
      assert.equal(await count(w, 'commission_pending'), 0);
      assert.ok((await count(w, 'report_pending')) > 0, 'the facts wait, on disk, for the next settle');
      await w.t.store.knex.schema.renameTable('report_depositors_away', 'report_depositors');
      await resumeJobs(w.t.store, { plans: w.plans, logger: silentLogger() });
      assert.equal(await count(w, 'report_pending'), 0);
      const cell = (await w.t.store.knex('report_cells').where({ partner_id: 'casino', day: '2026-11-02' }).first('ftd_count', 'depositors')) as { ftd_count: unknown; depositors: unknown };
      assert.deepEqual([Number(cell.ftd_count), Number(cell.depositors)], [3, 3]);
      assert.equal(await count(w, 'commission_ledger'), 3, 'the rerun books nothing twice');
    });
  });
}
