/**
 * Activity by month (migration 013): on PostgreSQL the activity tables are partitioned by month;
 * a load that meets a month without a partition creates it, the worker's upkeep creates the
 * coming months, and a rolled-back creation is not believed afterwards. A day replaced in one
 * transaction loads its batches without savepoints, yet a key sent twice in the day (two pages)
 * still ends as its last version. SQLite keeps plain tables and loads the same rows.
 */
import assert from 'node:assert/strict';
import { Loader } from '../../src/pipeline/load.js';
import { ensureMonthsAhead, isPartitioned, partitionMonths } from '../../src/store/partitions.js';
import { openStore } from '../../src/store/store.js';
import { loaderWith } from '../support/loader.js';
import { gaming, raw } from '../support/records.js';
import { STORES, fixedClock, type TestStore } from '../support/stores.js';

for (const backend of STORES) {
  describe(`activity partitions on ${backend.name}`, () => {
    let t: TestStore;
    let loader: Loader;
    beforeEach(async () => {
      t = await backend.create(fixedClock('2026-11-22T10:00:00.000Z'));
      loader = loaderWith(t.store, []);
    });
    afterEach(async () => t.drop());

    const rows = async (): Promise<{ date: string; customer_id: string; ggr: string }[]> =>
      (await t.store.knex('gaming_activity').where('partner_id', 'p1').orderBy(['date', 'customer_id']).select('date', 'customer_id', 'ggr'))
        .map((r: { date: unknown; customer_id: string; ggr: unknown }) => ({ date: String(r.date instanceof Date ? r.date.toISOString() : r.date).slice(0, 10), customer_id: r.customer_id, ggr: String(Number(r.ggr)) }));

    it('a load into a month without a partition creates it; a rolled-back creation is made again next time', async () => {
      await loader.load({ partner: 'p1', variant: 'igaming', entity: 'customers', runId: 'r', records: raw([{ customer_id: 'c1', signup_date: '2020-01-01T00:00:00Z', affiliate_id: 'a' }]) });
      const partitioned = backend.name === 'postgres';
      assert.equal(partitioned ? await isPartitioned(t.store.knex, 'gaming_activity') : false, partitioned);
      // 2021-03 is years before any partition made by the migration. A row written straight into
      // the table (no Loader) waits in the default partition until the month's partition is made.
      await t.store.knex('gaming_activity').insert({ partner_id: 'p1', date: '2021-03-20', customer_id: 'c0', game_type: 'slots', currency: 'EUR', ggr: '3', run_id: 'x', loaded_at: '2026-11-22T10:00:00.000000Z' });
      await assert.rejects(loader.transaction(async (tx) => {
        await tx.load({ partner: 'p1', variant: 'igaming', entity: 'activity', runId: 'r', records: raw([gaming('2021-03-05', 'c1', { ggr: 5 })]) });
        throw new Error('rolled back on purpose');
      }), /rolled back on purpose/);
      if (partitioned) assert.equal((await partitionMonths(t.store.knex, 'gaming_activity')).has('2021-03'), false);
      await loader.load({ partner: 'p1', variant: 'igaming', entity: 'activity', runId: 'r', records: raw([gaming('2021-03-05', 'c1', { ggr: 7 }), gaming('2021-04-30', 'c1', { ggr: 8 })]) });
      assert.deepEqual(await rows(), [{ date: '2021-03-05', customer_id: 'c1', ggr: '7' }, { date: '2021-03-20', customer_id: 'c0', ggr: '3' }, { date: '2021-04-30', customer_id: 'c1', ggr: '8' }]);
      if (partitioned) {
        const months = await partitionMonths(t.store.knex, 'gaming_activity');
        assert.ok(months.has('2021-03') && months.has('2021-04'), [...months].join(','));
        const inMonth = await t.store.knex('gaming_activity_p202103').count({ n: '*' });
        const inDefault = await t.store.knex('gaming_activity_default').count({ n: '*' });
        assert.deepEqual([Number(inMonth[0]?.n), Number(inDefault[0]?.n)], [2, 0], 'the row that waited in the default partition moved into its month');
      }
    });

    it('the upkeep creates this month and the next two, once', async () => {
      const created = await ensureMonthsAhead(t.store, '2031-12-15T00:00:00Z');
      if (backend.name === 'sqlite') return assert.deepEqual(created, []);
      assert.deepEqual(created, ['gaming_activity_p203112', 'gaming_activity_p203201', 'gaming_activity_p203202', 'trading_activity_p203112', 'trading_activity_p203201', 'trading_activity_p203202']);
      assert.deepEqual(await ensureMonthsAhead(t.store, '2031-12-15T00:00:00Z'), []);
    });

    it('two loads meeting the same new month at once both commit: the second waits for the first one\'s partition and uses it', async () => {
      if (backend.name === 'sqlite') return;
      await loader.load({ partner: 'p1', variant: 'igaming', entity: 'customers', runId: 'r', records: raw([{ customer_id: 'c1', signup_date: '2020-01-01T00:00:00Z', affiliate_id: 'a' }]) });
      await loader.load({ partner: 'p2', variant: 'igaming', entity: 'customers', runId: 'r', records: raw([{ customer_id: 'c1', signup_date: '2020-01-01T00:00:00Z', affiliate_id: 'a' }]) });
      // A second process: its own store handle, its own partition cache.
      const other = loaderWith(await openStore({ url: t.url }), []);
      try {
        let release!: () => void;
        const held = new Promise<void>((resolve) => { release = resolve; });
        let created!: () => void;
        const firstCreated = new Promise<void>((resolve) => { created = resolve; });
        const first = loader.transaction(async (tx) => {
          await tx.load({ partner: 'p1', variant: 'igaming', entity: 'activity', runId: 'r', records: raw([gaming('2022-07-01', 'c1', { ggr: 1 })]) });
          created();
          await held; // the partition is made, not committed yet
        });
        await firstCreated;
        const second = other.load({ partner: 'p2', variant: 'igaming', entity: 'activity', runId: 'r', records: raw([gaming('2022-07-02', 'c1', { ggr: 2 })]) });
        await new Promise((resolve) => setTimeout(resolve, 300));
        release();
        await first;
        await second;
      } finally {
        await other.store.close();
      }
      const stored = await t.store.knex('gaming_activity_p202207').orderBy('partner_id').select('partner_id', 'ggr');
      assert.deepEqual(stored.map((r: { partner_id: string; ggr: unknown }) => [r.partner_id, String(Number(r.ggr))]), [['p1', '1'], ['p2', '2']]);
    });

    it('a replaced day whose pages repeat a key ends with the key\'s last version (no savepoint needed until then)', async () => {
      await loader.load({ partner: 'p1', variant: 'igaming', entity: 'customers', runId: 'r', records: raw(['c1', 'c2', 'c3'].map((id) => ({ customer_id: id, signup_date: '2026-10-01T00:00:00Z', affiliate_id: 'a' }))) });
      await loader.load({ partner: 'p1', variant: 'igaming', entity: 'activity', runId: 'r', records: raw([gaming('2026-11-02', 'c1', { ggr: 1 }), gaming('2026-11-02', 'c9', { ggr: 1 })]) });
      await loader.transaction(async (tx) => {
        await tx.replaceDays('p1', 'igaming', ['2026-11-02'], 'r2');
        const page = (values: unknown[]) => tx.load({ partner: 'p1', variant: 'igaming', entity: 'activity', runId: 'r2', records: raw(values) });
        await page([gaming('2026-11-02', 'c1', { ggr: 10 }), gaming('2026-11-02', 'c2', { ggr: 20 })]);
        await page([gaming('2026-11-02', 'c3', { ggr: 30 })]);
        await page([gaming('2026-11-02', 'c2', { ggr: 21 }), gaming('2026-11-02', 'c3', { ggr: 31 })]);
      });
      assert.deepEqual(await rows(), [
        { date: '2026-11-02', customer_id: 'c1', ggr: '10' }, { date: '2026-11-02', customer_id: 'c2', ggr: '21' }, { date: '2026-11-02', customer_id: 'c3', ggr: '31' },
      ]);
      const parked = await t.store.knex('waiting_records').where('partner_id', 'p1').count({ n: '*' });
      assert.equal(Number(parked[0]?.n), 0, 'the parked c9 of the replaced day went with it');
    });
  });
}
