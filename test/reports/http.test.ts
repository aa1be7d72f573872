/**
 * Reports over HTTP: an operator credential sees every affiliate of its partner, an affiliate
 * credential only its own rows (another affiliate asked for is 403), never names, e-mails or
 * click ids; JSON and CSV; a pushed record shows in the report the moment its request returns.
 */
import assert from 'node:assert/strict';
import { STORES } from '../support/stores.js';
import { startApi, type StartedApi } from '../support/api.js';
import type { SpecRecord } from '../../src/types.js';
import { revokeClient } from '../../src/access/api-clients.js';

const backend = STORES.find((b) => b.name === 'sqlite') ?? STORES[0];

const person = (id: string, affiliate: string, extra: SpecRecord = {}): SpecRecord => ({
  customer_id: id, signup_date: '2026-10-03T09:30:00Z', affiliate_id: affiliate, first_name: 'Ann', last_name: 'Lee', email: `${id}@example.com`, click_id: `click-${id}`, ...extra,
});
const deposit = (id: string, customer: string, amount: number): SpecRecord => ({
  transaction_id: id, customer_id: customer, transaction_type: 'deposit', amount_currency: amount, currency: 'USD', transaction_date: '2026-10-04T12:00:00Z', status: 'approved',
});

if (backend) {
  describe(`reports over HTTP on ${backend.name}`, () => {
    let t: Awaited<ReturnType<typeof backend.create>>;
    let api: StartedApi;
    let run = 0;
    const load = async (partner: string, entity: 'customers' | 'transactions', records: SpecRecord[]) => {
      const result = await api.deps.loader.load({ partner, variant: 'igaming', entity, runId: `r${++run}`, records: records.map((value, i) => ({ position: i + 1, value })) });
      assert.equal(result.rejected, 0);
    };
    const get = async (token: string, path: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
      return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
    };

    beforeEach(async () => {
      t = await backend.create();
      api = await startApi(t.store);
      await load('casino', 'customers', [person('c1', 'aff-1', { campaign_id: 'camp-a' }), person('c2', 'aff-2')]);
      await load('casino', 'transactions', [deposit('d1', 'c1', 40), deposit('d2', 'c2', 70)]);
      await load('other', 'customers', [person('x1', 'aff-1')]);
    });
    afterEach(async () => {
      await api.close();
      await t.drop();
    });

    it('gives an operator every affiliate of its partner and an affiliate credential only its own rows, without personal fields', async () => {
      const operator = await api.token(await api.addClient('casino', 'igaming', ['read']));
      const affiliate = await api.token(await api.addClient('casino', 'igaming', ['read'], 'aff-1'));

      const all = await get(operator, '/api/v1/reports/affiliates?from=2026-10-01&to=2026-10-31');
      assert.equal(all.status, 200);
      const body = JSON.parse(all.text) as { filter: Record<string, string>; rows: { partner: string; affiliate: string; month: string; registrations: number; ftd_count: number; ftd_usd: string }[] };
      assert.deepEqual(body.filter, { partner: 'casino', from: '2026-10-01', to: '2026-10-31', by: 'month' });
      assert.deepEqual(body.rows.map((r) => [r.partner, r.affiliate, r.month, r.registrations, r.ftd_count, r.ftd_usd]), [
        ['casino', 'aff-1', '2026-10', 1, 1, '40.00'],
        ['casino', 'aff-2', '2026-10', 1, 1, '70.00'],
      ]);

      const own = await get(affiliate, '/api/v1/reports/affiliates?by=campaign');
      assert.equal(own.status, 200);
      assert.deepEqual((JSON.parse(own.text) as { rows: { affiliate: string; campaign: string | null; deposits_usd: string }[] }).rows.map((r) => [r.affiliate, r.campaign, r.deposits_usd]), [['aff-1', 'camp-a', '40.00']]);

      const other = await get(affiliate, '/api/v1/reports/affiliates?affiliate=aff-2');
      assert.deepEqual([other.status, JSON.parse(other.text)], [403, { error: 'forbidden', message: 'this credential sees only affiliate aff-1' }]);

      const explained = await get(affiliate, '/api/v1/reports/affiliates/explain?column=registrations&month=2026-10');
      assert.equal(explained.status, 200);
      assert.deepEqual((JSON.parse(explained.text) as { records: { customer_id: string }[] }).records.map((r) => r.customer_id), ['c1']);
      const ftd = await get(operator, '/api/v1/reports/affiliates/explain?column=ftd_usd&affiliate=aff-2&day=2026-10-04');
      assert.deepEqual(JSON.parse(ftd.text).total, '70.00');
      for (const text of [all.text, own.text, explained.text, ftd.text]) {
        for (const personal of ['example.com', 'click-', 'Ann', 'Lee']) assert.ok(!text.includes(personal), `no ${personal} in ${text}`);
      }
    });

    it('a token of partner B sees none of partner A\'s report rows on any report route; no token is 401, a write-only token 403, a revoked client 401', async () => {
      const reports = ['/api/v1/reports/affiliates?from=2026-10-01&to=2026-10-31', '/api/v1/reports/affiliates/explain?column=registrations&affiliate=aff-1&month=2026-10', '/api/v1/reports/funnel?by=affiliate'];
      const reader = await api.addClient('other', 'igaming', ['read']);
      const other = await api.token(reader);
      const all = await get(other, reports[0]!);
      assert.deepEqual((JSON.parse(all.text) as { rows: { partner: string; affiliate: string; registrations: number; ftd_count: number }[] }).rows.map((r) => [r.partner, r.affiliate, r.registrations, r.ftd_count]), [['other', 'aff-1', 1, 0]]);
      const explained = await get(other, reports[1]!);
      assert.deepEqual((JSON.parse(explained.text) as { records: { customer_id: string }[] }).records.map((r) => r.customer_id), ['x1']);
      const aimed = await get(other, '/api/v1/reports/affiliates/explain?column=deposits_usd&affiliate=aff-2&month=2026-10');
      assert.deepEqual((JSON.parse(aimed.text) as { records: unknown[] }).records, [], 'casino\'s aff-2 deposits are not other\'s');
      for (const path of reports) {
        const res = await get(other, `${path}&format=${path.includes('explain') ? 'json' : 'csv'}`);
        // The funnel is prop-trading's: this iGaming token is refused (wrong_variant).
        assert.ok(res.status === 200 || res.status === 400 || (path.includes('funnel') && res.status === 403), `${path}: ${res.status}`);
        for (const text of [res.text, all.text, explained.text]) assert.ok(!/casino|\bc1\b|\bc2\b|\bd1\b|70\.00|40\.00/.test(text), `${path}: ${text}`);
      }

      const writer = await api.token(await api.addClient('casino', 'igaming', ['write']));
      for (const path of reports) {
        const none = await fetch(`${api.url}${path}`);
        assert.deepEqual([none.status, none.headers.get('www-authenticate'), ((await none.json()) as { error: string }).error], [401, 'Bearer realm="partner-sync"', 'invalid_token'], path);
        const scoped = await get(writer, path);
        assert.deepEqual([scoped.status, (JSON.parse(scoped.text) as { error: string }).error], [403, 'insufficient_scope'], path);
      }

      await api.close();
      api = await startApi(t.store, { revocationCacheMs: 100 });
      assert.equal((await get(other, reports[0]!)).status, 200);
      assert.equal(await revokeClient(t.store, reader.client_id), true);
      await new Promise((r) => setTimeout(r, 150));
      for (const path of reports) {
        const res = await get(other, path);
        assert.deepEqual([res.status, JSON.parse(res.text)], [401, { error: 'invalid_token', message: 'the access token was revoked' }], path);
      }
    });

    it('answers CSV with a header row for format=csv or Accept: text/csv, and refuses bad filters with 400', async () => {
      const operator = await api.token(await api.addClient('casino', 'igaming', ['read']));
      for (const [path, headers] of [['/api/v1/reports/affiliates?by=day&format=csv', {}], ['/api/v1/reports/affiliates?by=day', { accept: 'text/csv' }]] as const) {
        const res = await get(operator, path, headers);
        assert.equal(res.status, 200);
        assert.match(res.type, /^text\/csv/);
        const [header, ...lines] = res.text.trimEnd().split('\n');
        assert.match(header ?? '', /^partner,affiliate,day,registrations,ftd_count,ftd_usd,depositors,/);
        assert.deepEqual(lines.map((l) => l.split(',').slice(0, 6).join(',')), ['casino,aff-1,2026-10-03,1,0,0.00', 'casino,aff-1,2026-10-04,0,1,40.00', 'casino,aff-2,2026-10-03,1,0,0.00', 'casino,aff-2,2026-10-04,0,1,70.00']);
      }
      const bad = await get(operator, '/api/v1/reports/affiliates?from=2026-13-01');
      assert.deepEqual([bad.status, JSON.parse(bad.text)], [400, { error: 'bad_request', message: 'from must be a UTC day YYYY-MM-DD, got "2026-13-01"' }]);
      const anonymous = await fetch(`${api.url}/api/v1/reports/affiliates`);
      assert.equal(anonymous.status, 401);
    });

    it('answers the funnel of the caller\'s prop-trading partner, one affiliate\'s rows for an affiliate credential', async () => {
      const trader = (id: string, affiliate: string, phase: string) => ({ ...person(id, affiliate), challenge_type: 'standard', account_size: 10000, phase });
      const result = await api.deps.loader.load({ partner: 'firm', variant: 'prop-trading', entity: 'customers', runId: 'prop',
        records: [trader('p1', 'aff-1', 'phase_1'), trader('p2', 'aff-1', 'funded'), trader('p3', 'aff-2', 'phase_2')].map((value, i) => ({ position: i + 1, value })) });
      assert.equal(result.rejected, 0);
      const operator = await api.token(await api.addClient('firm', 'prop-trading', ['read']));
      const affiliate = await api.token(await api.addClient('firm', 'prop-trading', ['read'], 'aff-1'));
      const all = await get(operator, '/api/v1/reports/funnel?by=affiliate');
      assert.equal(all.status, 200, all.text);
      assert.deepEqual((JSON.parse(all.text) as { rows: { group: string; signups: number }[] }).rows.map((r) => [r.group, r.signups]), [['aff-1', 2], ['aff-2', 1]]);
      const own = await get(affiliate, '/api/v1/reports/funnel?by=affiliate&format=csv');
      assert.equal(own.status, 200, own.text);
      assert.deepEqual(own.text.trimEnd().split('\n').map((l) => l.split(',').slice(0, 2).join(',')), ['group,signups', 'aff-1,2']);
      for (const personal of ['example.com', 'click-', 'Ann']) assert.ok(!all.text.includes(personal) && !own.text.includes(personal));
    });

    it('shows a record loaded through the API\'s Loader as soon as the load returns', async () => {
      const operator = await api.token(await api.addClient('casino', 'igaming', ['read']));
      await load('casino', 'transactions', [deposit('d3', 'c1', 5)]);
      const res = await get(operator, '/api/v1/reports/affiliates?affiliate=aff-1&by=day&from=2026-10-04&to=2026-10-04');
      assert.deepEqual((JSON.parse(res.text) as { rows: { deposit_count: number; deposits_usd: string }[] }).rows.map((r) => [r.deposit_count, r.deposits_usd]), [[2, '45.00']]);
    });
  });
}
