/**
 * Report cells are updated in place by every batch (migration 017): on PostgreSQL the cell tables
 * keep free room on each page, so an update of a cell's sums stays on its page and writes no index
 * entry (a heap-only tuple). Checked where it shows: the table's statistics after a second batch
 * moves cells that the first one wrote, and the cells' figures.
 */
import assert from 'node:assert/strict';
import { STORES } from '../support/stores.js';
import { reportWorld, type ReportWorld } from './support.js';

const postgres = STORES.filter((b) => b.name === 'postgres');

const customer = (i: number) => ({ customer_id: `c${i}`, signup_date: '2026-11-02T10:00:00Z', affiliate_id: `aff-${i % 20}`, campaign_id: 'spring' });

for (const backend of postgres) {
  describe(`report cells updated in place on ${backend.name}`, () => {
    let w: ReportWorld;
    beforeEach(async () => { w = await reportWorld(backend); });
    afterEach(async () => w.drop());

    it('the cell tables leave room on each page, and a batch that moves existing cells updates them without new index entries', async () => {
      const options: { table: string; options: string[] | null }[] = (await w.t.store.knex.raw(
        "SELECT relname AS table, reloptions AS options FROM pg_class WHERE relname IN ('report_cells', 'report_month_cells', 'report_purchase_cells') AND relnamespace = current_schema()::regnamespace ORDER BY relname")).rows;
      assert.deepEqual(options, [
        { table: 'report_cells', options: ['fillfactor=70'] },
        { table: 'report_month_cells', options: ['fillfactor=70'] },
        { table: 'report_purchase_cells', options: ['fillfactor=70'] },
      ]);

      await w.load('customers', Array.from({ length: 200 }, (_, i) => customer(i)));
      const stats = async (): Promise<{ upd: number; hot: number }> => {
        await w.t.store.knex.raw('SELECT pg_stat_clear_snapshot()');
        const [row] = (await w.t.store.knex.raw("SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'report_cells' AND schemaname = current_schema()")).rows;
        return { upd: Number(row.upd), hot: Number(row.hot) };
      };
      const before = await stats();
      // 200 more registrations on the same day in the same 20 cells: each cell is updated once.
      await w.load('customers', Array.from({ length: 200 }, (_, i) => customer(i + 200)));
      // Statistics reach the shared view when the writing session flushes them (at most a second or so).
      let after = await stats();
      for (let tries = 0; tries < 40 && after.upd - before.upd < 20; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        after = await stats();
      }
      assert.equal(after.upd - before.upd, 20);
      assert.equal(after.hot - before.hot, 20, 'every cell update stayed on its page');
      const cells: { affiliate_id: string; registrations: string }[] = await w.t.store.knex('report_cells').where('partner_id', 'casino').orderBy('affiliate_id').select('affiliate_id', 'registrations');
      assert.equal(cells.length, 20);
      assert.ok(cells.every((c) => Number(c.registrations) === 20), JSON.stringify(cells));
    });
  });
}
