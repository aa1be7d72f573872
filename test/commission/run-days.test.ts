/**
 * A bulk run's batches mark their transactions and activity by run day (src/store/run-days.ts):
 * the evaluation lists the rows of those days that carry the run's id, and only those. Each
 * batch's entries are its own: a batch that commits while an evaluation takes the entries keeps
 * its entry for the next evaluation (PostgreSQL, where the two run side by side).
 */
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { emptyScope, openDayTakes, takePending, writePending, addRunDay, type Scope } from '../../src/commission/scope.js';
import { Loader } from '../../src/pipeline/load.js';
import type { Entity, SpecRecord } from '../../src/types.js';
import { loaderWith } from '../support/loader.js';
import { customer, deposit, gaming, raw } from '../support/records.js';
import { STORES, type TestStore } from '../support/stores.js';

const P = 'casino';
const NOW = '2026-11-22T10:00:00.000Z';

/** What one evaluation takes: its customers and its customer-days ("c@day"), sorted. */
async function take(trx: Knex.Transaction): Promise<{ customers: string[]; days: string[] }> {
  const scope = emptyScope(P, 'igaming', 'evaluation');
  await takePending(trx, scope, { days: false });
  const next = await openDayTakes(trx, scope);
  const days: string[] = [];
  for (;;) {
    const t = await next(2);
    for (const [c, set] of t.days) for (const d of set) days.push(`${c}@${d}`);
    if (t.entries < 2) break;
  }
  return { customers: [...scope.customers].sort(), days: days.sort() };
}

const marks = (runId: string, activity: string[], transactions: string[]): Scope => {
  const scope = emptyScope(P, 'igaming', runId);
  for (const d of activity) addRunDay(scope.runDays, runId, d);
  for (const d of transactions) addRunDay(scope.runTransactionDays, runId, d);
  return scope;
};

for (const backend of STORES) {
  describe(`commission run days (${backend.name})`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let loader: Loader;
    const load = async (entity: Entity, runId: string, records: SpecRecord[]) => {
      const r = await loader.load({ partner: P, variant: 'igaming', entity, runId, records: raw(records) });
      assert.equal(r.rejected, 0, JSON.stringify(r.rejects));
    };
    beforeEach(async () => {
      t = await backend.create();
      loader = loaderWith(t.store, []);
      await load('customers', 'setup', ['c1', 'c2', 'c3', 'c4', 'c5'].map((id) => customer(id)));
    });
    afterEach(async () => t?.drop());

    it("lists the run's own rows of its days: not another run's, not another day's", async () => {
      await load('activity', 'r1', [gaming('2026-11-02', 'c1'), gaming('2026-11-02', 'c2'), gaming('2026-11-02', 'c2', { game_type: 'live' }), gaming('2026-11-04', 'c1')]);
      await load('activity', 'r2', [gaming('2026-11-02', 'c3'), gaming('2026-11-03', 'c4')]);
      // A deposit at 23:30 UTC-02:00 is 11-03 01:30 UTC: its UTC day is what is marked.
      await load('transactions', 'r1', [deposit('d1', 'c5', { transaction_date: '2026-11-02T23:30:00-02:00' }), deposit('d2', 'c4', { transaction_date: '2026-11-02T10:00:00Z' })]);
      await load('transactions', 'r2', [deposit('d3', 'c3', { transaction_date: '2026-11-03T10:00:00Z' })]);
      await t.store.transaction((trx) => writePending(trx, marks('r1', ['2026-11-02'], ['2026-11-03']), NOW));
      const got = await t.store.transaction(take);
      assert.deepEqual(got, { customers: ['c5'], days: ['c1@2026-11-02', 'c2@2026-11-02'] });
      // Taken: nothing is left for the next evaluation.
      assert.deepEqual(await t.store.transaction(take), { customers: [], days: [] });
      assert.equal(Number((await t.store.knex('commission_pending').count({ n: '*' }))[0]?.n), 0);
    });

    it('a rolled-back evaluation leaves the run days pending', async () => {
      await load('activity', 'r1', [gaming('2026-11-02', 'c1')]);
      await t.store.transaction((trx) => writePending(trx, marks('r1', ['2026-11-02'], []), NOW));
      await assert.rejects(t.store.transaction(async (trx) => {
        assert.deepEqual(await take(trx), { customers: [], days: ['c1@2026-11-02'] });
        throw new Error('evaluation failed');
      }), /evaluation failed/);
      assert.deepEqual(await t.store.transaction(take), { customers: [], days: ['c1@2026-11-02'] });
    });

    if (backend.name !== 'postgres') return;

    it('a batch committing while an evaluation takes its run day keeps its entry for the next evaluation', async () => {
      await load('activity', 'r1', [gaming('2026-11-02', 'c1')]);
      await t.store.transaction((trx) => writePending(trx, marks('r1', ['2026-11-02'], []), NOW));
      // The run's next batch: its row and its entry for the same run day are written, not committed yet.
      const batch = await t.store.knex.transaction();
      await batch('gaming_activity').insert({ partner_id: P, date: '2026-11-02', customer_id: 'c2', game_type: 'slots', currency: 'EUR', total_bets: 1, run_id: 'r1', loaded_at: NOW });
      await writePending(batch, marks('r1', ['2026-11-02'], []), NOW);
      // The evaluation sees the committed row only.
      assert.deepEqual(await t.store.transaction(take), { customers: [], days: ['c1@2026-11-02'] });
      await batch.commit();
      // The batch's own entry is still there: the next evaluation lists the run's rows of the day, its row with them.
      assert.deepEqual(await t.store.transaction(take), { customers: [], days: ['c1@2026-11-02', 'c2@2026-11-02'] });
    });
  });
}
