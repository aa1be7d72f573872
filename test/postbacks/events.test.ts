/**
 * Which facts become postback events, and that each fires once: through the real Loader with the
 * whole after-load composition and the commission engine, on both stores. A re-sent, replayed or
 * backfilled record fires nothing new; a reversal fires its own event; a CPA held by a fraud flag
 * is announced on release only; a change that rolls back leaves no event.
 */
import assert from 'node:assert/strict';
import { decideAndEvaluate } from '../../jobs/fraud-decision.js';
import { evaluatePartner } from '../../jobs/commission.js';
import { upsertFlag } from '../../src/fraud/flags.js';
import { approveMonth } from '../../src/postbacks/approvals.js';
import { silentLogger } from '../../src/log.js';
import { igCustomer, tx, trader, prop } from '../commission/harness.js';
import { STORES } from '../support/stores.js';
import { postbackHarness, type PostbackHarness } from './harness.js';

for (const backend of STORES) {
  describe(`postback events on ${backend.name}`, () => {
    let h: PostbackHarness;
    beforeEach(async () => { h = await postbackHarness(backend); });
    afterEach(async () => { await h.drop(); });

    it('writes registration, FTD, deposit and CPA events once per fact, whatever is re-sent', async () => {
      await h.define({ url: 'http://127.0.0.1:9/pb?c={click_id}' });
      await h.load('customers', [igCustomer('c1', { click_id: 'clk 1' }), igCustomer('c2', { affiliate_id: 'aff-2' })]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50), tx('t2', 'c1', 'deposit', 30, { transaction_date: '2026-10-03T12:00:00Z' })]);
      const first = await h.events();
      assert.deepEqual(first, [
        ['registration', 'registration|casino|c1'],
        ['ftd', 'ftd|casino|c1'],
        ['deposit', 'deposit|casino|t1'],
        ['deposit', 'deposit|casino|t2'],
        ['cpa_qualified', 'cpa_qualified|cpa_ftd|cpa|casino|c1|aff-1|1'],
      ]);
      // The same records again (a replay), and again as a backfill run: nothing new.
      await h.load('customers', [igCustomer('c1', { click_id: 'clk 1' })], { runId: 'backfill-1' });
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50), tx('t2', 'c1', 'deposit', 30, { transaction_date: '2026-10-03T12:00:00Z' })], { runId: 'backfill-1' });
      assert.deepEqual(await h.events(), first);
      // A later deposit is a deposit, not an FTD.
      await h.load('transactions', [tx('t3', 'c1', 'deposit', 10, { transaction_date: '2026-10-05T12:00:00Z' })]);
      assert.deepEqual((await h.events()).slice(5), [['deposit', 'deposit|casino|t3']]);
      const data = (await h.t.store.knex('postback_events').where('kind', 'ftd').first('data')) as { data: unknown };
      const values = typeof data.data === 'string' ? JSON.parse(data.data) : data.data;
      assert.equal(values.click_id, 'clk 1');
      assert.equal(values.transaction_id, 't1');
      assert.equal(Number(values.amount), 50);
    });

    it('fires the reversal of a deposit and the CPA clawback as their own events, once', async () => {
      await h.define({ url: 'http://127.0.0.1:9/pb' });
      await h.load('customers', [igCustomer('c1')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50)]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50, { status: 'reversed' })]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50, { status: 'reversed' })]);
      assert.deepEqual((await h.events()).map(([k]) => k), ['registration', 'ftd', 'deposit', 'cpa_qualified', 'deposit_reversed', 'cpa_clawback']);
      assert.deepEqual((await h.events())[5], ['cpa_clawback', 'cpa_clawback|cpa_ftd|cpa|casino|c1|aff-1|1']);
    });

    it('announces a CPA held by a fraud flag when the flag is dismissed, and nothing when one is confirmed', async () => {
      await h.define({ url: 'http://127.0.0.1:9/pb', events: 'cpa_qualified,cpa_clawback' });
      const { plans } = h;
      await h.load('customers', [igCustomer('c1'), igCustomer('c2')]);
      const { store } = h.t;
      const flag = async (customer: string, key: string): Promise<number> => {
        const r = await store.transaction((trx) => upsertFlag(trx, store, { partner: 'casino', variant: 'igaming', rule: 'cpa_farming', instanceKey: key, affiliateId: 'aff-1', severity: 'high', evidence: {}, customers: [customer] }));
        await evaluatePartner(store, plans, 'casino', 'igaming', 'review', silentLogger());
        return r.id;
      };
      const f1 = await flag('c1', 'k1');
      const f2 = await flag('c2', 'k2');
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50), tx('t2', 'c2', 'deposit', 50)]);
      assert.deepEqual(await h.events(), [], 'no CPA is announced while its flag is open');
      await decideAndEvaluate(store, plans, silentLogger(), { id: f1, decision: 'dismissed', by: 'manager', reason: 'fine' });
      assert.deepEqual(await h.events(), [['cpa_qualified', 'cpa_qualified|cpa_ftd|cpa|casino|c1|aff-1|1']]);
      await decideAndEvaluate(store, plans, silentLogger(), { id: f2, decision: 'confirmed', by: 'manager', reason: 'farm' });
      assert.deepEqual((await h.events()).length, 1, 'a confirmed flag announces nothing');
    });

    it('writes no event for a change that rolls back', async () => {
      await h.define({ url: 'http://127.0.0.1:9/pb' });
      await assert.rejects(h.loader.transaction(async (tx) => {
        await tx.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId: 'r', records: [{ position: 1, value: igCustomer('c1') }] });
        throw new Error('boom');
      }), /boom/);
      assert.deepEqual(await h.events(), []);
      assert.equal(((await h.t.store.knex('customers').count({ n: '*' })) as { n: number }[])[0]?.n, 0);
    });

    it('fires for the affiliate and campaign a postback names, and keeps personal data out unless it is on', async () => {
      await h.define({ url: 'http://127.0.0.1:9/a', campaign: 'camp-1', events: 'registration' });
      const { postback: withPersonal } = await h.define({ url: 'http://127.0.0.1:9/b', events: 'registration', includePersonal: true });
      await h.load('customers', [igCustomer('c1', { campaign_id: 'camp-1', email: 'a@example.com' }), igCustomer('c2', { campaign_id: 'camp-2', email: 'b@example.com' }), igCustomer('c3', { affiliate_id: 'aff-9' })]);
      const rows = (await h.t.store.knex('postback_events').orderBy('seq').select('postback_id', 'customer_id', 'data')) as { postback_id: string; customer_id: string; data: unknown }[];
      const parsed = rows.map((r) => ({ ...r, data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown> }));
      assert.deepEqual(parsed.filter((r) => r.postback_id !== withPersonal.id).map((r) => [r.customer_id, r.data.email]), [['c1', undefined]]);
      assert.deepEqual(parsed.filter((r) => r.postback_id === withPersonal.id).map((r) => [r.customer_id, r.data.email]), [['c1', 'a@example.com'], ['c2', 'b@example.com']]);
    });

    it("announces an affiliate's closed month approved, once, with the month's net", async () => {
      await h.define({ url: 'http://127.0.0.1:9/pb', events: 'commission_approved' });
      await h.load('customers', [igCustomer('c1'), igCustomer('c2')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50), tx('t2', 'c2', 'deposit', 25)]);
      await assert.rejects(approveMonth(h.t.store, 'aff-1', '2026-11', 'manager'), { message: 'month 2026-11 is not closed yet: only a month before 2026-11 can be approved' });
      const approval = await approveMonth(h.t.store, 'aff-1', '2026-10', 'manager');
      assert.deepEqual([approval.net_usd, approval.lines], ['200.00', 2]);
      await assert.rejects(approveMonth(h.t.store, 'aff-1', '2026-10', 'other'), { message: 'the 2026-10 commission of affiliate aff-1 is approved already (by manager)' });
      await assert.rejects(approveMonth(h.t.store, 'aff-2', '2026-10', 'manager'), { message: 'affiliate aff-2 has no commission lines in 2026-10' });
      const rows = (await h.t.store.knex('postback_events').select('kind', 'fact_key', 'data')) as { kind: string; fact_key: string; data: unknown }[];
      assert.deepEqual(rows.map((r) => [r.kind, r.fact_key]), [['commission_approved', 'commission_approved|aff-1|2026-10']]);
      const data = (typeof rows[0]!.data === 'string' ? JSON.parse(rows[0]!.data) : rows[0]!.data) as Record<string, string>;
      assert.deepEqual([data.amount, data.currency, data.month], ['200.00', 'USD', '2026-10']);
    });

    it('fires challenge purchases and phase changes of prop-trading customers, once each', async () => {
      await h.define({ url: 'http://127.0.0.1:9/pb', events: 'challenge_purchase,phase_change' });
      await h.load('customers', [trader('p1')], prop);
      await h.load('transactions', [tx('f1', 'p1', 'challenge_fee', 99)], prop);
      await h.load('customers', [trader('p1', { phase: 'phase_2', last_modified_date: '2026-10-10T00:00:00Z' })], prop);
      await h.load('customers', [trader('p1', { phase: 'phase_2', last_modified_date: '2026-10-10T00:00:00Z' })], prop);
      await h.load('transactions', [tx('f1', 'p1', 'challenge_fee', 99)], prop);
      await h.load('customers', [trader('p1', { phase: 'failed', last_modified_date: '2026-10-20T00:00:00Z' })], prop);
      assert.deepEqual(await h.events(), [
        ['challenge_purchase', 'challenge_purchase|firm|f1'],
        ['phase_change', 'phase_change|firm|p1|2'],
        ['phase_change', 'phase_change|firm|p1|3'],
      ]);
    });
  });
}
