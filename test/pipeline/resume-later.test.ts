/**
 * What a killed bulk run left to evaluate is judged with the rerun's own loads, after them, when the
 * rerun loads the same partner (resumeJobs with `later`, Loader.settleLeftovers): the ledger and the
 * review holds then equal one uninterrupted run's. Judged before the rerun's loads, a customer whose
 * first deposit had loaded gets a CPA line that the uninterrupted run withholds, because the rest of
 * the customer's transactions open a fraud flag first there.
 */
import assert from 'node:assert/strict';
import { resumeJobs } from '../../jobs/load-hooks.js';
import { parseFraudConfig, type FraudConfig } from '../../src/fraud/config.js';
import { silentLogger } from '../../src/log.js';
import { Loader } from '../../src/pipeline/load.js';
import type { Entity, SpecRecord } from '../../src/types.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { plansFrom } from '../support/plans.js';
import { customer, deposit, gaming, raw } from '../support/records.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';
import { PLANS } from '../reports/support.js';

const plans = plansFrom(PLANS);
// Two quick round trips with no play are a pattern here (docs/fraud.md, deposit_cycling's worked example).
const fraud = parseFraudConfig('rules:\n  deposit_cycling:\n    min_cycles: 2\n', 'fraud.yaml').config as FraudConfig;
const options = { plans, logger: silentLogger(), fraud };

const usd = (id: string, type: string, amount: number, day: string): SpecRecord =>
  deposit(id, 'c1', { transaction_type: type, currency: 'USD', amount_currency: amount, transaction_date: `${day}T12:00:00Z` });
/** What the killed run loaded: the customer, its first deposit (a CPA of 100.00) and one round trip. */
const FIRST = [usd('d1', 'deposit', 100, '2026-11-02'), usd('w1', 'withdrawal', 95, '2026-11-03')];
/** What only the rerun loads: the second round trip, which makes the pattern. */
const SECOND = [usd('d2', 'deposit', 200, '2026-11-05'), usd('w2', 'withdrawal', 190, '2026-11-06')];
/** ... and the play: 10.00 a day, below half of each deposit over its round trip (20 < 50, 20 < 100). */
const PLAY = ['2026-11-02', '2026-11-03', '2026-11-04', '2026-11-05', '2026-11-06'].map((day) => gaming(day, 'c1', { currency: 'USD', total_bets: 10, wins: 4 }));

const newLoader = (t: TestStore) => loaderWithEveryJob(t.store, options);
const load = (loader: Loader, runId: string, entity: Entity, records: SpecRecord[]) =>
  loader.load({ partner: 'casino', variant: 'igaming', entity, runId, records: raw(records) });

/** The ledger lines and the review holds, as what each key and affiliate got. */
async function outcome(t: TestStore): Promise<{ lines: string[]; holds: string[] }> {
  const lines = (await t.store.knex('commission_ledger').select('line_key', 'reason', 'amount_usd').orderBy('line_key')) as { line_key: string; reason: string; amount_usd: unknown }[];
  const holds = (await t.store.knex('commission_review_holds').select('line_key', 'withheld_usd', 'waiting_usd').orderBy('line_key')) as { line_key: string; withheld_usd: unknown; waiting_usd: unknown }[];
  return {
    lines: lines.map((l) => `${l.line_key} ${l.reason} ${Number(l.amount_usd).toFixed(2)}`),
    holds: holds.map((h) => `${h.line_key} withheld ${Number(h.withheld_usd ?? 0).toFixed(2)} waiting ${Number(h.waiting_usd ?? 0).toFixed(2)}`),
  };
}

/** A bulk run that loads the customer and FIRST, then dies before its settle: its markers stay on disk. */
async function killedRun(t: TestStore): Promise<void> {
  const loader = newLoader(t);
  loader.evaluateRun('killed', 'group');
  await load(loader, 'killed', 'customers', [customer('c1')]);
  await load(loader, 'killed', 'transactions', FIRST);
}

for (const backend of STORES) {
  describe(`a killed bulk run's leftovers, judged with the rerun (${backend.name})`, function () {
    this.timeout(120_000);
    const stores: TestStore[] = [];
    const newStore = async () => {
      const t = await backend.create(fixedClock('2026-11-22T10:00:00.000Z'));
      stores.push(t);
      return t;
    };
    after(async () => {
      for (const t of stores) await t.drop();
    });

    let reference: { lines: string[]; holds: string[] };
    before(async () => {
      const t = await newStore();
      const loader = newLoader(t);
      loader.evaluateRun('whole', 'group');
      await load(loader, 'whole', 'customers', [customer('c1')]);
      await load(loader, 'whole', 'transactions', [...FIRST, ...SECOND]);
      await load(loader, 'whole', 'activity', PLAY);
      await loader.endDeferred('whole');
      reference = await outcome(t);
    });

    it('the uninterrupted run opens the flag before the CPA is judged: no line, 100.00 waiting', () => {
      assert.deepEqual(reference, { lines: [], holds: ['cpa_ftd|cpa|casino|c1 withheld 0.00 waiting 100.00'] });
    });

    it('a rerun of the same partner judges the leftovers after its loads: the same ledger and holds', async () => {
      const t = await newStore();
      await killedRun(t);
      assert.equal(await resumeJobs(t.store, options, 'casino'), true, 'the partner has leftovers');
      assert.equal(Number(((await t.store.knex('fraud_deferred').count({ n: '*' })) as { n: unknown }[])[0]?.n), 1, 'they wait for the rerun');
      const loader = newLoader(t);
      loader.settleLeftovers('casino', 'igaming');
      loader.evaluateRun('rerun', 'group');
      await load(loader, 'rerun', 'transactions', SECOND);
      await load(loader, 'rerun', 'activity', PLAY);
      await loader.endDeferred('rerun');
      assert.deepEqual(await outcome(t), reference);
      for (const table of ['fraud_deferred', 'fraud_deferred_days', 'commission_pending', 'report_pending']) {
        assert.equal(Number(((await t.store.knex(table).count({ n: '*' })) as { n: unknown }[])[0]?.n), 0, `${table} is empty`);
      }
    });

    it('leftovers are judged even when the rerun loads nothing new for them', async () => {
      const t = await newStore();
      await killedRun(t);
      await resumeJobs(t.store, options, 'casino');
      const loader = newLoader(t);
      loader.settleLeftovers('casino', 'igaming');
      loader.evaluateRun('empty', 'group');
      await loader.endDeferred('empty');
      assert.deepEqual(await outcome(t), { lines: ['cpa_ftd|cpa|casino|c1 cpa_ftd 100.00'], holds: [] });
    });

    it('judged before the rerun (resumed at once), the customer gets the line the uninterrupted run withholds', async () => {
      const t = await newStore();
      await killedRun(t);
      await resumeJobs(t.store, options);
      const loader = newLoader(t);
      loader.evaluateRun('rerun', 'group');
      await load(loader, 'rerun', 'transactions', SECOND);
      await load(loader, 'rerun', 'activity', PLAY);
      await loader.endDeferred('rerun');
      // Payable is the same (the line is withheld), but the ledger is not the uninterrupted run's.
      assert.deepEqual(await outcome(t), { lines: ['cpa_ftd|cpa|casino|c1 cpa_ftd 100.00'], holds: ['cpa_ftd|cpa|casino|c1 withheld 100.00 waiting 0.00'] });
    });
  });
}
