/**
 * A bulk run's fraud settle in groups (settleFraud, jobs/fraud.ts): customers deferred by customer
 * (`fraud_deferred`) and by day (`fraud_deferred_days`) are judged once each, a group a transaction,
 * whether they fit one group (taken as they are) or need several (written to fraud_deferred and
 * taken in customer order), and the flags come out the same either way, a pattern shared by
 * customers of two groups included.
 */
import assert from 'node:assert/strict';
import { settleFraud } from '../../jobs/fraud.js';
import { parseFraudConfig, type FraudConfig } from '../../src/fraud/config.js';
import { silentLogger } from '../../src/log.js';
import type { Entity, SpecRecord } from '../../src/types.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { customer, deposit, gaming, raw } from '../support/records.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

const fraud = parseFraudConfig('rules:\n  deposit_cycling:\n    min_cycles: 2\n', 'fraud.yaml').config as FraudConfig;
const options = { plans: [], logger: silentLogger(), fraud };

const IDS = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'];
// c1 and c6 share an e-mail (one flag over two groups of three); c4 cycles deposits with no play.
const CUSTOMERS = IDS.map((id) => customer(id, { email: id === 'c6' ? 'Same.Person@example.com' : id === 'c1' ? 'same.person@example.com' : `${id}@example.com` }));
const usd = (id: string, who: string, type: string, amount: number, day: string): SpecRecord =>
  deposit(id, who, { transaction_type: type, currency: 'USD', amount_currency: amount, transaction_date: `${day}T12:00:00Z` });
const TRANSACTIONS = [
  usd('d1', 'c4', 'deposit', 100, '2026-11-02'), usd('w1', 'c4', 'withdrawal', 95, '2026-11-03'),
  usd('d2', 'c4', 'deposit', 200, '2026-11-05'), usd('w2', 'c4', 'withdrawal', 190, '2026-11-06'),
  usd('d3', 'c7', 'deposit', 50, '2026-11-04'),
];
// Play of 10.00 a day: below half of each of c4's deposits over its round trip (the days loaded, so judged).
const PLAY = ['2026-11-02', '2026-11-03', '2026-11-04', '2026-11-05', '2026-11-06'].map((day) => gaming(day, 'c4', { currency: 'USD', total_bets: 10, wins: 4 }));

/** A bulk run that loads and ends without its settle: what it deferred stays on disk. */
async function unsettledRun(t: TestStore): Promise<void> {
  const loader = loaderWithEveryJob(t.store, options);
  loader.evaluateRun('bulk', 'group');
  const load = (entity: Entity, records: SpecRecord[]) => loader.load({ partner: 'casino', variant: 'igaming', entity, runId: 'bulk', records: raw(records) });
  await load('customers', CUSTOMERS);
  await load('transactions', TRANSACTIONS);
  await load('activity', PLAY);
}

/** Every flag as rule, instance key and its customers. */
async function flags(t: TestStore): Promise<string[]> {
  const rows = (await t.store.knex('fraud_flags as f').join('fraud_flag_customers as c', 'c.flag_id', 'f.id')
    .select('f.rule', 'f.instance_key', 'c.customer_id').orderBy(['f.rule', 'f.instance_key', 'c.customer_id'])) as { rule: string; instance_key: string; customer_id: string }[];
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(`${r.rule} ${r.instance_key}`, [...(out.get(`${r.rule} ${r.instance_key}`) ?? []), r.customer_id]);
  return [...out].map(([k, v]) => `${k}: ${v.join(',')}`);
}

for (const backend of STORES) {
  describe(`a bulk run's fraud settle in groups (${backend.name})`, function () {
    this.timeout(120_000);
    const stores: TestStore[] = [];
    const open = async () => {
      const t = await backend.create(fixedClock('2026-11-10T12:00:00.000Z'));
      stores.push(t);
      await unsettledRun(t);
      assert.ok(Number((await t.store.knex('fraud_deferred').count({ n: '*' }))[0]!.n) > 0, 'the customers were deferred by customer');
      assert.ok(Number((await t.store.knex('fraud_deferred_days').count({ n: '*' }))[0]!.n) > 0, 'the transactions were deferred by day');
      return t;
    };
    after(async () => { for (const t of stores) await t.drop(); });

    it('one group or groups of three: every customer judged once, nothing left deferred, the same flags', async () => {
      const whole = await open();
      assert.equal(await settleFraud(whole.store, fraud, silentLogger(), 'casino', 'settle'), IDS.length);
      const expected = await flags(whole);
      assert.deepEqual(expected.map((f) => f.replace(/ .*:/, ':')), ['deposit_cycling: c4', 'duplicate_identity: c1,c6']);

      const grouped = await open();
      // 3 + 3 + 1 customers in three transactions; c1 and c6 fall in different groups.
      assert.equal(await settleFraud(grouped.store, fraud, silentLogger(), 'casino', 'settle', 3), IDS.length);
      assert.deepEqual(await flags(grouped), expected);
      for (const t of [whole, grouped]) {
        assert.equal(Number((await t.store.knex('fraud_deferred').count({ n: '*' }))[0]!.n), 0);
        assert.equal(Number((await t.store.knex('fraud_deferred_days').count({ n: '*' }))[0]!.n), 0);
        assert.equal(Number((await t.store.knex('fraud_customers').count({ n: '*' }))[0]!.n), IDS.length);
      }
      // Nothing left: a second settle judges no one.
      assert.equal(await settleFraud(grouped.store, fraud, silentLogger(), 'casino', 'again', 3), 0);
    });
  });
}
