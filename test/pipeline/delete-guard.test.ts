/**
 * The mass-delete guard (src/pipeline/delete-guard.ts, docs/loading.md, Deletes) and the deletes
 * inferred from two reconcile scans (jobs/infer-deletes.ts), on every store, with every
 * after-load job: a run deleting more than its share of a day's transactions is held with nothing
 * deleted and the ledger untouched; `deletes apply` books exactly the clawbacks (100 USD per
 * deleted FTD, by hand) and recompute agrees; a discarded hold keeps the records; pushed deletes
 * are counted per UTC day and the one past the guard answers 202; a key one scan finds missing
 * deletes nothing, two scans in a row delete it; a scan that did not read the source whole infers
 * nothing.
 */
import assert from 'node:assert/strict';
import { applyHold, discardHold } from '../../jobs/delete-holds.js';
import { inferDeletes } from '../../jobs/infer-deletes.js';
import { recompute } from '../../src/commission/recompute.js';
import { money } from '../../src/kernel/money.js';
import type { Reconciliation } from '../../src/onboarding/reconcile.js';
import type { PartnerDefinition } from '../../src/config/definition.js';
import type { Loader } from '../../src/pipeline/load.js';
import { deleteRecord } from '../../src/push/delete.js';
import { affiliateReport } from '../../src/reports/affiliates.js';
import { deleteFigures, listHolds } from '../../src/store/delete-holds.js';
import { listTombstones } from '../../src/store/tombstones.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CPA, plansFrom, plansYaml } from '../support/plans.js';
import { customer, deposit, raw } from '../support/records.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

const PLANS = plansFrom(plansYaml(CPA));
const N = 100;
const ids = (prefix: string, from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `${prefix}${from + i}`);

for (const backend of STORES) {
  describe(`the mass-delete guard and inferred deletes (${backend.name})`, function () {
    this.timeout(120_000);
    let t: TestStore;
    let loader: Loader;
    const clock = fixedClock('2026-11-22T10:00:00.000Z');

    beforeEach(async () => {
      clock.set('2026-11-22T10:00:00.000Z');
      t = await backend.create(clock);
      loader = loaderWithEveryJob(t.store, { plans: PLANS });
      // 100 customers, each with one 50 USD first deposit on 2026-11-02: 100 CPAs of 100 USD.
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId: 'load-c', records: raw(ids('c', 1, N).map((c) => customer(c))) });
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'transactions', runId: 'load-t', records: raw(ids('c', 1, N).map((c) => deposit(`d${c.slice(1)}`, c, { currency: 'USD', amount_currency: 50, amount_usd: 50 }))) });
    });
    afterEach(async () => t.drop());

    const ledgerUsd = async () => ((await t.store.knex('commission_ledger').select('amount_usd')) as { amount_usd: unknown }[]).reduce((s, l) => s.plus(money(String(l.amount_usd))), money(0)).toFixed(2);
    const ftds = async () => (await affiliateReport(t.store, { partner: 'casino' }, 'month')).rows.find((r) => r.month === '2026-11')?.ftd_count ?? 0;
    const live = async (table: string) => Number(((await t.store.knex(table).where('partner_id', 'casino').count({ n: '*' }).first()) as { n: unknown }).n);
    const agrees = async () => {
      const results = await recompute(t.store, PLANS, { runId: 'check' });
      assert.deepEqual(results.flatMap((r) => r.differences), [], 'recompute must agree with the ledger');
    };

    it('a run deleting 30 of a day\'s 100 transactions is held, nothing deleted; applying it claws back exactly 30 CPAs', async () => {
      assert.equal(await ledgerUsd(), '10000.00');
      const held = await loader.remove({ partner: 'casino', variant: 'igaming', entity: 'transactions', ids: ids('d', 1, 30), learnedVia: 'soft_delete', runId: 'run-mass' });
      assert.equal(held.deleted, 0);
      assert.equal(held.held?.held, 30);
      assert.match(held.held?.reason ?? '', /would delete 30 of the 100 transactions of 2026-11-02, over the guard's 5% \(at least 20\)/);
      // The rest of the run's deletes join the hold, whatever their number.
      const more = await loader.remove({ partner: 'casino', variant: 'igaming', entity: 'transactions', ids: ['d31'], learnedVia: 'soft_delete', runId: 'run-mass' });
      assert.equal(more.held?.holdId, held.held?.holdId);
      assert.equal(await live('transactions'), 100);
      assert.equal(await ledgerUsd(), '10000.00');
      assert.equal(await ftds(), 100);
      const [hold] = await listHolds(t.store.knex, { partner: 'casino', state: 'held' });
      assert.deepEqual([hold?.ids.length, hold?.entity, hold?.learnedVia, hold?.scope], [31, 'transactions', 'soft_delete', 'run-mass']);
      assert.deepEqual((await deleteFigures(t.store.knex, 'casino')).map((f) => [f.entity, f.applied, f.held, f.holds]), [['transactions', 0, 31, 1]]);

      // d2 is sent again after the hold: applying keeps it.
      clock.set('2026-11-22T11:00:00.000Z');
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'transactions', runId: 'resend', records: raw([deposit('d2', 'c2', { currency: 'USD', amount_currency: 60, amount_usd: 60 })]) });
      const applied = await applyHold(loader, hold!.id, 'ops');
      assert.equal(applied.deleted, 30);
      assert.deepEqual(applied.cameBack, ['d2']);
      assert.equal(applied.hold.state, 'applied');
      assert.equal(applied.hold.decidedBy, 'ops');
      assert.equal(await live('transactions'), 70);
      assert.equal(await ledgerUsd(), '7000.00');
      assert.equal(await ftds(), 70);
      const tombs = await listTombstones(t.store.knex, 'casino');
      assert.equal(tombs.length, 30);
      assert.ok(tombs.every((x) => x.learnedVia === 'soft_delete' && x.runId === applied.runId));
      await agrees();
      await assert.rejects(applyHold(loader, hold!.id, 'ops'), /was applied already/);
    });

    it('a discarded hold keeps the records; deletes under the guard apply at once', async () => {
      const held = await loader.remove({ partner: 'casino', variant: 'igaming', entity: 'customers', ids: ids('c', 1, 25), learnedVia: 'soft_delete', runId: 'run-c' });
      assert.match(held.held?.reason ?? '', /would delete 25 of the partner's 100 customers/);
      const d = await discardHold(loader, held.held!.holdId, 'ops');
      assert.equal(d.hold.state, 'discarded');
      assert.equal(await live('customers'), 100);
      assert.equal(await ledgerUsd(), '10000.00');
      // 20 is the guard's floor: a run may delete that many whatever the share.
      const ok = await loader.remove({ partner: 'casino', variant: 'igaming', entity: 'customers', ids: ids('c', 1, 20), learnedVia: 'soft_delete', runId: 'run-c2' });
      assert.equal(ok.deleted, 20);
      assert.equal(ok.held, undefined);
      assert.equal(await live('customers'), 80);
      assert.equal(await live('transactions'), 80);
      assert.equal(await ledgerUsd(), '8000.00');
      await agrees();
    });

    it('pushed deletes count per UTC day: the 21st of a day answers 202 held; the next day starts afresh', async () => {
      const push = (id: string) => deleteRecord(loader, { partner: 'casino', variant: 'igaming', entity: 'customers', id, clientId: 'client' });
      for (const id of ids('c', 1, 20)) assert.equal((await push(id)).status, 200);
      const held = await push('c21');
      assert.equal(held.status, 202);
      assert.equal(held.body.held, true);
      assert.match(String(held.body.reason), /would delete 21 of the partner's 100 customers/);
      assert.equal((await push('c21')).body.hold_id, held.body.hold_id, 'a repeat joins the same hold');
      assert.equal(await live('customers'), 80);
      clock.set('2026-11-23T08:00:00.000Z');
      assert.equal((await push('c22')).status, 200);
      await loader.drain();
      assert.equal(await ledgerUsd(), '7900.00');
      await agrees();
    });

    describe('inferred from reconcile scans', () => {
      const def = { partner: 'casino', variant: 'igaming', delete_guard: { max_share: 0.05, min_records: 20 } } as unknown as PartnerDefinition;
      const scan = (missing: string[], extra: Partial<Reconciliation> = {}): Reconciliation => ({
        partner: 'casino', from: '2026-11-01', to: '2026-11-03', ok: missing.length === 0, unmappable: [], totals: [], source_sql_skipped: [], no_total: [], values: { sample: 0, seed: 1, streams: [] },
        days: [{ entity: 'transactions', day: '2026-11-02', source: { count: N - missing.length, sums: {} }, store: { count: N, sums: {} }, ok: missing.length === 0, missing_in_store: [], missing_at_source: missing, differing: [] }],
        ...extra,
      });

      it('one scan deletes nothing; the next agreeing deletes; a key back at the source stops being a candidate', async () => {
        const first = await inferDeletes(loader, def, scan(['d1', 'd2', 'd3']));
        assert.deepEqual(first.streams.map((s) => [s.entity, s.missing, s.firstSeen, s.deleted]), [['transactions', 3, 3, 0]]);
        assert.equal(await live('transactions'), 100);
        // d3 is back at the source in the second scan; d4 is missing for the first time.
        const second = await inferDeletes(loader, def, scan(['d1', 'd2', 'd4']));
        assert.deepEqual(second.streams.map((s) => [s.missing, s.firstSeen, s.deleted]), [[3, 1, 2]]);
        assert.equal(await live('transactions'), 98);
        assert.equal(await ledgerUsd(), '9800.00');
        assert.deepEqual((await listTombstones(t.store.knex, 'casino')).map((x) => [x.recordKey, x.learnedVia]), [['d1', 'reconcile'], ['d2', 'reconcile']]);
        const third = await inferDeletes(loader, def, scan([]));
        assert.deepEqual(third.streams.map((s) => [s.missing, s.deleted]), [[0, 0]]);
        assert.equal(Number(((await t.store.knex('delete_candidates').count({ n: '*' }).first()) as { n: unknown }).n), 0, 'd4, found again, is no candidate');
        await agrees();
      });

      it('an outage scan between clean scans deletes nothing; two partial outage scans are held by the guard; a scan that read nothing infers nothing', async () => {
        const most = ids('d', 1, 90);
        await inferDeletes(loader, def, scan([]));
        assert.equal((await inferDeletes(loader, def, scan(most))).streams[0]?.deleted, 0);
        await inferDeletes(loader, def, scan([]));
        assert.equal(await live('transactions'), 100);
        await inferDeletes(loader, def, scan(most));
        const twice = await inferDeletes(loader, def, scan(most));
        assert.deepEqual(twice.streams.map((s) => [s.deleted, s.held]), [[0, 90]]);
        assert.equal(await live('transactions'), 100);
        assert.equal(await ledgerUsd(), '10000.00');
        const nothing = await inferDeletes(loader, def, scan(ids('d', 1, N)));
        assert.match(nothing.skipped ?? '', /the source gave no transactions for 2026-11-01..2026-11-03, where the store holds 100/);
      });

      it('a scan that did not read the source whole infers nothing and keeps the candidates', async () => {
        await inferDeletes(loader, def, scan(['d1']));
        const bad = await inferDeletes(loader, def, scan(['d1'], { totals: [{ entity: 'transactions', window: 'changed since 2026-11-01T00:00:00Z', partner_total: 100, distinct: 99, read: 99, repeated: 0, ok: false }] }));
        assert.match(bad.skipped ?? '', /partner's total for transactions/);
        assert.equal(await live('transactions'), 100);
        const next = await inferDeletes(loader, def, scan(['d1']));
        assert.equal(next.streams[0]?.deleted, 1);
        assert.equal(await ledgerUsd(), '9900.00');
      });

      it('a source record the mapping cannot read is still at the source: its key, when it reads, is not deleted; a keyless one stops the inference', async () => {
        const bad = { unmappable: [{ entity: 'transactions' as const, message: 'transaction_type: "CHARGEBACK" is not in the map', key: 'd1' }] };
        await inferDeletes(loader, def, scan(['d1', 'd2'], bad));
        const second = await inferDeletes(loader, def, scan(['d1', 'd2'], bad));
        assert.deepEqual(second.streams.map((s) => [s.missing, s.deleted]), [[1, 1]]);
        assert.deepEqual((await listTombstones(t.store.knex, 'casino')).map((x) => x.recordKey), ['d2']);
        const keyless = await inferDeletes(loader, def, scan(['d1'], { unmappable: [{ entity: 'transactions', message: 'not an object' }] }));
        assert.match(keyless.skipped ?? '', /1 source record\(s\) could not be read or mapped, their keys unknown/);
      });
    });
  });
}
