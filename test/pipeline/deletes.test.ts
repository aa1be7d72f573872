/**
 * Records deleted at the source (Loader.remove, docs/loading.md, Deletes), through every
 * after-load job, on every store: the rows go to tombstones, the report's figures drop by exactly
 * the deleted records, the ledger books the clawbacks computed here by hand (naming the
 * tombstones), recompute agrees after deletes mixed with loads, and a re-created record books its
 * CPA again once.
 */
import assert from 'node:assert/strict';
import { recompute } from '../../src/commission/recompute.js';
import { toLedgerLine, type LedgerLine } from '../../src/commission/ledger.js';
import { money } from '../../src/kernel/money.js';
import type { Loader } from '../../src/pipeline/load.js';
import { affiliateReport } from '../../src/reports/affiliates.js';
import { rebuildFacts } from '../../src/reports/facts.js';
import { listTombstones } from '../../src/store/tombstones.js';
import type { Entity, SpecRecord } from '../../src/types.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CPA, plansFrom, plansYaml, REVSHARE } from '../support/plans.js';
import { customer, deposit, gaming, raw } from '../support/records.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

const PLANS = plansFrom(plansYaml(CPA, REVSHARE));
const usd = (extra: SpecRecord = {}): SpecRecord => ({ currency: 'USD', amount_currency: 50, ...extra });
const day = (date: string, c: string, ggr: number): SpecRecord => gaming(date, c, { currency: 'USD', bets_count: 10, total_bets: ggr * 2, wins: ggr, ggr, ngr: ggr });

for (const backend of STORES) {
  describe(`deletes at the source (${backend.name})`, function () {
    this.timeout(120_000);
    let t: TestStore;
    let loader: Loader;
    let run = 0;
    const clock = fixedClock('2026-11-22T10:00:00.000Z');

    beforeEach(async () => {
      t = await backend.create(clock);
      loader = loaderWithEveryJob(t.store, { plans: PLANS });
    });
    afterEach(async () => t.drop());

    const load = async (entity: Entity, records: SpecRecord[]) => {
      const r = await loader.load({ partner: 'casino', variant: 'igaming', entity, runId: `run-${++run}`, records: raw(records) });
      assert.equal(r.rejected, 0, JSON.stringify(r.rejects));
      return r;
    };
    const remove = (entity: 'customers' | 'transactions', ids: string[]) =>
      loader.remove({ partner: 'casino', variant: 'igaming', entity, ids, learnedVia: 'push', runId: `delete-${++run}` });
    const lines = async (): Promise<LedgerLine[]> => ((await t.store.knex('commission_ledger').orderBy('id').select('*')) as Record<string, unknown>[]).map(toLedgerLine);
    const net = async (key: string) => (await lines()).filter((l) => l.line_key === key).reduce((s, l) => s.plus(money(l.amount_usd)), money(0)).toFixed(2);
    const november = async () => {
      const report = await affiliateReport(t.store, { partner: 'casino' }, 'month');
      const row = report.rows.find((r) => r.month === '2026-11');
      return { registrations: row?.registrations, ftds: row?.ftd_count, ftd_usd: row?.ftd_usd, deposits: row?.deposit_count, ggr: row?.ggr_usd };
    };
    const agrees = async () => {
      const results = await recompute(t.store, PLANS, { runId: 'check' });
      assert.deepEqual(results.flatMap((r) => r.differences), [], 'recompute must agree with the ledger');
      for (const r of results) assert.deepEqual(r.derived, { customer_days: 0, affiliate_months: 0, attributions: 0 });
    };
    /** The report facts equal a rebuild from the live rows. */
    const factsAgree = async () => {
      const before = await affiliateReport(t.store, { partner: 'casino' }, 'day');
      await rebuildFacts(t.store, 'casino', 'igaming');
      assert.deepEqual((await affiliateReport(t.store, { partner: 'casino' }, 'day')).rows, before.rows);
    };

    async function month(): Promise<void> {
      await load('customers', [customer('c1'), customer('c2'), customer('c3')]);
      await load('transactions', [deposit('d1', 'c1', usd({ amount_usd: 50 })), deposit('d2', 'c2', usd({ amount_usd: 50 })), deposit('d3', 'c3', usd({ amount_usd: 50 }))]);
      await load('activity', [day('2026-11-03', 'c1', 40), day('2026-11-03', 'c2', 80), day('2026-11-04', 'c2', 20)]);
    }

    it('the worked example of docs/loading.md, Deletes: figures by hand, row to ledger line', async () => {
      await load('customers', [customer('c1')]);
      await load('transactions', [deposit('d1', 'c1', usd({ amount_usd: 50 }))]);
      const row = async () => {
        const r = (await affiliateReport(t.store, { partner: 'casino' }, 'month')).rows.find((x) => x.month === '2026-11');
        return [r?.ftd_count, r?.ftd_usd, r?.deposits_usd, r?.commissions_net_usd];
      };
      assert.deepEqual(await row(), [1, '50.00', '50.00', '100.00']);
      await remove('transactions', ['d1']);
      const shown = (l: LedgerLine) => ({ line_key: l.line_key, affiliate_id: l.affiliate_id, period: l.period, reason: l.reason, amount_usd: l.amount_usd, total_usd: l.total_usd, ref_id: l.ref_id, sources: l.sources });
      assert.deepEqual((await lines()).map(shown), [
        { line_key: 'cpa_ftd|cpa|casino|c1', affiliate_id: 'aff-1', period: '2026-11', reason: 'cpa_ftd', amount_usd: '100.00', total_usd: '100.00', ref_id: 'd1', sources: ['transactions:d1'] },
        { line_key: 'cpa_ftd|cpa|casino|c1', affiliate_id: 'aff-1', period: '2026-11', reason: 'cpa_clawback_deleted', amount_usd: '-100.00', total_usd: '0.00', ref_id: null, sources: ['tombstones:1', 'customers:c1'] },
      ]);
      const [tomb] = await listTombstones(t.store.knex, 'casino');
      assert.deepEqual(tomb && { id: tomb.id, entity: tomb.entity, record_key: tomb.recordKey, customer_id: tomb.customerId, learned_via: tomb.learnedVia, learned_at: tomb.learnedAt, cascade_of: tomb.cascadeOf },
        { id: 1, entity: 'transactions', record_key: 'd1', customer_id: 'c1', learned_via: 'push', learned_at: '2026-11-22T10:00:00.000000Z', cascade_of: null });
      const fields = Object.fromEntries(Object.entries(tomb?.row ?? {}).filter(([k]) => k !== 'run_id' && k !== 'loaded_at'));
      assert.deepEqual(fields, { transaction_id: 'd1', customer_id: 'c1', transaction_type: 'deposit', amount_currency: 50, currency: 'USD', transaction_date: '2026-11-02T12:00:00.000000Z', status: 'approved', amount_usd: 50 });
      assert.deepEqual(await row(), [0, '0.00', '0.00', '0.00']);
      await agrees();
    });

    it('a deleted FTD claws its CPA back, naming its tombstone; the report loses exactly that FTD; a repeat is already deleted', async () => {
      await month();
      // By hand: three CPAs of 100; RevShare 25% of GGR 40 + 80 + 20 = 140: 35.00.
      assert.equal(await net('cpa_ftd|cpa|casino|c1'), '100.00');
      assert.equal(await net('revshare|rs|casino|aff-1|2026-11'), '35.00');
      assert.deepEqual(await november(), { registrations: 3, ftds: 3, ftd_usd: '150.00', deposits: 3, ggr: '140.00' });

      const first = await remove('transactions', ['d1']);
      assert.equal(first.deleted, 1);
      assert.deepEqual([first.alreadyDeleted, first.unknown], [[], []]);
      const clawback = (await lines()).at(-1) as LedgerLine;
      assert.deepEqual([clawback.line_key, clawback.amount_usd, clawback.total_usd, clawback.reason], ['cpa_ftd|cpa|casino|c1', '-100.00', '0.00', 'cpa_clawback_deleted']);
      const [tomb] = await listTombstones(t.store.knex, 'casino');
      assert.equal(clawback.sources[0], `tombstones:${tomb?.id}`);
      assert.deepEqual([tomb?.entity, tomb?.recordKey, tomb?.customerId, tomb?.learnedVia, tomb?.learnedAt, tomb?.cascadeOf, tomb?.row.amount_usd],
        ['transactions', 'd1', 'c1', 'push', '2026-11-22T10:00:00.000000Z', null, 50]);
      // The live table, the report and the list no longer have it.
      assert.equal(await t.store.knex('transactions').where({ partner_id: 'casino', transaction_id: 'd1' }).first('transaction_id'), undefined);
      assert.deepEqual(await november(), { registrations: 3, ftds: 2, ftd_usd: '100.00', deposits: 2, ggr: '140.00' });

      const again = await remove('transactions', ['d1', 'nope']);
      assert.deepEqual([again.deleted, again.alreadyDeleted, again.unknown], [0, ['d1'], ['nope']]);
      assert.equal((await lines()).length, 5, 'three CPAs, one RevShare line, one clawback: a repeat books nothing');
      await agrees();
      await factsAgree();
    });

    it('a deleted customer takes its deposit and days with it: its CPA and its share of the RevShare month go, and it says so', async () => {
      await month();
      const r = await remove('customers', ['c2']);
      assert.equal(r.deleted, 1);
      assert.deepEqual([r.rows.customers.length, r.rows.transactions.length, r.rows.activity.length], [1, 1, 2]);
      const stones = await listTombstones(t.store.knex, 'casino');
      const own = stones.find((s) => s.entity === 'customers') as { id: number };
      assert.deepEqual(stones.filter((s) => s.entity !== 'customers').map((s) => s.cascadeOf), [own.id, own.id, own.id]);
      // By hand: c2's CPA 100 back; RevShare 25% of GGR 40 (c1 alone): 10.00, so a line of -25.00.
      assert.equal(await net('cpa_ftd|cpa|casino|c2'), '0.00');
      assert.equal(await net('revshare|rs|casino|aff-1|2026-11'), '10.00');
      const cpa = (await lines()).filter((l) => l.line_key === 'cpa_ftd|cpa|casino|c2').at(-1) as LedgerLine;
      assert.deepEqual([cpa.amount_usd, cpa.reason, cpa.sources[0]], ['-100.00', 'cpa_clawback_deleted', `tombstones:${own.id}`]);
      assert.deepEqual(await november(), { registrations: 2, ftds: 2, ftd_usd: '100.00', deposits: 2, ggr: '40.00' });
      await agrees();
      await factsAgree();

      // A deposit of the deleted customer waits for it. The customer sent again comes back whole:
      // with what went with it (d2 and its two days) and what waited for it (d2b); the CPA is booked once more.
      const waiting = await load('transactions', [deposit('d2b', 'c2', usd({ amount_usd: 50, transaction_date: '2026-11-05T12:00:00Z' }))]);
      assert.equal(waiting.waiting, 1);
      await agrees();
      const back = await load('customers', [customer('c2')]);
      assert.equal(back.released, 4);
      assert.equal(await net('cpa_ftd|cpa|casino|c2'), '100.00');
      assert.equal(await net('revshare|rs|casino|aff-1|2026-11'), '35.00');
      assert.deepEqual(await november(), { registrations: 3, ftds: 3, ftd_usd: '150.00', deposits: 4, ggr: '140.00' });
      assert.ok((await t.store.knex('tombstones').where('partner_id', 'casino').select('restored_at') as { restored_at: unknown }[]).every((x) => x.restored_at !== null), 'the tombstones stay, marked restored');
      // Sent again once more: nothing comes back twice.
      assert.equal((await load('customers', [customer('c2')])).released, 0);
      await agrees();
      await factsAgree();
    });

    it("a deposit of a deleted customer waits for it, in the delete's own transaction and in a batch made ready before the delete", async () => {
      await month();
      const later = loader.ready({ partner: 'casino', variant: 'igaming', entity: 'transactions', runId: 'ready-before', records: raw([deposit('d3b', 'c3', usd({ amount_usd: 50 }))]) });
      const same = await loader.transaction(async (tx) => {
        await tx.remove({ partner: 'casino', variant: 'igaming', entity: 'customers', ids: ['c2', 'c3'], learnedVia: 'push', runId: 'delete-in-tx' });
        return tx.load({ partner: 'casino', variant: 'igaming', entity: 'transactions', runId: 'load-in-tx', records: raw([deposit('d2b', 'c2', usd({ amount_usd: 50 }))]) });
      });
      assert.equal(same.waiting, 1);
      assert.equal((await loader.load(later)).waiting, 1);
      assert.equal((await t.store.knex('transactions').where('partner_id', 'casino').whereIn('customer_id', ['c2', 'c3'])).length, 0);
      await agrees();
    });

    it('a deleted deposit sent again is a new version: its CPA is booked again, once', async () => {
      await month();
      await remove('transactions', ['d1']);
      await load('transactions', [deposit('d1', 'c1', usd({ amount_usd: 50 }))]);
      await load('transactions', [deposit('d1', 'c1', usd({ amount_usd: 50 }))]);
      const c1 = (await lines()).filter((l) => l.line_key === 'cpa_ftd|cpa|casino|c1').map((l) => l.amount_usd);
      assert.deepEqual(c1, ['100.00', '-100.00', '100.00']);
      assert.deepEqual(await november(), { registrations: 3, ftds: 3, ftd_usd: '150.00', deposits: 3, ggr: '140.00' });
      // Deleted again: clawed back again, under a new tombstone.
      await remove('transactions', ['d1']);
      assert.equal(await net('cpa_ftd|cpa|casino|c1'), '0.00');
      const stones = await listTombstones(t.store.knex, 'casino');
      assert.equal(stones.length, 2);
      assert.equal((await lines()).at(-1)?.sources[0], `tombstones:${stones[1]?.id}`);
      await agrees();
      await factsAgree();
    });
  });
}
