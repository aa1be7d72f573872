/**
 * Pushed deletes over real HTTP (DELETE /api/v1/{variant}/customers/{id} and /transactions/{id},
 * our extension; src/push/delete.ts), on every store: the answer, the ledger line of the clawback
 * computed by hand, the report's FTDs, a repeat (idempotent: already_deleted), the same
 * Idempotency-Key's replay and reuse, a 404 for an unknown id, the scopes, and recompute agreeing.
 * The store's clock is the test's.
 */
import assert from 'node:assert/strict';
import { recompute } from '../../src/commission/recompute.js';
import { toLedgerLine } from '../../src/commission/ledger.js';
import type { Loader } from '../../src/pipeline/load.js';
import { affiliateReport } from '../../src/reports/affiliates.js';
import { listTombstones } from '../../src/store/tombstones.js';
import { startApi, type StartedApi } from '../support/api.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CPA, plansFrom, plansYaml } from '../support/plans.js';
import { customer, deposit } from '../support/records.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

const PLANS = plansFrom(plansYaml(CPA));

for (const backend of STORES) {
  describe(`pushed deletes over HTTP (${backend.name})`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let loader: Loader;
    let api: StartedApi;
    let token: string;
    const clock = fixedClock('2026-11-22T10:00:00.000Z');

    const call = async (method: 'POST' | 'DELETE', path: string, body?: unknown, headers: Record<string, string> = {}, as = token) => {
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${as}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const cpaLines = async (c: string) => ((await t.store.knex('commission_ledger').where('line_key', `cpa_ftd|cpa|casino|${c}`).orderBy('id').select('*')) as Record<string, unknown>[]).map(toLedgerLine);
    const ftds = async () => (await affiliateReport(t.store, { partner: 'casino' }, 'month')).rows.find((r) => r.month === '2026-11')?.ftd_count;

    beforeEach(async () => {
      t = await backend.create(clock);
      loader = loaderWithEveryJob(t.store, { plans: PLANS });
      api = await startApi(t.store, { loader });
      token = await api.token(await api.addClient('casino', 'igaming'));
      for (const c of ['c1', 'c2']) assert.equal((await call('POST', '/api/v1/igaming/customers', customer(c))).status, 200);
      for (const [d, c] of [['d1', 'c1'], ['d2', 'c2']] as const) {
        assert.equal((await call('POST', '/api/v1/igaming/transactions', deposit(d, c, { currency: 'USD', amount_currency: 50, amount_usd: 50 }))).status, 200);
      }
      await loader.drain();
    });
    afterEach(async () => {
      await api.close();
      await t.drop();
    });

    it('DELETE of a transaction: 200 with the counts, the CPA clawed back naming the tombstone, the FTD gone; a repeat is already_deleted', async () => {
      assert.deepEqual((await cpaLines('c1')).map((l) => l.amount_usd), ['100.00']);
      assert.equal(await ftds(), 2);
      const first = await call('DELETE', '/api/v1/igaming/transactions/d1');
      assert.equal(first.status, 200);
      assert.deepEqual({ ...first.body, request_id: typeof first.body.request_id }, { deleted: 1, waiting: 0, already_deleted: false, request_id: 'string' });
      await loader.drain();
      const [tomb] = await listTombstones(t.store.knex, 'casino');
      const lines = await cpaLines('c1');
      assert.deepEqual(lines.map((l) => [l.amount_usd, l.reason, l.sources[0]]), [['100.00', 'cpa_ftd', 'transactions:d1'], ['-100.00', 'cpa_clawback_deleted', `tombstones:${tomb?.id}`]]);
      assert.equal(await ftds(), 1);

      const again = await call('DELETE', '/api/v1/igaming/transactions/d1');
      assert.equal(again.status, 200);
      assert.deepEqual([again.body.deleted, again.body.already_deleted], [0, true]);
      await loader.drain();
      assert.equal((await cpaLines('c1')).length, 2);
      const results = await recompute(t.store, PLANS, { runId: 'check' });
      assert.deepEqual(results.flatMap((r) => r.differences), []);
    });

    it('DELETE of a customer says what went with it; an unknown id is a 404 and writes nothing', async () => {
      const r = await call('DELETE', '/api/v1/igaming/customers/c2');
      assert.equal(r.status, 200);
      assert.deepEqual({ ...r.body, request_id: 0 }, { deleted: 1, waiting: 0, already_deleted: false, cascaded: { transactions: 1, activity: 0 }, request_id: 0 });
      await loader.drain();
      assert.deepEqual((await cpaLines('c2')).map((l) => l.amount_usd), ['100.00', '-100.00']);
      assert.equal(await ftds(), 1);

      for (const path of ['/api/v1/igaming/customers/nobody', '/api/v1/igaming/transactions/nothing']) {
        const missing = await call('DELETE', path);
        assert.equal(missing.status, 404);
        assert.equal(missing.body.error, 'not_found');
      }
      assert.equal((await listTombstones(t.store.knex, 'casino')).length, 2, 'the customer and its deposit; the 404s wrote nothing');
      const results = await recompute(t.store, PLANS, { runId: 'check' });
      assert.deepEqual(results.flatMap((x) => x.differences), []);
    });

    it('the 21st pushed customer DELETE of a UTC day is held by the mass-delete guard: 202 with the hold, nothing deleted; a repeat joins it', async () => {
      for (let i = 3; i <= 30; i++) assert.equal((await call('POST', '/api/v1/igaming/customers', customer(`c${i}`))).status, 200);
      for (let i = 3; i <= 22; i++) assert.equal((await call('DELETE', `/api/v1/igaming/customers/c${i}`)).status, 200);
      const held = await call('DELETE', '/api/v1/igaming/customers/c23');
      assert.equal(held.status, 202);
      assert.equal(held.body.held, true);
      assert.match(String(held.body.reason), /would delete 21 of the partner's 30 customers, over the guard's 5% \(at least 20\)/);
      assert.ok(await t.store.knex('customers').where({ partner_id: 'casino', customer_id: 'c23' }).first('customer_id'), 'c23 is kept');
      const again = await call('DELETE', '/api/v1/igaming/customers/c23', undefined, { 'idempotency-key': 'k-held' });
      assert.deepEqual([again.status, again.body.hold_id], [202, held.body.hold_id]);
      assert.equal((await listTombstones(t.store.knex, 'casino')).filter((x) => x.entity === 'customers').length, 20);
    });

    it('Idempotency-Key: a repeat gets the first answer; the key on another record is refused; a read-only token is forbidden', async () => {
      const first = await call('DELETE', '/api/v1/igaming/transactions/d1', undefined, { 'idempotency-key': 'del-1' });
      const replay = await call('DELETE', '/api/v1/igaming/transactions/d1', undefined, { 'idempotency-key': 'del-1' });
      assert.deepEqual(replay, first);
      assert.equal(first.body.already_deleted, false);
      const reused = await call('DELETE', '/api/v1/igaming/transactions/d2', undefined, { 'idempotency-key': 'del-1' });
      assert.deepEqual([reused.status, reused.body.error], [422, 'idempotency_key_reused']);
      const reader = await api.token(await api.addClient('casino', 'igaming', ['read']));
      const forbidden = await call('DELETE', '/api/v1/igaming/transactions/d2', undefined, {}, reader);
      assert.equal(forbidden.status, 403);
      await loader.drain();
      assert.equal((await listTombstones(t.store.knex, 'casino')).length, 1);
    });
  });
}
