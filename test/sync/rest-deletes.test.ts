/**
 * A REST record whose status the definition maps to deleted (a stream's `soft_delete: { field,
 * values }`, docs/loading.md, Deletes), pulled from the sandbox partner over real HTTP, on every
 * store: the transaction leaves the store (learned_via rest_flag), its FTD's CPA is clawed back
 * (figures by hand), the run's counts say so (pulled = loaded + rejected + waiting + stale +
 * deleted), and recompute agrees. The sandbox stamps its changes with the time given.
 */
import assert from 'node:assert/strict';
import { recompute } from '../../src/commission/recompute.js';
import { inferDeletes } from '../../jobs/infer-deletes.js';
import { runPartner } from '../../jobs/run-partner.js';
import { reconcile } from '../../src/onboarding/reconcile.js';
import type { PartnerDefinition, RestStream } from '../../src/config/definition.js';
import { createRedactor } from '../../src/config/redact.js';
import { money } from '../../src/kernel/money.js';
import { silentLogger } from '../../src/log.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import { listTombstones } from '../../src/store/tombstones.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CPA, planWith, plansFrom, plansYaml } from '../support/plans.js';
import { sandboxPartnerEach } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';

const PLANS = plansFrom(plansYaml(planWith(CPA, { partner: 'sandbox-casino' })));

for (const backend of STORES) {
  describe(`a REST status mapped to deleted, from the sandbox (${backend.name})`, function () {
    this.timeout(120_000);
    const made = sandboxPartnerEach(backend, {
      seed: 7, customers: 20,
      edit: (yaml) => yaml.replace(/^(\s+)path: \/api\/v1\/igaming\/transactions$/m, '$1path: /api/v1/igaming/transactions\n$1soft_delete: { field: status, values: [deleted, purged] }'),
    });
    let t: TestStore;
    let sandbox: Sandbox;
    let def: PartnerDefinition;
    beforeEach(() => ({ t, sandbox, def } = made));

    it('a transaction the partner marks deleted leaves the store and takes its CPA back', async () => {
      assert.deepEqual((def.streams.transactions as RestStream).soft_delete, { field: 'status', values: ['deleted', 'purged'] });
      const loader = loaderWithEveryJob(t.store, { plans: PLANS });
      const run = () => runPartner({ loader, clock: t.store.clock, logger: silentLogger(), redact: createRedactor(def.secrets) }, def, { kind: 'run', scheduledFor: new Date(t.store.clock()) });
      await run();
      // A paid CPA: its deposit is the one the partner deletes.
      const paid = (await t.store.knex('commission_ledger').where({ partner_id: 'sandbox-casino', reason: 'cpa_ftd' }).orderBy('id').first('customer_id', 'ref_id', 'line_key')) as { customer_id: string; ref_id: string; line_key: string };
      assert.ok(paid, 'the sandbox month pays a CPA');
      const deposits = (await t.store.knex('transactions').where({ partner_id: 'sandbox-casino', customer_id: paid.customer_id, transaction_type: 'deposit', status: 'approved' }).select('transaction_id')) as { transaction_id: string }[];
      // Every approved deposit of the customer deleted: no first deposit is left to pay on.
      for (const d of deposits) sandbox.data.setTransactionStatus('igaming', d.transaction_id, 'deleted', new Date(t.store.clock().getTime() - 60_000));
      const results = await run();
      const tx = results.find((r) => r.stream === 'transactions');
      assert.equal(tx?.status, 'succeeded', JSON.stringify(results));
      const c = tx!.counts;
      assert.equal(c.deleted, deposits.length);
      assert.equal(c.pulled, c.loaded + c.rejected + c.waiting + c.stale + (c.deleted ?? 0));
      assert.equal((await t.store.knex('transactions').where('partner_id', 'sandbox-casino').whereIn('transaction_id', deposits.map((d) => d.transaction_id))).length, 0);
      const stones = await listTombstones(t.store.knex, 'sandbox-casino');
      assert.deepEqual(stones.map((s) => [s.recordKey, s.learnedVia]).sort(), deposits.map((d) => [d.transaction_id, 'rest_flag']).sort());
      // By hand: the CPA of 100 (the plan's default; no country override) is taken back to 0.
      const lines = (await t.store.knex('commission_ledger').where('line_key', paid.line_key).orderBy('id').select('amount_usd', 'reason', 'sources')) as { amount_usd: unknown; reason: string; sources: unknown }[];
      assert.deepEqual(lines.map((l) => [money(String(l.amount_usd)).toFixed(2), l.reason]), [['100.00', 'cpa_ftd'], ['-100.00', 'cpa_clawback_deleted']]);
      const sources = (typeof lines[1]?.sources === 'string' ? JSON.parse(lines[1].sources) : lines[1]?.sources) as string[];
      assert.ok(sources[0]?.startsWith('tombstones:'), JSON.stringify(sources));
      const check = await recompute(t.store, PLANS, { runId: 'check' });
      assert.deepEqual(check.flatMap((r) => r.differences), []);
    });

    it('a partner outage answering empty pages during reconcile scans deletes nothing; a partial one is held by the guard', async () => {
      def.delete_guard = { max_share: 0.05, min_records: 5 };
      const loader = loaderWithEveryJob(t.store, { plans: PLANS });
      const results = await runPartner({ loader, clock: t.store.clock, logger: silentLogger(), redact: createRedactor(def.secrets) }, def, { kind: 'run', scheduledFor: new Date(t.store.clock()) });
      assert.ok(results.every((r) => r.status === 'succeeded'), JSON.stringify(results));
      const scan = async () => inferDeletes(loader, def, await reconcile({ store: t.store, clock: t.store.clock, logger: silentLogger(), redact: createRedactor(def.secrets) }, def, sandbox.data.from, sandbox.data.to, 'customers', { sample: 0, seed: 1 }));
      const customers = async () => Number(((await t.store.knex('customers').where('partner_id', 'sandbox-casino').count({ n: '*' }).first()) as { n: unknown }).n);
      const ledger = async () => ((await t.store.knex('commission_ledger').select('amount_usd')) as { amount_usd: unknown }[]).reduce((s, l) => s.plus(money(String(l.amount_usd))), money(0)).toFixed(2);
      const [before, paid] = [await customers(), await ledger()];
      assert.equal(before, 20);
      assert.deepEqual((await scan()).streams.map((s) => [s.missing, s.deleted]), [[0, 0]]);
      // Every page empty, twice: a scan that read nothing at all infers nothing.
      sandbox.faults.emptyPages = true;
      for (let i = 0; i < 2; i++) assert.match((await scan()).skipped ?? '', /the source gave no customers for .* where the store holds 20 \(an outage answering empty pages\?\)/);
      sandbox.faults.emptyPages = false;
      // A partial outage (half the customers gone from the lists): one scan leaves candidates; the next agreeing one is past the guard and held.
      const gone = sandbox.data.customers('igaming').slice(0, 10).map((c) => String(c.customer_id));
      for (const id of gone) assert.ok(sandbox.data.deleteRecord('igaming', 'customers', id));
      assert.deepEqual((await scan()).streams.map((s) => [s.missing, s.firstSeen, s.deleted]), [[10, 10, 0]]);
      const second = await scan();
      assert.deepEqual(second.streams.map((s) => [s.deleted, s.held]), [[0, 10]]);
      assert.match(second.streams[0]?.reason ?? '', /would delete 10 of the partner's 20 customers, over the guard's 5% \(at least 5\)/);
      assert.deepEqual([await customers(), await ledger()], [before, paid]);
      assert.equal((await listTombstones(t.store.knex, 'sandbox-casino')).length, 0);
    });

    it("a deposit hard-deleted at the partner and listed by its deleted-ids endpoint leaves the store and takes its CPA back", async () => {
      (def.streams.transactions as RestStream).deleted_list = { path: '/api/v1/igaming/transactions/deleted', since_param: 'deleted_since', id_field: 'transaction_id', records_path: 'data' };
      const loader = loaderWithEveryJob(t.store, { plans: PLANS });
      const run = async () => {
        const results = await runPartner({ loader, clock: t.store.clock, logger: silentLogger(), redact: createRedactor(def.secrets) }, def, { kind: 'run', scheduledFor: new Date(t.store.clock()) });
        assert.ok(results.every((r) => r.status === 'succeeded'), JSON.stringify(results));
        return results.find((r) => r.stream === 'transactions')!;
      };
      assert.equal((await run()).counts.deleted ?? 0, 0, 'a first run reads no deleted list');
      const paid = (await t.store.knex('commission_ledger').where({ partner_id: 'sandbox-casino', reason: 'cpa_ftd' }).orderBy('id').first('customer_id', 'line_key')) as { customer_id: string; line_key: string };
      const deposits = (await t.store.knex('transactions').where({ partner_id: 'sandbox-casino', customer_id: paid.customer_id, transaction_type: 'deposit', status: 'approved' }).select('transaction_id')) as { transaction_id: string }[];
      for (const d of deposits) assert.ok(sandbox.data.deleteRecord('igaming', 'transactions', d.transaction_id));
      const second = await run();
      assert.equal(second.counts.deleted, deposits.length);
      const stones = await listTombstones(t.store.knex, 'sandbox-casino');
      assert.deepEqual(stones.map((s) => [s.recordKey, s.learnedVia]).sort(), deposits.map((d) => [d.transaction_id, 'deleted_list']).sort());
      const lines = (await t.store.knex('commission_ledger').where('line_key', paid.line_key).orderBy('id').select('amount_usd', 'reason')) as { amount_usd: unknown; reason: string }[];
      assert.deepEqual(lines.map((l) => [money(String(l.amount_usd)).toFixed(2), l.reason]), [['100.00', 'cpa_ftd'], ['-100.00', 'cpa_clawback_deleted']]);
      // Listed again by the next run (the overlap): already deleted, nothing moves.
      const third = await run();
      assert.equal(third.counts.deleted ?? 0, 0);
      assert.equal((await t.store.knex('commission_ledger').where('line_key', paid.line_key).count({ n: '*' }).first() as { n: unknown }).n, lines.length);
      const check = await recompute(t.store, PLANS, { runId: 'check' });
      assert.deepEqual(check.flatMap((r) => r.differences), []);
    });
  });
}
