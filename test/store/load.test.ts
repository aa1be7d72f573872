import assert from 'node:assert/strict';
import { Loader } from '../../src/pipeline/load.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { listRejects } from '../../src/store/rejects.js';
import { readState } from '../../src/store/sync-state.js';
import { waitingSummary } from '../../src/store/waiting.js';
import { loaderWith } from '../support/loader.js';
import { customer, deposit, gaming, raw, stored } from '../support/records.js';
import { STORES, fixedClock, type TestStore } from '../support/stores.js';

for (const backend of STORES) {
  describe(`load path on ${backend.name}`, () => {
    let t: TestStore;
    let loader: Loader;
    const clock = fixedClock();
    beforeEach(async () => {
      t = await backend.create(clock);
      loader = loaderWith(t.store, []);
    });
    afterEach(async () => t.drop());

    const load = (entity: 'customers' | 'transactions' | 'activity', values: unknown[], extra: { variant?: 'igaming' | 'prop-trading'; partner?: string; checkpoint?: { stream: string; state: unknown } } = {}) =>
      loader.load({ partner: extra.partner ?? 'p1', variant: extra.variant ?? 'igaming', entity, runId: 'run-1', records: raw(values), checkpoint: extra.checkpoint });

    it('migrates on first use and a second migrate applies nothing', async () => {
      const names = MIGRATIONS.map((m) => m.name);
      assert.deepEqual(names.slice(0, 2), ['001-initial', '002-reject-origin']);
      assert.deepEqual(await t.store.appliedMigrations(), names);
      assert.deepEqual(await t.store.migrate(), []);
    });

    it('upserts customers on (partner, customer_id): a re-sent record replaces the stored one', async () => {
      await load('customers', [customer('c1', { country_code: 'DE', kyc_status_id: 'pending' }), customer('c2')]);
      await load('customers', [customer('c1', { kyc_status_id: 'approved', last_modified_date: '2026-11-03T10:00:00+02:00' })]);
      await load('customers', [customer('c1', { email: 'x@example.com' })], { partner: 'p2' });
      const rows = await stored(t.store, 'p1', 'igaming', 'customers');
      assert.equal(rows.length, 2);
      // country_code was absent in the re-sent record: the record is the partner's current state
      assert.deepEqual(rows[0], {
        customer_id: 'c1', affiliate_id: 'aff-1', kyc_status_id: 'approved',
        signup_date: '2026-11-01T09:30:00.000000Z', last_modified_date: '2026-11-03T08:00:00.000000Z',
      });
      assert.equal((await stored(t.store, 'p2', 'igaming', 'customers')).length, 1);
    });

    it('keeps date-times in UTC at microsecond precision, never rounded up', async () => {
      await load('customers', [customer('c1', { signup_date: '2026-11-01T23:59:59.9999999-01:30' })]);
      const [row] = await stored(t.store, 'p1', 'igaming', 'customers');
      assert.equal(row?.signup_date, '2026-11-02T01:29:59.999999Z');
    });

    it('a re-sent transaction replaces status and amounts, with exact decimals', async () => {
      await load('customers', [customer('c1')]);
      await load('transactions', [deposit('t1', 'c1', { amount_currency: 99999999999.99, amount_usd: 0.1 })]);
      await load('transactions', [deposit('t1', 'c1', { status: 'reversed', amount_currency: 1234567890123.45, amount_usd: 1e-7 })]);
      const rows = await stored(t.store, 'p1', 'igaming', 'transactions');
      assert.equal(rows.length, 1);
      assert.equal(rows[0]?.status, 'reversed');
      assert.equal(rows[0]?.amount_currency, 1234567890123.45);
      const raw = await t.store.knex('transactions').first('amount_currency', 'amount_usd');
      assert.equal(String(raw.amount_currency), '1234567890123.45');
      assert.equal(String(raw.amount_usd), '0.0000001');
    });

    it('a re-sent activity record replaces the whole day record of its aggregation key', async () => {
      await load('customers', [customer('c1')]);
      await load('activity', [
        gaming('2026-11-01', 'c1', { total_bets: 100, wins: 40, ggr: 60, ngr: 55, bets_count: 10 }),
        gaming('2026-11-01', 'c1', { game_type: 'poker', total_bets: 5 }),
      ]);
      await load('activity', [gaming('2026-11-01', 'c1', { total_bets: 120, wins: 50 })]);
      const rows = await stored(t.store, 'p1', 'igaming', 'activity');
      assert.deepEqual(rows, [
        { date: '2026-11-01', customer_id: 'c1', game_type: 'poker', currency: 'EUR', total_bets: 5 },
        { date: '2026-11-01', customer_id: 'c1', game_type: 'slots', currency: 'EUR', total_bets: 120, wins: 50 },
      ]);
    });

    it('loads trading activity on (partner, date, customer, instrument, currency)', async () => {
      await load('customers', [customer('t1', { phase: 'funded', account_size: 100000 })], { variant: 'prop-trading', partner: 'firm' });
      const trade = { date: '2026-11-01', customer_id: 't1', instrument: 'EURUSD', lots_traded: 1.25, pnl: -340.5, currency: 'USD' };
      await load('activity', [trade, { ...trade, instrument: 'XAUUSD' }, { ...trade, pnl: 10 }], { variant: 'prop-trading', partner: 'firm' });
      const rows = await stored(t.store, 'firm', 'prop-trading', 'activity');
      assert.deepEqual(rows.map((r) => [r.instrument, r.pnl]), [['EURUSD', 10], ['XAUUSD', -340.5]]);
      assert.equal((await stored(t.store, 'firm', 'prop-trading', 'customers'))[0]?.account_size, 100000);
    });

    it('rejects invalid records with payload, errors and run id, and loads the rest', async () => {
      const bad = { ...customer('c2'), lang_id: 'EN' };
      const result = await load('customers', [customer('c1'), bad, { customer_id: '' }]);
      assert.deepEqual([result.loaded, result.rejected, result.waiting], [1, 2, 0]);
      assert.deepEqual(result.rejects[0], { position: 2, errors: [{ field: 'lang_id', rule: 'pattern', message: result.rejects[0]?.errors[0]?.message }] });
      const rejects = await listRejects(t.store.knex, { partner: 'p1' });
      assert.equal(rejects.length, 2);
      assert.equal(rejects[0]?.run_id, 'run-1');
      assert.deepEqual(JSON.parse(rejects[0]?.payload ?? ''), bad);
      assert.equal(rejects[0]?.errors[0]?.field, 'lang_id');
      assert.equal((await stored(t.store, 'p1', 'igaming', 'customers')).length, 1);
      // The same bad payload seen again (a rerun) is the same reject, not a second one.
      await load('customers', [bad]);
      assert.equal((await listRejects(t.store.knex, { partner: 'p1' })).length, 2);
    });

    it('a transaction whose customer is unknown waits, then loads when the customer arrives', async () => {
      const first = await load('transactions', [deposit('t1', 'c9'), deposit('t2', 'c9', { amount_currency: 5 })]);
      await load('activity', [gaming('2026-11-01', 'c9', { ggr: -12.5 })]);
      assert.deepEqual([first.loaded, first.waiting], [0, 2]);
      assert.equal((await stored(t.store, 'p1', 'igaming', 'transactions')).length, 0);
      assert.deepEqual(await waitingSummary(t.store.knex, 'p1').then((s) => s.map((w) => [w.entity, w.count])), [['activity', 1], ['transactions', 2]]);
      // A re-sent version while still waiting replaces the waiting one.
      await load('transactions', [deposit('t1', 'c9', { status: 'declined' })]);
      const arrival = await load('customers', [customer('c9')]);
      assert.equal(arrival.released, 3);
      const txs = await stored(t.store, 'p1', 'igaming', 'transactions');
      assert.deepEqual(txs.map((r) => [r.transaction_id, r.status, r.amount_currency]), [['t1', 'declined', 100.5], ['t2', 'approved', 5]]);
      assert.equal((await stored(t.store, 'p1', 'igaming', 'activity'))[0]?.ggr, -12.5);
      assert.deepEqual(await waitingSummary(t.store.knex, 'p1'), []);
    });

    it('a newer version loaded directly drops the older waiting version', async () => {
      await load('transactions', [deposit('t1', 'c1', { status: 'pending' })]);
      // c1 arrives under another partner only: p1's record still waits
      await load('customers', [customer('c1')], { partner: 'other' });
      assert.equal((await waitingSummary(t.store.knex, 'p1'))[0]?.count, 1);
      await t.store.knex('customers').insert({ partner_id: 'p1', customer_id: 'c1', signup_date: '2026-11-01T00:00:00.000000Z', affiliate_id: 'a', loaded_at: '2026-11-01T00:00:00.000000Z' });
      await load('transactions', [deposit('t1', 'c1', { status: 'approved' })]);
      assert.deepEqual(await waitingSummary(t.store.knex, 'p1'), []);
      await load('customers', [customer('c1')]);
      assert.equal((await stored(t.store, 'p1', 'igaming', 'transactions'))[0]?.status, 'approved');
    });

    it('saves the checkpoint with the rows, and neither when the batch fails', async () => {
      await load('customers', [customer('c1')], { checkpoint: { stream: 'customers', state: { cursor: '2026-11-01T09:30:00Z' } } });
      assert.deepEqual(await readState(t.store.knex, 'p1', 'customers'), { cursor: '2026-11-01T09:30:00Z' });
      // A state that cannot be serialised fails the checkpoint after the upsert: the whole batch rolls back.
      await assert.rejects(load('customers', [customer('c2')], { checkpoint: { stream: 'customers', state: { cursor: 1n } } }));
      assert.deepEqual((await stored(t.store, 'p1', 'igaming', 'customers')).map((r) => r.customer_id), ['c1']);
      assert.deepEqual(await readState(t.store.knex, 'p1', 'customers'), { cursor: '2026-11-01T09:30:00Z' });
    });

    it('refuses records of the other variant for a known partner', async () => {
      await load('customers', [customer('c1')]);
      const other = loaderWith(t.store, []);
      await assert.rejects(
        other.load({ partner: 'p1', variant: 'prop-trading', entity: 'customers', runId: 'r', records: raw([customer('c2')]) }),
        /partner p1 is registered as igaming in this store; refusing prop-trading records/,
      );
    });

    it('hands each batch\'s writes to the in-transaction hook (released records included) and each commit\'s partners to the after-commit hook; a rolled-back batch reaches neither', async () => {
      const inside: { partner: string; customers: string[]; transactions: string[] }[] = [];
      const after: string[][] = [];
      const hooked = loaderWith(t.store, [{
        name: 'spy',
        async mark(_tx, c) {
          inside.push({ partner: c.partner, customers: c.records.customers.map((r) => r.customer_id as string), transactions: c.records.transactions.map((r) => r.transaction_id as string) });
        },
        async evaluate({ change: c }) {
          after.push([`${c.partner}:${c.variant}:${c.runId}`]);
        },
      }]);
      const run = (entity: 'customers' | 'transactions', values: unknown[], runId: string, checkpoint?: { stream: string; state: unknown }) =>
        hooked.load({ partner: 'p1', variant: 'igaming', entity, runId, records: raw(values), checkpoint });
      await run('transactions', [deposit('t1', 'c1')], 'r1'); // waits: nothing written
      await run('customers', [customer('c1')], 'r2');
      await assert.rejects(run('customers', [customer('c2')], 'r3', { stream: 'customers', state: { bad: 1n } }));
      assert.deepEqual(inside, [{ partner: 'p1', customers: ['c1'], transactions: ['t1'] }]);
      assert.deepEqual(after, [['p1:igaming:r2']]);
      assert.deepEqual((await stored(t.store, 'p1', 'igaming', 'customers')).map((r) => r.customer_id), ['c1']);
    });

    it('commits what the in-transaction hook writes with the batch, and rolls it back with it', async () => {
      const hooked = loaderWith(t.store, [{
        name: 'writer',
        async mark({ trx }, c) {
          await trx('commission_pending').insert(c.records.customers.map((r) => ({ partner_id: c.partner, variant: c.variant, kind: 'record', value: r.customer_id as string, created_at: t.store.now() })));
          if (c.runId === 'r2') throw new Error('fails after writing');
        },
      }]);
      await hooked.load({ partner: 'p1', variant: 'igaming', entity: 'customers', runId: 'r1', records: raw([customer('c1')]) });
      await assert.rejects(hooked.load({ partner: 'p1', variant: 'igaming', entity: 'customers', runId: 'r2', records: raw([customer('c2')]) }), /fails after writing/);
      assert.deepEqual((await stored(t.store, 'p1', 'igaming', 'customers')).map((r) => r.customer_id), ['c1']);
      const pending: { value: string }[] = await t.store.knex('commission_pending').select('value').orderBy('value');
      assert.deepEqual(pending.map((r) => r.value), ['c1']);
    });

    it('stores text with tabs, newlines, carriage returns, backslashes and non-ASCII characters exactly', async () => {
      const odd = 'a\tb\\c\nd\re \\N';
      await load('customers', [customer('c\t1', { campaign_id: odd, first_name: 'Zoë', last_name: 'Müller-€😀' })]);
      const [row] = await stored(t.store, 'p1', 'igaming', 'customers');
      assert.equal(row?.customer_id, 'c\t1');
      assert.equal(row?.campaign_id, odd);
      assert.equal(row?.first_name, 'Zoë');
      assert.equal(row?.last_name, 'Müller-€😀');
    });

    it('writes batches handed over before the earlier ones are written in order, in one transaction', async () => {
      await load('customers', [customer('c1')]);
      const activity = (bets: number, date = '2026-11-02') =>
        ({ partner: 'p1', variant: 'igaming' as const, entity: 'activity' as const, runId: 'run-2', records: raw([gaming(date, 'c1', { bets_count: bets })]) });
      await loader.transaction(async (tx) => {
        const batches = [tx.load(activity(1)), tx.load(activity(2)), tx.load(activity(3, '2026-11-03'))];
        await Promise.all(batches);
      });
      assert.deepEqual((await stored(t.store, 'p1', 'igaming', 'activity')).map((r) => [r.date, r.bets_count]), [['2026-11-02', 2], ['2026-11-03', 3]]);
    });

    it('a failed batch fails the batches handed over after it, and the whole transaction rolls back', async () => {
      await load('customers', [customer('c1')]);
      const activity = (bets: number, date: string, checkpoint?: { stream: string; state: unknown }) =>
        ({ partner: 'p1', variant: 'igaming' as const, entity: 'activity' as const, runId: 'run-3', records: raw([gaming(date, 'c1', { bets_count: bets })]), checkpoint });
      await assert.rejects(loader.transaction(async (tx) => {
        const first = tx.load(activity(1, '2026-11-02'));
        // A state that cannot be serialised fails this batch's checkpoint after its rows are written.
        const failing = tx.load(activity(2, '2026-11-03', { stream: 'activity', state: { bad: 1n } }));
        const after = tx.load(activity(3, '2026-11-04'));
        await first;
        await assert.rejects(after, /BigInt/);
        await failing;
      }), /BigInt/);
      assert.deepEqual(await stored(t.store, 'p1', 'igaming', 'activity'), []);
    });

    it('loads a batch larger than one chunk, the last version of a repeated key winning', async () => {
      const many = Array.from({ length: 2500 }, (_, i) => customer(`c${i}`, { campaign_id: `k${i % 7}` }));
      many.push(customer('c0', { campaign_id: 'last' }));
      const result = await load('customers', many);
      assert.equal(result.loaded, 2501);
      const rows = await stored(t.store, 'p1', 'igaming', 'customers');
      assert.equal(rows.length, 2500);
      assert.equal(rows.find((r) => r.customer_id === 'c0')?.campaign_id, 'last');
    });
  });
}
