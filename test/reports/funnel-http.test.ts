/**
 * The funnel over HTTP (GET /api/v1/reports/funnel): the same figures as `funnelReport`; an
 * affiliate credential sees only its own customers; CSV; a phase change loaded by the server's
 * Loader shows in the next answer.
 */
import assert from 'node:assert/strict';
import { startApi, type StartedApi } from '../support/api.js';
import { STORES } from '../support/stores.js';
import type { SpecRecord } from '../../src/types.js';
import { trader } from './funnel-support.js';

const backend = STORES.find((b) => b.name === 'sqlite') ?? STORES[0];

if (backend) {
  describe(`report funnel over HTTP on ${backend.name}`, () => {
    let t: Awaited<ReturnType<typeof backend.create>>;
    let api: StartedApi;
    let run = 0;
    const load = async (records: SpecRecord[]) => {
      const result = await api.deps.loader.load({ partner: 'firm', variant: 'prop-trading', entity: 'customers', runId: `r${++run}`, records: records.map((value, i) => ({ position: i + 1, value })) });
      assert.equal(result.rejected, 0);
    };
    const get = async (token: string, path: string) => {
      const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, text: await res.text() };
    };
    before(async () => {
      t = await backend.create();
      api = await startApi(t.store);
      await load([
        trader('p1', '2026-10-01T00:00:00Z', { phase: 'phase_1', last_modified_date: '2026-10-03T00:00:00Z', first_name: 'Ann', email: 'p1@example.com', click_id: 'click-p1' }),
        trader('p2', '2026-10-02T00:00:00Z', { phase: 'funded', last_modified_date: '2026-10-20T00:00:00Z', affiliate_id: 'aff-2' }),
        trader('p3', '2026-10-02T00:00:00Z', { phase: 'failed', last_modified_date: '2026-10-05T00:00:00Z' }),
      ]);
    });
    after(async () => {
      await api.close();
      await t.drop();
    });

    it('an operator sees every affiliate, an affiliate credential its own customers only; CSV; a phase change shows at once', async () => {
      const operator = await api.token(await api.addClient('firm', 'prop-trading', ['read']));
      const affiliate = await api.token(await api.addClient('firm', 'prop-trading', ['read'], 'aff-1'));
      const all = await get(operator, '/api/v1/reports/funnel?by=affiliate');
      assert.equal(all.status, 200);
      const rows = (JSON.parse(all.text) as { rows: { group: string; signups: number; phase_1: number; funded: number; failed: { unknown: number } }[] }).rows;
      assert.deepEqual(rows.map((r) => [r.group, r.signups, r.phase_1, r.funded, r.failed.unknown]), [['aff-1', 2, 1, 0, 1], ['aff-2', 1, 1, 1, 0]]);
      const own = await get(affiliate, '/api/v1/reports/funnel?by=affiliate');
      assert.deepEqual((JSON.parse(own.text) as { rows: { group: string }[] }).rows.map((r) => r.group), ['aff-1']);
      assert.equal((await get(affiliate, '/api/v1/reports/funnel?affiliate=aff-2')).status, 403);
      for (const text of [all.text, own.text]) for (const personal of ['Ann', 'example.com', 'click-']) assert.ok(!text.includes(personal));

      const csv = await get(affiliate, '/api/v1/reports/funnel?format=csv');
      assert.equal(csv.text.split('\n')[1], '2,1,0,0,0,0,0,1,0.5,0,,0,2,,');

      await load([trader('p1', '2026-10-01T00:00:00Z', { phase: 'phase_2', last_modified_date: '2026-10-06T00:00:00Z' })]);
      const after = JSON.parse((await get(affiliate, '/api/v1/reports/funnel')).text) as { rows: { phase_2: number; median_days: { phase_1_phase_2: number } }[] };
      assert.deepEqual(after.rows.map((r) => [r.phase_2, r.median_days.phase_1_phase_2]), [[1, 3]]);
    });
  });
}
