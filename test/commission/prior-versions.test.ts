/**
 * A transaction re-sent with another customer, type or date: what its old version counted for is
 * taken back (docs/commissions.md, "After every batch"). Hand-computed; each case both through
 * the fast path (the loader remembers the customers, the batch goes straight to the upsert) and
 * through a fresh loader (customers looked up in the store), as after a restart.
 */
import assert from 'node:assert/strict';
import { commissionJob } from '../../jobs/commission.js';
import { silentLogger } from '../../src/log.js';
import type { Entity, SpecRecord } from '../../src/types.js';
import { loaderWith } from '../support/loader.js';
import { CPA_FROM_20, plansYaml, planWith, REVSHARE } from '../support/plans.js';
import { raw } from '../support/records.js';
import { STORES } from '../support/stores.js';
import { harness, igCustomer, play, tx, type Harness } from './harness.js';

const PLANS = plansYaml(
  planWith(CPA_FROM_20, { amount_usd: '{ default: 100, by_country: { DE: 150 } }' }),
  planWith(REVSHARE, { revenue: 'ngr' }),
);

type Resend = (h: Harness, entity: Entity, records: SpecRecord[]) => Promise<void>;

const paths: [string, Resend][] = [
  ['customers remembered (direct upsert)', (h, entity, records) => h.load(entity, records)],
  ['a fresh loader (customers looked up)', async (h, entity, records) => {
    const fresh = loaderWith(h.t.store, [commissionJob(h.t.store, h.plans, silentLogger())]);
    const r = await fresh.load({ partner: 'casino', variant: 'igaming', entity, runId: 'resend', records: raw(records) });
    assert.equal(r.loaded, records.length);
  }],
];

for (const backend of STORES) {
  describe(`commission scope takes back a transaction's old version, on ${backend.name}`, () => {
    let h: Harness;
    beforeEach(async () => { h = await harness(backend, PLANS); });
    afterEach(async () => h.drop());

    for (const [name, resend] of paths) {
      it(`a deposit re-sent with another customer moves the CPA to that customer: ${name}`, async () => {
        await h.load('customers', [igCustomer('a'), igCustomer('b', { country_code: 'DE' })]);
        await h.load('transactions', [tx('t1', 'a', 'deposit', 50)]);
        await resend(h, 'transactions', [tx('t1', 'b', 'deposit', 50)]);
        // a: paid 100 on t1, which is no longer a's: −100. b: t1 is b's FTD, DE: +150.
        assert.deepEqual((await h.lines()).map((l) => [l.customer_id, l.reason, l.amount_usd]), [
          ['a', 'cpa_ftd', '100.00'],
          ['a', 'cpa_correction', '-100.00'],
          ['b', 'cpa_ftd', '150.00'],
        ]);
        await h.agrees();
      });

      it(`a bonus re-dated to a day without activity no longer lowers NGR: ${name}`, async () => {
        await h.load('customers', [igCustomer('a')]);
        await h.load('activity', [play('2026-11-03', 'a', { ggr: 500 })]);
        await h.load('transactions', [tx('b1', 'a', 'bonus', 100, { transaction_date: '2026-11-03T15:00:00Z' })]);
        // 500 × 25% = 125.00; with the bonus (500 − 100) × 25% = 100.00; re-dated to 11-04 (no
        // activity that day, so not deducted): 125.00 again.
        await resend(h, 'transactions', [tx('b1', 'a', 'bonus', 100, { transaction_date: '2026-11-04T15:00:00Z' })]);
        assert.deepEqual((await h.lines({ plan: 'rs' })).map((l) => [l.period, l.reason, l.amount_usd, l.total_usd]), [
          ['2026-11', 'revshare', '125.00', '125.00'],
          ['2026-11', 'revshare', '-25.00', '100.00'],
          ['2026-11', 'revshare', '25.00', '125.00'],
        ]);
        await h.agrees();
      });

      it(`a bonus re-sent as a deposit stops being deducted: ${name}`, async () => {
        await h.load('customers', [igCustomer('a')]);
        await h.load('activity', [play('2026-11-03', 'a', { ggr: 500 })]);
        await h.load('transactions', [tx('b1', 'a', 'bonus', 100, { transaction_date: '2026-11-03T15:00:00Z' })]);
        await resend(h, 'transactions', [tx('b1', 'a', 'deposit', 100, { transaction_date: '2026-11-03T15:00:00Z' })]);
        // 125.00, then 100.00 with the bonus; as a deposit NGR is 500 again: 125.00. The deposit also pays a's CPA: 100.00, period 2026-11.
        const rs = await h.lines({ plan: 'rs' });
        assert.deepEqual(rs.map((l) => l.total_usd), ['125.00', '100.00', '125.00']);
        const cpa = await h.lines({ plan: 'cpa' });
        assert.deepEqual(cpa.map((l) => [l.customer_id, l.amount_usd, l.period]), [['a', '100.00', '2026-11']]);
        await h.agrees();
      });
    }
  });
}
