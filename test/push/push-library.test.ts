/**
 * The push path in-process, over the real Loader and store: group commit, per-request counts,
 * arrival order across grouped requests, waiting and release, idempotency, list pages.
 */
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/log.js';
import { listRecords, parseListQuery } from '../../src/push/list.js';
import { PushService } from '../../src/push/service.js';
import { pushStreams } from '../../src/push/store.js';
import { entityTable } from '../../src/store/tables.js';
import type { Entity } from '../../src/types.js';
import { loaderWith } from '../support/loader.js';
import { customer, deposit, gaming, stored } from '../support/records.js';
import { STORES, fixedClock, type TestStore } from '../support/stores.js';

for (const backend of STORES) {
  describe(`push library on ${backend.name}`, () => {
    let t: TestStore;
    let service: PushService;
    // One store per backend; each test is its own partner and client.
    let partner = '';
    let client = '';
    let n = 0;
    const count = async (_t: TestStore, table: string): Promise<number> => {
      const q = table === 'push_idempotency' ? t.store.knex(table).where('client_id', 'like', `${client}%`) : t.store.knex(table).where('partner_id', partner);
      return Number(((await q.count({ n: '*' })) as { n: number }[])[0]?.n);
    };
    const clock = fixedClock('2026-11-23T10:00:00.000Z');
    const push = (entity: Entity, body: unknown, options: { bulk?: boolean; key?: string; client?: string; partner?: string } = {}) =>
      service.push({ partner: options.partner ?? partner, variant: 'igaming', entity, clientId: options.client ?? client, body, bulk: options.bulk ?? false, idempotencyKey: options.key });

    before(async () => { t = await backend.create(clock); });
    after(async () => t.drop());
    beforeEach(() => {
      partner = `casino-${++n}`;
      client = `client-${n}`;
      service = new PushService(loaderWith(t.store, []), { maxWaitMs: 5, logger: silentLogger() });
    });
    afterEach(async () => service.close());

    it('concurrent single-record pushes share transactions; each is answered with its own counts after the commit', async () => {
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => push('customers', customer(`c${i}`))));
      for (const a of answers) {
        assert.equal(a.status, 200);
        assert.deepEqual({ ...a.body, request_id: undefined }, { accepted: 1, loaded: 1, waiting: 0, request_id: undefined });
      }
      assert.equal(new Set(answers.map((a) => a.body.request_id)).size, 60, 'one request_id per request');
      assert.equal(await count(t, 'customers'), 60);
      assert.ok(service.queue.transactions <= 6, `60 requests in ${service.queue.transactions} transactions`);
      const streams = await pushStreams(t.store.knex);
      assert.equal(streams.get(`${partner}/customers`)?.records, 60);
      assert.equal(streams.get(`${partner}/customers`)?.lastReceivedAt, '2026-11-23T10:00:00.000000Z');
    });

    it('a key sent by two grouped requests ends as the later one left it; an older version is accepted but not loaded', async () => {
      const activity = await Promise.all([
        push('activity', gaming('2026-11-20', 'c1', { total_bets: 10 })),
        push('activity', gaming('2026-11-20', 'c1', { total_bets: 20 })),
      ]);
      // the activity arrived before its customer: it waits
      assert.deepEqual(activity.map((x) => [x.body.accepted, x.body.loaded, x.body.waiting]), [[1, 0, 1], [1, 0, 1]]);
      const before = service.queue.transactions;
      const customers = await Promise.all([
        push('customers', customer('c1', { last_modified_date: '2026-11-22T10:00:00Z', kyc_status_id: 'new' })),
        push('customers', customer('c1', { last_modified_date: '2026-11-21T10:00:00Z', kyc_status_id: 'old' })),
      ]);
      assert.equal(service.queue.transactions, before + 1, 'both in one transaction');
      assert.deepEqual(customers.map((x) => [x.body.accepted, x.body.loaded, x.body.waiting]), [[1, 1, 0], [1, 0, 0]]);
      assert.deepEqual((await stored(t.store, partner, 'igaming', 'activity')).map((r) => r.total_bets), [20]);
      assert.deepEqual((await stored(t.store, partner, 'igaming', 'customers')).map((r) => r.kyc_status_id), ['new']);
      assert.equal(await count(t, 'waiting_records'), 0);
    });

    it('a deposit of a customer not yet arrived waits, and loads when the customer is pushed', async () => {
      const first = await push('transactions', [deposit('t1', 'c9'), deposit('t2', 'c9')], { bulk: true });
      assert.deepEqual([first.status, first.body.accepted, first.body.loaded, first.body.waiting], [200, 2, 0, 2]);
      assert.equal(await count(t, 'transactions'), 0);
      assert.equal(await count(t, 'waiting_records'), 2);
      // grouped with a request whose customer is known: each gets its own counts
      await push('customers', customer('c1'));
      const before = service.queue.transactions;
      const grouped = await Promise.all([push('transactions', deposit('t3', 'c9')), push('transactions', [deposit('t4', 'c1'), deposit('t5', 'c9')], { bulk: true })]);
      assert.equal(service.queue.transactions, before + 1);
      assert.deepEqual(grouped.map((g) => [g.body.accepted, g.body.loaded, g.body.waiting]), [[1, 0, 1], [2, 1, 1]]);
      await push('customers', customer('c9'));
      assert.deepEqual((await stored(t.store, partner, 'igaming', 'transactions')).map((r) => r.transaction_id), ['t1', 't2', 't3', 't4', 't5']);
      assert.equal(await count(t, 'waiting_records'), 0);
    });

    it('an invalid request lists every error of every record and stores nothing, not even rejects', async () => {
      const answer = await push('transactions', [deposit('t1', 'c1'), deposit('t2', 'c1', { currency: 'eur', amount_currency: 'x' }), { ...deposit('t3', 'c1'), ['__proto__']: 1 }], { bulk: true });
      assert.equal(answer.status, 422);
      assert.equal(answer.body.error, 'validation_failed');
      assert.equal(answer.body.message, '2 of 3 record(s) failed validation; nothing was stored');
      const errors = answer.body.errors as { index: number; field: string; rule: string }[];
      assert.deepEqual(errors.map((e) => [e.index, e.field, e.rule]), [[1, 'amount_currency', 'type'], [1, 'currency', 'pattern'], [2, '__proto__', 'additionalProperties']]);
      // payload rules of a bulk request: an array of 1 to 1000 records
      const empty = await push('customers', [], { bulk: true });
      assert.deepEqual([empty.status, (empty.body.errors as { rule: string }[])[0]?.rule], [422, 'minItems']);
      const over = await push('customers', Array.from({ length: 1001 }, (_, i) => customer(`c${i}`)), { bulk: true });
      assert.deepEqual([over.status, over.body.message], [422, 'bulk payload has 1001 records; at most 1000 are allowed (spec §8)']);
      const notArray = await push('customers', customer('c1'), { bulk: true });
      assert.deepEqual([notArray.status, (notArray.body.errors as { rule: string }[])[0]?.rule], [422, 'type']);
      for (const table of ['customers', 'transactions', 'waiting_records', 'rejects', 'push_streams', 'partners']) assert.equal(await count(t, table), 0, table);
    });

    it('Idempotency-Key: a repeat returns the first answer and writes nothing; another body with the key is refused', async () => {
      // two first sends of one key at once: one load, one answer
      const [first, twin] = await Promise.all([push('customers', customer('c1'), { key: 'k-1' }), push('customers', customer('c1'), { key: 'k-1' })]);
      assert.deepEqual(twin, first);
      assert.equal(service.queue.transactions, 1);
      const before = service.queue.transactions;
      const [again, concurrent] = await Promise.all([push('customers', customer('c1'), { key: 'k-1' }), push('customers', customer('c1'), { key: 'k-1' })]);
      assert.deepEqual(again, first);
      assert.deepEqual(concurrent, first);
      assert.equal(service.queue.transactions, before, 'no transaction for a repeat');
      const other = await push('customers', customer('c2'), { key: 'k-1' });
      assert.equal(other.status, 422);
      assert.equal(other.body.error, 'idempotency_key_reused');
      // another client may use the same key
      const mine = await push('customers', customer('c2'), { key: 'k-1', client: `${client}-b` });
      assert.equal(mine.status, 200);
      assert.notEqual(mine.body.request_id, first.body.request_id);
      assert.equal(await count(t, 'push_idempotency'), 2);
      assert.equal(await count(t, 'customers'), 2);
      // after 24 hours the key is forgotten
      clock.set('2026-11-24T10:00:01.000Z');
      const later = await push('customers', customer('c1'), { key: 'k-1' });
      assert.notEqual(later.body.request_id, first.body.request_id);
      // expired keys are purged (after a commit, at most once a minute): only the new k-1 is left
      await service.close();
      assert.equal(await count(t, 'push_idempotency'), 1);
      clock.set('2026-11-23T10:00:00.000Z');
    });

    it('Idempotency-Key across processes: two servers on one store given the same key at once store the records once and give one answer', async () => {
      const second = new PushService(loaderWith(t.store, []), { maxWaitMs: 5, logger: silentLogger() });
      try {
        const body = [deposit('x1', 'nobody'), deposit('x2', 'nobody')];
        const [a, b] = await Promise.all([
          push('transactions', body, { bulk: true, key: 'same' }),
          second.push({ partner, variant: 'igaming', entity: 'transactions', clientId: client, body, bulk: true, idempotencyKey: 'same' }),
        ]);
        assert.equal(a.status, 200);
        assert.deepEqual(b, a);
        assert.equal(await count(t, 'waiting_records'), 2);
        assert.equal(await count(t, 'push_idempotency'), 1);
        assert.equal((await pushStreams(t.store.knex)).get(`${partner}/transactions`)?.records, 2, 'counted once');
      } finally {
        await second.close();
      }
    });

    it('a group waits for bulk requests being received and for the senders it just answered, never longer than its bound', async () => {
      const held = new PushService(loaderWith(t.store, []), { maxWaitMs: 5, maxHoldMs: 1000, holdShare: 1000, logger: silentLogger() });
      const announce = () => held.queue.announce(partner, 'igaming', 'customers');
      const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
      try {
        const bulk = (ids: string[]) => held.push({ partner, variant: 'igaming', entity: 'customers', clientId: client, body: ids.map((id) => customer(id)), bulk: true });
        // The stream's first transaction: its time is known from now on; its sender is expected back.
        assert.equal((await bulk(['w0'])).status, 200);
        const before = held.queue.transactions;
        const a = announce();
        const b = announce();
        const first = bulk(['w1', 'w2']);
        a();
        await pause(100);
        assert.equal(held.queue.transactions, before, 'held while another announced request is on its way');
        const second = bulk(['w3']);
        b();
        assert.deepEqual((await Promise.all([first, second])).map((x) => x.body.accepted), [2, 1]);
        assert.equal(held.queue.transactions, before + 1, 'both in one transaction');

        // The two senders just answered are expected back: the next group waits for both.
        const c = announce();
        const third = bulk(['w4']);
        c();
        await pause(100);
        assert.equal(held.queue.transactions, before + 1, 'held for the other sender just answered');
        const d = announce();
        const fourth = bulk(['w5']);
        d();
        await Promise.all([third, fourth]);
        assert.equal(held.queue.transactions, before + 2);

        // A request announced that never arrives holds a group no longer than the bound (1 s here).
        const e = announce();
        const started = performance.now();
        assert.equal((await bulk(['w6'])).status, 200);
        assert.ok(performance.now() - started < 4000, `answered after ${performance.now() - started} ms`);
        e();
        assert.equal(await count(t, 'customers'), 7);
      } finally {
        await held.close();
      }
    });

    it('close() commits what is queued', async () => {
      const pending = Promise.all([push('customers', customer('a')), push('customers', customer('b'))]);
      await new Promise((r) => setImmediate(r));
      await service.close();
      assert.equal(await count(t, 'customers'), 2);
      assert.equal((await pending).length, 2);
    });

    it('push bookkeeping: records add up over transactions; the latest activity day pushed stays the latest when an older day comes later', async () => {
      const c = await push('customers', customer('c1'));
      assert.equal(c.status, 200);
      clock.set('2026-11-23T10:05:00.000Z');
      assert.equal((await push('activity', [gaming('2026-11-21', 'c1'), gaming('2026-11-22', 'c1', { game_type: 'slots' })], { bulk: true })).status, 200);
      clock.set('2026-11-23T10:06:00.000Z');
      assert.equal((await push('activity', gaming('2026-11-19', 'c1'))).status, 200);
      const streams = await pushStreams(t.store.knex);
      const activity = streams.get(`${partner}/activity`);
      assert.deepEqual(
        { records: activity?.records, lastDay: activity?.lastDay, first: activity?.firstReceivedAt, last: activity?.lastReceivedAt },
        { records: 3, lastDay: '2026-11-22', first: '2026-11-23T10:05:00.000000Z', last: '2026-11-23T10:06:00.000000Z' },
      );
      assert.equal(streams.get(`${partner}/customers`)?.lastDay, null);
      clock.set('2026-11-23T10:00:00.000Z');
    });

    it('list: modified_since filters customers by last_modified_date, transactions and activity by when they were stored', async () => {
      await push('customers', [customer('old', { last_modified_date: '2026-11-01T00:00:00Z' }), customer('new', { last_modified_date: '2026-11-20T00:00:00+02:00' })], { bulk: true });
      await push('transactions', deposit('t-early', 'old'));
      clock.set('2026-11-23T11:00:00.000Z');
      await push('transactions', deposit('t-late', 'old'));
      clock.set('2026-11-23T10:00:00.000Z');
      const since = (entity: Entity, iso: string) => {
        const parsed = parseListQuery({ modified_since: iso }, entityTable('igaming', entity));
        assert.ok('query' in parsed);
        return listRecords(t.store.knex, partner, 'igaming', entity, parsed.query);
      };
      const customers = await since('customers', '2026-11-19T22:00:00Z');
      assert.deepEqual([customers.data.map((r) => r.customer_id), customers.meta.total], [['new'], 1]);
      const transactions = await since('transactions', '2026-11-23T10:30:00Z');
      assert.deepEqual([transactions.data.map((r) => r.transaction_id), transactions.meta.total], [['t-late'], 1]);
    });

    it('list: a walk by next_cursor sees every record once while records are inserted meanwhile', async () => {
      const table = entityTable('igaming', 'customers');
      await push('customers', Array.from({ length: 120 }, (_, i) => customer(`c${String(i).padStart(3, '0')}`)), { bulk: true });
      await push('customers', [customer('other')], { bulk: true, partner: `${partner}-other` });
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const parsed = parseListQuery(cursor ? { cursor, per_page: '50' } : { per_page: '50' }, table);
        assert.ok('query' in parsed);
        const page = await listRecords(t.store.knex, partner, 'igaming', 'customers', parsed.query);
        pages++;
        assert.equal(page.meta.page, pages);
        seen.push(...page.data.map((r) => r.customer_id as string));
        cursor = page.meta.next_cursor ?? undefined;
        // inserted before and after the cursor position while walking
        await push('customers', customer(`b${pages}`));
        await push('customers', customer(`d${pages}`));
      } while (cursor);
      const originals = seen.filter((id) => id.startsWith('c'));
      assert.equal(originals.length, 120);
      assert.equal(new Set(seen).size, seen.length, 'no record twice');
      assert.ok(!seen.includes('other'));
      const first = await listRecords(t.store.knex, partner, 'igaming', 'customers', { page: 1, perPage: 2 });
      assert.deepEqual(first.data[0], { customer_id: 'b1', signup_date: '2026-11-01T09:30:00.000000Z', affiliate_id: 'aff-1' });
    });

  });
}

describe('push library: list parameters', () => {
  it('list parameters: errors name the parameter', () => {
    const table = entityTable('igaming', 'customers');
    const bad = parseListQuery({ per_page: '501', page: '0', cursor: 'zzz', modified_since: 'yesterday', sort: 'x' }, table);
    assert.ok('errors' in bad);
    assert.deepEqual(bad.errors.map((e) => e.field), ['page', 'per_page', 'cursor', 'modified_since', 'sort']);
  });
});
