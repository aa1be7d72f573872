/**
 * The record routes over real HTTP against a real server (test/support/api.ts), on every store:
 * push single and bulk, 422 listing every error, list pages by cursor, waiting and release,
 * commission lines after a pushed FTD, partner isolation, idempotency, group commit.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { unevaluated } from '../../src/store/unevaluated.js';
import { toLedgerLine } from '../../src/commission/ledger.js';
import { defaultConfig } from '../../src/fraud/config.js';
import { Loader } from '../../src/pipeline/load.js';
import { ENTITIES, type Entity } from '../../src/types.js';
import { startApi, type StartedApi } from '../support/api.js';
import { everyJob, loaderWith, loaderWithEveryJob, waitingFor } from '../support/loader.js';
import { CPA_FROM_20, plansFrom, plansYaml, planWith } from '../support/plans.js';
import { customer, deposit, gaming, stored } from '../support/records.js';
import { STORES, type TestStore } from '../support/stores.js';

const execFileAsync = promisify(execFile);

/** The CPA of a partner: 100 USD (150 for a German customer) for a first deposit of 20 USD or more within 30 days of signup. */
const plansOf = (partner: string) => plansFrom(plansYaml(planWith(CPA_FROM_20, {
  id: 'pusher-cpa', partner, qualification: '{ window_days: 30, min_first_deposit_usd: 20 }', amount_usd: '{ default: 100, by_country: { DE: 150 } }',
})));

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

for (const backend of STORES) {
  describe(`record routes over HTTP (${backend.name})`, function () {
    this.timeout(30_000);
    let t: TestStore;
    let loader: Loader;
    let api: StartedApi;
    let token: string;
    let partner: string;
    let n = 0;
    const count = async (table: string, of = partner): Promise<number> => Number(((await t.store.knex(table).where('partner_id', of).count({ n: '*' })) as { n: number }[])[0]?.n);
    const call = async (method: 'GET' | 'POST', path: string, body?: unknown, options: { token?: string; headers?: Record<string, string> } = {}): Promise<Answer> => {
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${options.token ?? token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
    };

    // One store and server per backend; each test is its own partner.
    before(async () => {
      t = await backend.create();
      loader = loaderWithEveryJob(t.store, { plans: plansOf('flow-casino') });
      api = await startApi(t.store, { loader });
    });
    after(async () => {
      await api.close();
      await t.drop();
    });
    const asPartner = async (name: string) => {
      partner = name;
      token = await api.token(await api.addClient(name, 'igaming'));
    };
    beforeEach(async () => asPartner(`pusher-${++n}`));

    it('the whole flow: push single and bulk, a 422 listing every error stores nothing, a deposit waits for its customer, the FTD books its CPA line', async () => {
      await asPartner('flow-casino');
      const single = await call('POST', '/api/v1/igaming/customers', customer('c2', { country_code: 'GB' }));
      assert.equal(single.status, 200);
      assert.deepEqual(Object.keys(single.body), ['accepted', 'loaded', 'waiting', 'request_id']);
      assert.deepEqual([single.body.accepted, single.body.loaded, single.body.waiting], [1, 1, 0]);
      assert.match(String(single.body.request_id), /^[0-9a-f-]{36}$/);

      // every error of every record; nothing stored, no rejects either
      const bad = await call('POST', '/api/v1/igaming/transactions/bulk', [
        deposit('t9', 'c2'),
        deposit('t10', 'c2', { currency: 'usd', status: undefined }),
        { ...deposit('t11', 'c2'), amount_currency: 1.234, constructor: 'x' },
      ]);
      assert.equal(bad.status, 422);
      assert.deepEqual(bad.body, {
        error: 'validation_failed',
        message: '2 of 3 record(s) failed validation; nothing was stored',
        errors: (bad.body.errors as unknown[]),
      });
      assert.deepEqual((bad.body.errors as { index: number; field: string; rule: string }[]).map((e) => [e.index, e.field, e.rule]), [
        [1, 'status', 'required'], [1, 'currency', 'pattern'], [2, 'constructor', 'additionalProperties'], [2, 'amount_currency', 'maxDecimalPlaces'],
      ].sort((a, b) => (a[0] as number) - (b[0] as number)) as unknown[]);
      for (const table of ['transactions', 'waiting_records', 'rejects']) assert.equal(await count(table), 0, table);

      // a single record that is not an object, and __proto__
      const proto = await call('POST', '/api/v1/igaming/customers', '{"customer_id":"c5","signup_date":"2026-11-01T00:00:00Z","affiliate_id":"a","__proto__":{"x":1}}');
      assert.equal(proto.status, 422);
      assert.deepEqual((proto.body.errors as { index: number; field: string; rule: string }[]).map((e) => [e.index, e.field, e.rule]), [[0, '__proto__', 'additionalProperties']]);

      // the FTD arrives before its customer: it waits
      const early = await call('POST', '/api/v1/igaming/transactions/bulk', [deposit('t1', 'c1', { currency: 'USD', amount_currency: 50 }), deposit('t2', 'c2', { currency: 'USD', amount_currency: 19.99 })]);
      assert.deepEqual([early.status, early.body.accepted, early.body.loaded, early.body.waiting], [200, 2, 1, 1]);
      assert.equal(await count('waiting_records'), 1);
      const arrived = await call('POST', '/api/v1/igaming/customers/bulk', [customer('c1', { country_code: 'DE' })]);
      assert.deepEqual([arrived.status, arrived.body.loaded], [200, 1]);
      assert.deepEqual((await stored(t.store, partner, 'igaming', 'transactions')).map((r) => r.transaction_id), ['t1', 't2']);
      assert.equal(await count('waiting_records'), 0);
      // Answered at the commit; the commission job evaluates right behind it: until then `status` counts it.
      await loader.drain();
      assert.deepEqual(await unevaluated(t.store.knex, new Date(), partner), []);
      // CPA: c1 (DE) first deposit 50 USD >= 20 within 30 days of signup: 150.00; c2's 19.99 is below the baseline.
      const lines = ((await t.store.knex('commission_ledger').where('partner_id', partner).select('*').orderBy('id')) as Record<string, unknown>[]).map(toLedgerLine);
      assert.deepEqual(lines.map((l) => [l.plan_id, l.customer_id, l.reason, l.amount_usd, l.period, l.ref_id]), [['pusher-cpa', 'c1', 'cpa_ftd', '150.00', '2026-11', 't1']]);
    });

    it('answered at the commit: fraud rules and commissions evaluate right behind it, one evaluation per partner at a time over what committed meanwhile; until then status counts it', async () => {
      // A second API whose evaluations wait for a gate, so what a partner sees in between is observable.
      let open!: () => void;
      const gate = new Promise<void>((resolve) => { open = resolve; });
      let settles = 0;
      // A first job every evaluation waits for: it holds them at the gate.
      const jobs = waitingFor({ name: 'gate', evaluate: async () => { settles++; await gate; } }, everyJob(t.store, { plans: plansOf('behind-casino'), fraud: defaultConfig() }));
      const gated = loaderWith(t.store, jobs, { gatherBehindMs: 0 });
      const behind = await startApi(t.store, { loader: gated });
      try {
        const own = await behind.token(await behind.addClient('behind-casino', 'igaming'));
        const post = (path: string, body: unknown) => fetch(`${behind.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${own}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        assert.equal((await post('/api/v1/igaming/customers/bulk', [customer('b1', { email: 'twin@example.com' }), customer('b2', { email: 'twin@example.com' }), customer('b3', { country_code: 'DE', email: 'b3@example.com' })])).status, 200);
        // 40 single deposits at once: all answered while the first evaluation still waits.
        const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => post('/api/v1/igaming/transactions', deposit(`d${i}`, `b${(i % 3) + 1}`, { currency: 'USD', amount_currency: 50, transaction_date: `2026-11-02T12:00:${String(i).padStart(2, '0')}Z` }))));
        assert.deepEqual(answers.map((a) => a.status), answers.map(() => 200));
        assert.equal(await count('transactions', 'behind-casino'), 40);
        assert.equal(await count('commission_ledger', 'behind-casino'), 0);
        const [waiting] = await unevaluated(t.store.knex, new Date(), 'behind-casino');
        assert.equal(waiting?.fraud_customers, 3);
        assert.ok((waiting?.commission_entries ?? 0) > 0, JSON.stringify(waiting));
        // One evaluation runs; every commit after it asked for one more, not one each.
        assert.equal(settles, 1);
        open();
        await gated.drain();
        assert.equal(settles, 2);
        assert.deepEqual(await unevaluated(t.store.knex, new Date(), 'behind-casino'), []);
        // b3 (DE): first deposit d2, 50 USD >= 20 within 30 days of signup: 150.00. b1 and b2 share an
        // email: the duplicate-identity flag holds their CPAs (100.00 each, d0 and d1) for review.
        const lines = ((await t.store.knex('commission_ledger').where('partner_id', 'behind-casino').select('*').orderBy('id')) as Record<string, unknown>[]).map(toLedgerLine);
        assert.deepEqual(lines.map((l) => [l.customer_id, l.reason, l.amount_usd, l.ref_id]), [['b3', 'cpa_ftd', '150.00', 'd2']]);
        const held = (await t.store.knex('commission_review_holds').where('partner_id', 'behind-casino').orderBy('customer_id').select('customer_id', 'withheld_usd', 'waiting_usd')) as { customer_id: string; withheld_usd: unknown; waiting_usd: unknown }[];
        // Never booked: nothing withheld from the ledger, 100.00 waiting for the review.
        assert.deepEqual(held.map((h) => [h.customer_id, Number(h.withheld_usd), Number(h.waiting_usd)]), [['b1', 0, 100], ['b2', 0, 100]]);
        const flags = (await t.store.knex('fraud_flags').where('partner_id', 'behind-casino').select('rule')) as { rule: string }[];
        assert.deepEqual(flags.map((f) => f.rule), ['duplicate_identity']);
      } finally {
        open();
        await behind.close();
      }
    });

    it('list: the spec envelope, pages walked by next_cursor see every record once; parameters are checked', async () => {
      const bulk = await call('POST', '/api/v1/igaming/customers/bulk', Array.from({ length: 23 }, (_, i) => customer(`c${String(i).padStart(2, '0')}`)));
      assert.equal(bulk.status, 200);
      const seen: string[] = [];
      let path = '/api/v1/igaming/customers?per_page=10';
      let pages = 0;
      for (;;) {
        const page = await call('GET', path);
        assert.equal(page.status, 200);
        const meta = page.body.meta as { total: number; page: number; per_page: number; next_cursor: string | null };
        pages++;
        assert.deepEqual([meta.total, meta.page, meta.per_page], [23, pages, 10]);
        seen.push(...(page.body.data as { customer_id: string }[]).map((r) => r.customer_id));
        if (!meta.next_cursor) break;
        path = `/api/v1/igaming/customers?per_page=10&cursor=${encodeURIComponent(meta.next_cursor)}`;
      }
      assert.equal(pages, 3);
      assert.deepEqual(seen, Array.from({ length: 23 }, (_, i) => `c${String(i).padStart(2, '0')}`));
      const first = await call('GET', '/api/v1/igaming/customers?per_page=1');
      assert.deepEqual(first.body.data, [{ customer_id: 'c00', signup_date: '2026-11-01T09:30:00.000000Z', affiliate_id: 'aff-1' }]);
      const defaults = await call('GET', '/api/v1/igaming/customers');
      assert.equal((defaults.body.meta as { per_page: number }).per_page, 50);
      const tooMany = await call('GET', '/api/v1/igaming/customers?per_page=501');
      assert.equal(tooMany.status, 422);
      assert.deepEqual((tooMany.body.errors as { field: string }[]).map((e) => e.field), ['per_page']);
      const since = await call('GET', '/api/v1/igaming/customers?modified_since=not-a-date');
      assert.deepEqual([since.status, (since.body.errors as { field: string }[])[0]?.field], [422, 'modified_since']);
    });

    it('modified_since: RFC 3339 date-times filter (fractions cut to microseconds, never rounded up); every other value, a leap second too, is 422 naming it and why', async () => {
      const stamps = { 'c-early': '2026-11-01T00:00:00Z', 'c-mid': '2026-11-01T09:59:59.999999Z', 'c-late': '2026-11-01T10:00:00Z' };
      const bulk = await call('POST', '/api/v1/igaming/customers/bulk', Object.entries(stamps).map(([id, at]) => customer(id, { last_modified_date: at })));
      assert.equal(bulk.status, 200);
      const since = (value: string) => call('GET', `/api/v1/igaming/customers?modified_since=${encodeURIComponent(value)}`);
      const ids = (answer: Answer) => (answer.body.data as { customer_id: string }[]).map((r) => r.customer_id);
      const valid: [string, string[]][] = [
        ['2026-11-01T10:00:00Z', ['c-late']],
        ['2026-11-01T11:00:00+01:00', ['c-late']],
        ['2026-11-01t09:59:59.9999999z', ['c-late', 'c-mid']],
        // fifteen nines: cut to .999999, so c-mid (at .999999) is at or after it; rounding up would have dropped it
        ['2026-11-01T09:59:59.999999999999999Z', ['c-late', 'c-mid']],
        ['2026-11-01T05:29:59.999999999999999-04:30', ['c-late', 'c-mid']],
        ['2026-10-31T23:59:59-00:00', ['c-early', 'c-late', 'c-mid']],
      ];
      for (const [value, expected] of valid) {
        const answer = await since(value);
        assert.equal(answer.status, 200, `${value}: ${JSON.stringify(answer.body)}`);
        assert.deepEqual(ids(answer).sort(), expected, value);
      }
      const invalid: [string, string][] = [
        ['1998-12-31T23:59:61Z', 'second 61 does not exist'],
        ['1998-12-31T23:58:60Z', 'second 60 (a leap second) exists only at 23:59 UTC'],
        ['1998-12-31T23:59:60Z', 'a leap second (second 60) cannot be stored'],
        ['1998-12-31T15:59:60.123-08:00', 'a leap second (second 60) cannot be stored'],
        ['1990-02-31T15:59:59.123-08:00', 'day 31 is not in 1990-02'],
        ['1990-02-31', 'too short'],
        ['1990-12-31T10:00:00+10:60', 'offset +10:60 does not exist'],
        ['1990-12-31T15:59:59-24:00', 'offset -24:00 does not exist'],
        ['2026-13-01T00:00:00Z', 'month 13 does not exist'],
        ['1990-12-31T24:00:00Z', 'hour 24 does not exist'],
        ['1990-12-31T15:60:00Z', 'minute 60 does not exist'],
        ['1985-04-12T23:20:50+01', 'an offset must be ±HH:MM'],
        ['1985-04-12T23:20:50+0100', 'an offset must be ±HH:MM'],
        ['2026-01-01 10:00:00Z', 'separated by T, not a space'],
        // the store's own text is not an input form
        ['2026-01-01 10:00:00.000000+00', 'separated by T, not a space'],
        ['2026-01-01T10:00:00', 'a time zone is required'],
        ['1963-06-19T08:30:06.28123+01:00Z', 'an offset must be ±HH:MM'],
        ['1985-04-12T23:20:50Z\n', 'nothing may follow the zone Z'],
        ['2026-01-01T10:00:00.Z', 'a decimal point must be followed by digits'],
        ['0000-01-01T00:00:00Z', 'outside the years 0001–9999 in UTC'],
      ];
      for (const [value, why] of invalid) {
        const answer = await since(value);
        assert.equal(answer.status, 422, `${JSON.stringify(value)}: ${answer.status} ${JSON.stringify(answer.body)}`);
        const errors = answer.body.errors as { field: string; rule: string; message: string }[];
        assert.deepEqual(errors.map((e) => [e.field, e.rule]), [['modified_since', 'format']], value);
        assert.ok(errors[0]?.message.startsWith('modified_since must be an RFC 3339 date-time with a time zone, e.g. 2026-11-23T10:00:00Z: '), errors[0]?.message);
        assert.ok(errors[0]?.message.includes(why), `${value}: ${errors[0]?.message}`);
      }
      // an unencoded + arrives as a space: the answer says so
      const unencoded = await call('GET', '/api/v1/igaming/customers?modified_since=2026-11-01T11:00:00+01:00');
      assert.equal(unencoded.status, 422);
      assert.match((unencoded.body.errors as { message: string }[])[0]?.message ?? '', /a \+ in a query string must be sent as %2B/);
    });

    it('a token of partner A can neither read nor write partner B\'s records, on every record route; the other variant is 403', async () => {
      const otherPartner = `other-${n}`;
      const other = await api.token(await api.addClient(otherPartner, 'igaming'));
      const records: Record<Entity, unknown> = { customers: customer('shared'), transactions: deposit('t-shared', 'shared'), activity: gaming('2026-11-20', 'shared', { total_bets: 5 }) };
      for (const entity of ENTITIES) assert.equal((await call('POST', `/api/v1/igaming/${entity}`, records[entity], { token: other })).status, 200);
      const before = await Promise.all(ENTITIES.map((e) => stored(t.store, otherPartner, 'igaming', e)));
      for (const entity of ENTITIES) {
        const listed = await call('GET', `/api/v1/igaming/${entity}`);
        assert.deepEqual([listed.status, listed.body.data, (listed.body.meta as { total: number }).total], [200, [], 0], entity);
        const changed = entity === 'customers' ? customer('shared', { affiliate_id: 'hijack' }) : entity === 'transactions' ? deposit('t-shared', 'shared', { amount_currency: 1 }) : gaming('2026-11-20', 'shared', { total_bets: 999 });
        assert.equal((await call('POST', `/api/v1/igaming/${entity}`, changed)).status, 200);
        assert.equal((await call('POST', `/api/v1/igaming/${entity}/bulk`, [changed])).status, 200);
      }
      assert.deepEqual(await Promise.all(ENTITIES.map((e) => stored(t.store, otherPartner, 'igaming', e))), before, 'B untouched');
      assert.equal(await count('customers'), 1, 'A wrote its own records');
      for (const entity of ENTITIES) {
        for (const [method, path, body] of [['GET', `/api/v1/prop-trading/${entity}`], ['POST', `/api/v1/prop-trading/${entity}`, {}], ['POST', `/api/v1/prop-trading/${entity}/bulk`, [{}]]] as const) {
          const res = await call(method, path, body);
          assert.deepEqual([res.status, res.body.error], [403, 'wrong_variant'], `${method} ${path}`);
        }
      }
      const readOnly = await api.token(await api.addClient(partner, 'igaming', ['read']));
      assert.equal((await call('POST', '/api/v1/igaming/customers', customer('x'), { token: readOnly })).status, 403);
      const writeOnly = await api.token(await api.addClient(partner, 'igaming', ['write']));
      assert.equal((await call('GET', '/api/v1/igaming/customers', undefined, { token: writeOnly })).status, 403);
    });

    it('a field given twice, an amount of 17 significant digits, an id holding bytes that are not UTF-8: 422 naming index, field and rule; nothing stored', async () => {
      const twice = JSON.stringify(deposit('t1', 'c1', { amount_currency: 10 })).replace('"amount_currency":10', '"amount_currency":10,"amount_currency":99999');
      const dup = await call('POST', '/api/v1/igaming/transactions', twice);
      assert.equal(dup.status, 422);
      assert.deepEqual([dup.body.error, dup.body.message], ['validation_failed', '1 of 1 record(s) failed validation; nothing was stored']);
      assert.deepEqual(dup.body.errors, [{ index: 0, field: 'amount_currency', rule: 'duplicateKey', message: 'amount_currency: given more than once in one object; send each field once (which value is meant is unknown)' }]);

      const long = `[${JSON.stringify(deposit('t2', 'c1'))},${JSON.stringify(deposit('t3', 'c1', { amount_currency: 7 })).replace('"amount_currency":7', '"amount_currency":1.0000000000000001')}]`;
      const digits = await call('POST', '/api/v1/igaming/transactions/bulk', long);
      assert.equal(digits.status, 422);
      assert.deepEqual((digits.body.errors as { index: number; field: string; rule: string; message: string }[]).map((e) => [e.index, e.field, e.rule, e.message]), [
        [1, 'amount_currency', 'maxSignificantDigits', 'amount_currency: more than 15 significant digits as written (1.0000000000000001)'],
        [1, 'amount_currency', 'maxDecimalPlaces', 'amount_currency: more than 2 decimal places as written (1.0000000000000001)'],
      ]);

      const text = JSON.stringify([customer('id-@'), customer('id-#')]);
      const bytes = Buffer.from(text);
      bytes[text.indexOf('id-@') + 3] = 0xff;
      bytes[text.indexOf('id-#') + 3] = 0xfe;
      const undecodable = await fetch(`${api.url}/api/v1/igaming/customers/bulk`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: bytes });
      assert.equal(undecodable.status, 422);
      const answer = (await undecodable.json()) as { error: string; errors: { index: number; field: string; rule: string }[] };
      assert.deepEqual([answer.error, answer.errors.map((e) => [e.index, e.field, e.rule])], ['validation_failed', [[0, 'customer_id', 'encoding'], [1, 'customer_id', 'encoding']]]);
      for (const table of ['customers', 'transactions', 'waiting_records', 'rejects']) assert.equal(await count(table), 0, table);
    });

    it('SQL-looking strings are stored verbatim', async () => {
      const nasty = ["x'); DROP TABLE customers; --", 'Robert"; DELETE FROM transactions WHERE 1=1; --', '1 OR 1=1', '\\x00 %s $1 ?'];
      const res = await call('POST', '/api/v1/igaming/customers/bulk', nasty.map((v, i) => customer(`${v}${i}`, { first_name: v, email: undefined })));
      assert.equal(res.status, 200);
      const rows = await stored(t.store, partner, 'igaming', 'customers');
      assert.deepEqual(rows.map((r) => r.first_name).sort(), [...nasty].sort());
      const listed = await call('GET', '/api/v1/igaming/customers');
      assert.deepEqual((listed.body.data as { customer_id: string }[]).map((r) => r.customer_id).sort(), nasty.map((v, i) => `${v}${i}`).sort());
    });

    it('Idempotency-Key: a repeat gets the first answer and writes nothing; the key with another body is 422', async () => {
      const headers = { 'idempotency-key': 'order-42' };
      const first = await call('POST', '/api/v1/igaming/customers/bulk', [customer('c1'), customer('c2')], { headers });
      assert.equal(first.status, 200);
      const transactions = api.app.push.queue.transactions;
      const again = await call('POST', '/api/v1/igaming/customers/bulk', [customer('c1'), customer('c2')], { headers });
      assert.deepEqual([again.status, again.body], [200, first.body]);
      assert.equal(api.app.push.queue.transactions, transactions, 'no load for the repeat');
      assert.equal(await count('customers'), 2);
      const reused = await call('POST', '/api/v1/igaming/customers/bulk', [customer('c3')], { headers });
      assert.deepEqual([reused.status, reused.body.error], [422, 'idempotency_key_reused']);
      assert.equal(await count('customers'), 2);
    });

    // Heavy (a client process): on one store; the in-process test covers both (push-library.test.ts).
    (backend.name === 'postgres' ? it : it.skip)('group commit: many concurrent single POSTs take far fewer transactions than requests', async () => {
      const before = api.app.push.queue.transactions;
      // The client in its own process, as partners are: it does not slow the server's event loop.
      const fire = await execFileAsync(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), 'support', 'fire.js'), `${api.url}/api/v1/igaming/customers`, token, '100', 'g']);
      const statuses = JSON.parse(fire.stdout) as number[];
      assert.deepEqual(new Set(statuses), new Set([200]));
      const used = api.app.push.queue.transactions - before;
      assert.ok(used <= 25, `100 requests in ${used} transactions`);
      assert.equal(await count('customers'), 100);
    });
  });
}
