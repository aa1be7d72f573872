/**
 * Agreement: after a randomized sequence of loads (phase changes in order and out of order,
 * re-sends, customers first seen at funded, phase_2 or failed, failures at each stage, resets,
 * versions without last_modified_date, a backfill of old versions, a replay), the phase history
 * holds exactly the applied phase changes, once each, and every funnel cell equals the figure
 * computed with plain SQL from the customer rows and the phase history.
 */
import assert from 'node:assert/strict';
import { FUNNEL_CELLS, funnelExplain, funnelReport, roundDays, type FunnelFilters, type FunnelGroup } from '../../src/reports/funnel.js';
import { toUtcTimestamp } from '../../src/kernel/timestamp.js';
import type { SpecRecord } from '../../src/types.js';
import { raw } from '../support/records.js';
import { STORES } from '../support/stores.js';
import { expectedFunnel, factsBySql, funnelHarness, type FunnelHarness } from './funnel-support.js';
import { mulberry32 as random } from '../../src/kernel/prng.js';


const PATHS: (string | undefined)[][] = [
  [undefined], ['phase_1'], ['phase_1', 'phase_2'], ['phase_1', 'phase_2', 'funded'], ['phase_1', 'failed'],
  ['phase_1', 'phase_2', 'failed'], ['phase_1', 'phase_2', 'funded', 'failed'], ['funded'], ['phase_2', 'funded'],
  ['failed'], ['phase_1', 'failed', 'phase_1', 'phase_2'], [undefined, 'phase_1', 'phase_1', 'phase_2'],
];

interface Send { batch: number; record: SpecRecord }

function scenario(seed: number, customers: number, batches: number): { sends: Send[]; backfill: SpecRecord[]; replay: SpecRecord[] } {
  const rnd = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T;
  const sends: Send[] = [];
  const backfill: SpecRecord[] = [];
  const replay: SpecRecord[] = [];
  for (let i = 0; i < customers; i++) {
    const id = `c${String(i).padStart(3, '0')}`;
    const signup = Date.UTC(2026, 8, 1) + Math.floor(rnd() * 80 * 86_400_000);
    const base: SpecRecord = {
      customer_id: id,
      signup_date: new Date(signup).toISOString(),
      affiliate_id: pick(['aff-1', 'aff-2', 'aff-3']),
      ...(rnd() < 0.8 ? { challenge_type: pick(['standard', 'rapid', 'aggressive']) } : {}),
      ...(rnd() < 0.8 ? { account_size: pick([10000, 50000, 100000]) } : {}),
    };
    let at = signup;
    let batch = Math.floor(rnd() * 4);
    const versions: SpecRecord[] = [];
    for (const phase of pick(PATHS)) {
      at += Math.floor(rnd() * 6 * 86_400_000) + 60_000;
      const record: SpecRecord = { ...base, ...(phase ? { phase } : {}) };
      // One version in ten without last_modified_date: its time is the load's.
      if (rnd() >= 0.1) record.last_modified_date = new Date(at).toISOString();
      if (rnd() < 0.15) record.affiliate_id = pick(['aff-1', 'aff-2', 'aff-3']); // re-attributed
      versions.push(record);
      batch += 1 + Math.floor(rnd() * 3);
      // One in five arrives late, after versions that follow it.
      const late = rnd() < 0.2 ? 2 + Math.floor(rnd() * 4) : 0;
      sends.push({ batch: Math.min(batches - 1, batch + late), record });
      if (rnd() < 0.2) sends.push({ batch: Math.min(batches - 1, batch + 1), record }); // re-sent
    }
    if (rnd() < 0.5) backfill.push(pick(versions));
    replay.push(versions[versions.length - 1] as SpecRecord);
  }
  return { sends, backfill, replay };
}

/**
 * The phase changes the store applied, per customer, by the load rules alone: in a batch the last
 * version of a key wins unless it is older; it applies unless older than the stored version (a
 * version without last_modified_date applies and keeps the stored one); an applied phase equal to
 * the last one adds nothing.
 */
class Model {
  private readonly stored = new Map<string, string | undefined>();
  readonly changes = new Map<string, [string, string][]>();

  batch(records: readonly SpecRecord[], loadedAt: string): void {
    const kept = new Map<string, SpecRecord>();
    const version = (r: SpecRecord) => (typeof r.last_modified_date === 'string' ? toUtcTimestamp(r.last_modified_date) : undefined);
    const older = (a: string | undefined, b: string | undefined) => a !== undefined && b !== undefined && a < b;
    for (const r of records) {
      const k = kept.get(r.customer_id as string);
      if (!k || !older(version(r), version(k))) kept.set(r.customer_id as string, r);
    }
    for (const [id, r] of kept) {
      const stored = this.stored.get(id);
      if (older(version(r), stored)) continue;
      this.stored.set(id, version(r) ?? stored);
      if (typeof r.phase !== 'string') continue;
      const list = this.changes.get(id) ?? [];
      if (list[list.length - 1]?.[0] !== r.phase) list.push([r.phase, version(r) ?? loadedAt]);
      this.changes.set(id, list);
    }
  }
}

async function observedHistory(h: FunnelHarness): Promise<Map<string, [string, string][]>> {
  const rows = (await h.t.store.knex('phase_history').where('partner_id', 'firm').whereNot('time_source', 'inferred')
    .orderBy([{ column: 'customer_id' }, { column: 'seq' }]).select('customer_id', 'phase', 'observed_at')) as { customer_id: string; phase: string; observed_at: string }[];
  const out = new Map<string, [string, string][]>();
  for (const r of rows) out.set(r.customer_id, [...(out.get(r.customer_id) ?? []), [r.phase, r.observed_at]]);
  return out;
}

for (const backend of STORES) {
  describe(`report funnel agreement on ${backend.name}`, () => {
    let h: FunnelHarness;
    beforeEach(async () => { h = await funnelHarness(backend, '2026-12-01T00:00:00.000Z'); });
    afterEach(async () => h.drop());

    it('a randomized sequence of loads: the history holds each applied change once; every cell equals plain SQL over the history', async function () {
      this.timeout(60_000);
      const BATCHES = 24;
      const { sends, backfill, replay } = scenario(14, 70, BATCHES);
      const model = new Model();
      const send = async (records: SpecRecord[], hour: number) => {
        h.clock.set(new Date(Date.UTC(2026, 11, 1, hour)).toISOString());
        model.batch(records, h.t.store.now());
        await h.load(records);
      };
      for (let b = 0; b < BATCHES; b++) {
        const records = sends.filter((s) => s.batch === b).map((s) => s.record);
        if (records.length > 0) await send(records, b);
      }
      await send(backfill, BATCHES);
      await send(replay, BATCHES + 1);
      // iGaming customers are not part of the funnel.
      await h.loader.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId: 'ig', records: raw([{ customer_id: 'g1', signup_date: '2026-10-01T00:00:00Z', affiliate_id: 'aff-1' }]) });

      assert.deepEqual(await observedHistory(h), new Map([...model.changes].filter(([, l]) => l.length > 0).sort(([a], [b]) => (a < b ? -1 : 1))));

      const facts = await factsBySql(h.t, 'firm');
      const all = (await funnelReport(h.t.store.knex, {}))[0];
      assert.equal(all?.signups, 70);
      // The scenario covers what it is meant to: failures at every stage, stages passed at unknown times.
      for (const stage of ['phase_1', 'phase_2', 'funded', 'unknown'] as const) assert.ok((all?.failed[stage] ?? 0) > 0, `failed at ${stage}`);
      assert.ok((all?.median_of.phase_1_phase_2 ?? 0) < (all?.phase_2 ?? 0), 'some phase_2 times unknown');
      const filters: FunnelFilters[] = [{}, { partner: 'firm' }, { affiliate: 'aff-2' }, { from: '2026-10-01', to: '2026-10-31' }];
      for (const f of filters) {
        for (const by of [undefined, 'affiliate', 'challenge_type', 'account_size', 'cohort'] as (FunnelGroup | undefined)[]) {
          const expected = expectedFunnel(facts, by, f);
          assert.deepEqual(await funnelReport(h.t.store.knex, { ...f, by }), expected, `${JSON.stringify(f)} by ${by ?? 'nothing'}`);
        }
      }
      // Each cell's explanation lists as many customers as the cell counts (a median: as it is taken over).
      const count = (cell: string): number => {
        if (!all) return 0;
        if (cell === 'signup') return all.signups;
        if (cell.startsWith('failed_')) return all.failed[cell.slice(7) as keyof typeof all.failed];
        if (cell.startsWith('days_')) return all.median_of[cell.slice(5) as keyof typeof all.median_of];
        return all[cell as 'phase_1' | 'phase_2' | 'funded'];
      };
      for (const cell of FUNNEL_CELLS) {
        const customers = await funnelExplain(h.t.store.knex, {}, cell);
        assert.equal(customers.length, count(cell), cell);
        if (cell.startsWith('days_') && all) {
          // The median's customers, in order of their days: the middle one, or the mean of the middle two.
          const d = customers.map((c) => c.days as number);
          const mid = Math.floor(d.length / 2);
          const median = d.length % 2 === 1 ? d[mid] : ((d[mid - 1] as number) + (d[mid] as number)) / 2;
          assert.equal(roundDays(median ?? null), all.median_days[cell.slice(5) as keyof typeof all.median_days], cell);
        }
      }
    });
  });
}
