/**
 * The prop-trading funnel on ten customers, every figure computed by hand (docs/reports.md,
 * Funnel); the phase history behind it; current when the batch commits; the CLI's output.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { funnelExplain, funnelReport } from '../../src/reports/funnel.js';
import { seedPhaseHistory008 as seedPhaseHistory } from '../../src/store/migrations/008-phase-history-seed.js';
import { runCli } from '../support/cli.js';
import { STORES } from '../support/stores.js';
import { expectedFunnel, factsBySql, funnelHarness, trader, type FunnelHarness } from './funnel-support.js';

const T = (day: string, time = '00:00:00') => `2026-${day}T${time}Z`;

/**
 * Ten customers, loaded in the order their changes happened (with a re-send, an older version
 * after a newer one, a backfill of old versions and a phase without last_modified_date):
 *   c1  signup 10-01  phase_1 10-02, phase_2 10-05, funded 10-11        days 1, 3, 6
 *   c2  signup 10-01  phase_1 10-03, phase_2 10-07, funded 10-09        days 2, 4, 2
 *   c3  signup 10-02  phase_1 10-02 12:00, phase_2 10-12, failed 10-20  days 0.5, 9.5; failed at phase_2
 *   c4  signup 10-03  phase_1 10-04, failed 10-06                       days 1; failed at phase_1
 *   c5  signup 10-05  phase_1 without last_modified_date, loaded 10-08  days 3
 *   c6  signup 10-05  first seen funded 10-30: phase_1, phase_2 at unknown times, no days
 *   c7  signup 10-06  no phase sent: a signup only
 *   c8  signup 10-07  phase_1 10-09, phase_2 10-10, funded 10-20, failed 10-25   days 2, 1, 10; failed at funded
 *   c9  signup 11-01  first seen failed 11-02: stage unknown
 *   c10 signup 11-02  phase_1 11-06 (re-sent 11-07), phase_2 11-10; then phase_1 11-08 arrives late   days 4, 4
 */
async function loadTen(h: FunnelHarness): Promise<void> {
  const c = (id: string, signup: string, phase: string | undefined, modified: string | undefined, extra = {}) =>
    trader(id, signup, { ...(phase ? { phase } : {}), ...(modified ? { last_modified_date: modified } : {}), ...extra });
  await h.load([
    c('c1', T('10-01'), 'phase_1', T('10-02')), c('c2', T('10-01'), 'phase_1', T('10-03')),
    c('c3', T('10-02'), 'phase_1', T('10-02', '12:00:00'), { challenge_type: 'rapid' }), c('c4', T('10-03'), 'phase_1', T('10-04'), { affiliate_id: 'aff-2' }),
  ]);
  await h.load([c('c1', T('10-01'), 'phase_2', T('10-05')), c('c4', T('10-03'), 'failed', T('10-06'), { affiliate_id: 'aff-2' }), c('c7', T('10-06'), undefined, T('10-06'))]);
  h.clock.set(T('10-08'));
  await h.load([c('c5', T('10-05'), 'phase_1', undefined, { account_size: 100000 }), c('c2', T('10-01'), 'phase_2', T('10-07'))]);
  await h.load([c('c2', T('10-01'), 'funded', T('10-09')), c('c8', T('10-07'), 'phase_1', T('10-09'), { affiliate_id: 'aff-2' })]);
  await h.load([c('c8', T('10-07'), 'phase_2', T('10-10'), { affiliate_id: 'aff-2' }), c('c1', T('10-01'), 'funded', T('10-11'))]);
  await h.load([c('c3', T('10-02'), 'phase_2', T('10-12'), { challenge_type: 'rapid' })]);
  await h.load([c('c3', T('10-02'), 'failed', T('10-20'), { challenge_type: 'rapid' }), c('c8', T('10-07'), 'funded', T('10-20'), { affiliate_id: 'aff-2' })]);
  await h.load([c('c8', T('10-07'), 'failed', T('10-25'), { affiliate_id: 'aff-2' }), c('c6', T('10-05'), 'funded', T('10-30'), { challenge_type: 'instant_funding' })]);
  await h.load([c('c9', T('11-01'), 'failed', T('11-02')), c('c10', T('11-02'), 'phase_1', T('11-06'))]);
  await h.load([c('c10', T('11-02'), 'phase_1', T('11-07'))]); // same phase, newer version: nothing added
  await h.load([c('c10', T('11-02'), 'phase_2', T('11-10'))]);
  assert.equal(await h.load([c('c10', T('11-02'), 'phase_1', T('11-08'))]), 1, 'an older version is stale');
  // A backfill re-sending old versions of every stage, and a replay of the latest ones.
  assert.equal(await h.load([c('c1', T('10-01'), 'phase_1', T('10-02')), c('c2', T('10-01'), 'phase_2', T('10-07')), c('c8', T('10-07'), 'phase_2', T('10-10'), { affiliate_id: 'aff-2' })]), 3);
  await h.load([c('c1', T('10-01'), 'funded', T('10-11')), c('c9', T('11-01'), 'failed', T('11-02')), c('c6', T('10-05'), 'funded', T('10-30'), { challenge_type: 'instant_funding' })]);
}

const none = { phase_1: 0, phase_2: 0, funded: 0, unknown: 0 };

for (const backend of STORES) {
  describe(`report funnel by hand on ${backend.name}`, () => {
    let h: FunnelHarness;
    describe('ten customers loaded once', () => {
      before(async function () {
        this.timeout(60_000);
        h = await funnelHarness(backend);
        await loadTen(h);
      });
      after(async () => h.drop());

      it('ten customers: counts, failures per stage, conversions and median days as computed by hand', async () => {
        const [all] = await funnelReport(h.t.store.knex, { partner: 'firm' });
        assert.deepEqual(all, {
          signups: 10, phase_1: 8, phase_2: 6, funded: 4,
          failed: { phase_1: 1, phase_2: 1, funded: 1, unknown: 1 },
          conversion: { signup_phase_1: 0.8, phase_1_phase_2: 0.75, phase_2_funded: 0.6667, overall: 0.4 },
          // signup→phase_1: 0.5 1 1 2 2 3 4 (c6 unknown); phase_1→phase_2: 1 3 4 4 9.5; phase_2→funded: 2 6 10
          median_days: { signup_phase_1: 2, phase_1_phase_2: 4, phase_2_funded: 6 },
          median_of: { signup_phase_1: 7, phase_1_phase_2: 5, phase_2_funded: 3 },
        });
        const cohorts = await funnelReport(h.t.store.knex, { by: 'cohort' });
        assert.deepEqual(cohorts.map((r) => [r.group, r.signups, r.phase_1, r.phase_2, r.funded, r.failed, r.median_days]), [
          // October: signup→phase_1 0.5 1 1 2 2 3 → 1.5; phase_1→phase_2 1 3 4 9.5 → 3.5
          ['2026-10', 8, 7, 5, 4, { phase_1: 1, phase_2: 1, funded: 1, unknown: 0 }, { signup_phase_1: 1.5, phase_1_phase_2: 3.5, phase_2_funded: 6 }],
          ['2026-11', 2, 1, 1, 0, { ...none, unknown: 1 }, { signup_phase_1: 4, phase_1_phase_2: 4, phase_2_funded: null }],
        ]);
        const affiliates = await funnelReport(h.t.store.knex, { by: 'affiliate' });
        assert.deepEqual(affiliates.map((r) => [r.group, r.signups, r.phase_1, r.phase_2, r.funded, r.conversion.overall]), [
          ['aff-1', 8, 6, 5, 3, 0.375], ['aff-2', 2, 2, 1, 1, 0.5],
        ]);
        const sizes = await funnelReport(h.t.store.knex, { by: 'account_size', from: '2026-10-01', to: '2026-10-31' });
        assert.deepEqual(sizes.map((r) => [r.group, r.signups, r.phase_1, r.median_days.signup_phase_1]), [['50000', 7, 6, 1], ['100000', 1, 1, 3]]);
        for (const by of [undefined, 'affiliate', 'challenge_type', 'account_size', 'cohort'] as const) {
          assert.deepEqual(await funnelReport(h.t.store.knex, { by }), expectedFunnel(await factsBySql(h.t), by), `by ${by ?? 'nothing'}`);
        }
      });

      it('the phase history: inferred stages without a time, the stage a failure happened at, nothing twice', async () => {
        const history = async (id: string) => (await h.t.store.knex('phase_history').where({ partner_id: 'firm', customer_id: id }).orderBy('seq')
          .select('seq', 'phase', 'observed_at', 'time_source', 'failed_from')).map((r: Record<string, unknown>) => [Number(r.seq), r.phase, r.observed_at, r.time_source, r.failed_from]);
        assert.deepEqual(await history('c6'), [
          [1, 'phase_1', null, 'inferred', null], [2, 'phase_2', null, 'inferred', null], [3, 'funded', '2026-10-30T00:00:00.000000Z', 'last_modified_date', null],
        ]);
        assert.deepEqual(await history('c8'), [
          [1, 'phase_1', '2026-10-09T00:00:00.000000Z', 'last_modified_date', null], [2, 'phase_2', '2026-10-10T00:00:00.000000Z', 'last_modified_date', null],
          [3, 'funded', '2026-10-20T00:00:00.000000Z', 'last_modified_date', null], [4, 'failed', '2026-10-25T00:00:00.000000Z', 'last_modified_date', 'funded'],
        ]);
        assert.deepEqual(await history('c5'), [[1, 'phase_1', '2026-10-08T00:00:00.000000Z', 'loaded_at', null]]);
        assert.deepEqual(await history('c9'), [[1, 'failed', '2026-11-02T00:00:00.000000Z', 'last_modified_date', null]]);
        assert.deepEqual(await history('c10'), [
          [1, 'phase_1', '2026-11-06T00:00:00.000000Z', 'last_modified_date', null], [2, 'phase_2', '2026-11-10T00:00:00.000000Z', 'last_modified_date', null],
        ]);
        assert.deepEqual(await history('c7'), []);
        const [{ n }] = (await h.t.store.knex('phase_history').count({ n: '*' })) as [{ n: number | string }];
        assert.equal(Number(n), 22);

        const failedAtPhase2 = await funnelExplain(h.t.store.knex, { partner: 'firm' }, 'failed_phase_2');
        assert.deepEqual(failedAtPhase2.map((c) => [c.customer_id, c.challenge_type, c.history.map((e) => e.phase)]), [['c3', 'rapid', ['phase_1', 'phase_2', 'failed']]]);
        const fundedAff2 = await funnelExplain(h.t.store.knex, { by: 'affiliate' }, 'funded', 'aff-2');
        assert.deepEqual(fundedAff2.map((c) => c.customer_id), ['c8']);
        // The median phase_1 → phase_2 (4 days) over the customers it is taken over, in order of their days.
        const median = await funnelExplain(h.t.store.knex, {}, 'days_phase_1_phase_2');
        assert.deepEqual(median.map((c) => [c.customer_id, c.days]), [['c8', 1], ['c1', 3], ['c10', 4], ['c2', 4], ['c3', 9.5]]);
      });
    });

    describe('a store of its own per test', () => {
      beforeEach(async () => { h = await funnelHarness(backend); });
      afterEach(async () => h.drop());

      it('a store loaded before the funnel existed: the migration seeds each customer at its stored phase', async () => {
        h.clock.set(T('11-05', '08:00:00'));
        await h.load([
          trader('s1', T('11-01'), { phase: 'funded', last_modified_date: T('11-04') }),
          trader('s2', T('11-01'), { phase: 'phase_1' }),
          trader('s3', T('11-02'), { phase: 'failed', last_modified_date: T('11-03') }),
          trader('s4', T('11-02')),
        ]);
        const loaded = await funnelReport(h.t.store.knex, { by: 'cohort' });
        await h.t.store.knex('phase_history').delete();
        await h.t.store.knex('funnel_customers').delete();
        await h.t.store.knex.transaction((trx) => seedPhaseHistory(trx, h.t.store.clock));
        const history = (await h.t.store.knex('phase_history').orderBy([{ column: 'customer_id' }, { column: 'seq' }]).select('customer_id', 'phase', 'observed_at', 'time_source'))
          .map((r: Record<string, unknown>) => [r.customer_id, r.phase, r.observed_at, r.time_source]);
        assert.deepEqual(history, [
          ['s1', 'phase_1', null, 'inferred'], ['s1', 'phase_2', null, 'inferred'], ['s1', 'funded', '2026-11-04T00:00:00.000000Z', 'last_modified_date'],
          ['s2', 'phase_1', '2026-11-05T08:00:00.000000Z', 'loaded_at'],
          ['s3', 'failed', '2026-11-03T00:00:00.000000Z', 'last_modified_date'],
        ]);
        assert.deepEqual(await funnelReport(h.t.store.knex, { by: 'cohort' }), loaded);
        assert.deepEqual(loaded.map((r) => [r.signups, r.phase_1, r.funded, r.failed.unknown, r.median_days.signup_phase_1]), [[4, 2, 1, 1, 4.33]]);
      });

      it('a phase change shows in the funnel as soon as its batch commits', async () => {
        await h.load([trader('t1', T('11-01'), { phase: 'phase_1', last_modified_date: T('11-02') })]);
        const before = await funnelReport(h.t.store.knex, {});
        assert.deepEqual(before.map((r) => [r.phase_1, r.phase_2, r.funded]), [[1, 0, 0]]);
        // The funnel is written inside the load transaction: a batch that fails leaves it as it was.
        await assert.rejects(h.loader.transaction(async (tx) => {
          await tx.load({ partner: 'firm', variant: 'prop-trading', entity: 'customers', runId: 'r-x', records: [{ position: 1, value: trader('t1', T('11-01'), { phase: 'phase_2', last_modified_date: T('11-03') }) }] });
          throw new Error('crash before the commit');
        }), /crash before the commit/);
        assert.deepEqual((await funnelReport(h.t.store.knex, {})).map((r) => [r.phase_1, r.phase_2, r.funded]), [[1, 0, 0]]);
        await h.load([trader('t1', T('11-01'), { phase: 'phase_2', last_modified_date: T('11-03') })]);
        const after = await funnelReport(h.t.store.knex, {});
        assert.deepEqual(after.map((r) => [r.phase_1, r.phase_2, r.funded, r.median_days.phase_1_phase_2]), [[1, 1, 0, 1]]);
      });
    });
  });
}

describe('report funnel on the command line', () => {
  let dir: string;
  let store: string;
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    const value: Io = { out: (s) => out.push(s), err: (s) => err.push(s), stdin: process.stdin, isTty: false };
    return { value, out, err };
  };
  const report = async (...args: string[]) => {
    const captured = io();
    const code = await main(['--store', store, 'report', 'funnel', ...args], captured.value);
    return { code, out: captured.out.join('\n'), err: captured.err.join('\n') };
  };
  before(async function () {
    this.timeout(60_000);
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-funnel-'));
    store = `sqlite:${join(dir, 'store.sqlite')}`;
    const file = join(dir, 'customers.ndjson');
    writeFileSync(file, [
      trader('a1', T('10-01'), { phase: 'phase_2', last_modified_date: T('10-04') }),
      trader('a2', T('10-02'), { phase: 'failed', last_modified_date: T('10-04'), affiliate_id: 'aff-2', challenge_type: 'rapid' }),
      trader('a3', T('10-03'), { phase: 'phase_1', last_modified_date: T('10-05') }),
    ].map((r) => JSON.stringify(r)).join('\n') + '\n');
    // Loaded by the real CLI (its Loader carries every after-load job); then a phase change.
    const loaded = await runCli(['--store', store, 'import', 'firm', '--variant', 'prop-trading', '--entity', 'customers', file]);
    assert.equal(loaded.code, 0, loaded.stderr);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a table, JSON and CSV of the same figures; --explain lists the customers behind a cell with their phases', async () => {
    const table = await report('--by', 'challenge_type');
    assert.equal(table.code, 0, table.err);
    assert.equal(table.out.split('\n').slice(0, 3).join('\n'), [
      'CHALLENGE_TYPE  SIGNUPS  PHASE_1  PHASE_2  FUNDED  FAILED P1/P2/F/?  S→P1    P1→P2  P2→F  OVERALL  DAYS S→P1  P1→P2  P2→F',
      'rapid           1        0        0        0       0/0/0/1           0.0%    -      -     0.0%     -          -      -',
      'standard        2        2        1        0       0/0/0/0           100.0%  50.0%  0.0%  0.0%     2.00       -      -',
    ].join('\n'));
    const json = await report('--json', '--affiliate', 'aff-1');
    assert.deepEqual(JSON.parse(json.out), {
      filter: { affiliate: 'aff-1' },
      rows: [{
        signups: 2, phase_1: 2, phase_2: 1, funded: 0, failed: { phase_1: 0, phase_2: 0, funded: 0, unknown: 0 },
        conversion: { signup_phase_1: 1, phase_1_phase_2: 0.5, phase_2_funded: 0, overall: 0 },
        median_days: { signup_phase_1: 2, phase_1_phase_2: null, phase_2_funded: null },
        median_of: { signup_phase_1: 1, phase_1_phase_2: 0, phase_2_funded: 0 },
      }],
    });
    const csv = await report('--csv', '--by', 'cohort');
    assert.equal(csv.out, [
      'cohort,signups,phase_1,phase_2,funded,failed_phase_1,failed_phase_2,failed_funded,failed_unknown,conversion_signup_phase_1,conversion_phase_1_phase_2,conversion_phase_2_funded,conversion_overall,median_days_signup_phase_1,median_days_phase_1_phase_2,median_days_phase_2_funded',
      '2026-10,3,2,1,0,0,0,0,1,0.6667,0.5,0,0,2,,',
    ].join('\n'));
    const explained = await report('--by', 'affiliate', '--explain', 'phase_1', '--group', 'aff-1');
    assert.equal(explained.out, [
      '2 customer(s) behind phase_1 for affiliate aff-1',
      'PARTNER  CUSTOMER  AFFILIATE  CHALLENGE  SIZE   SIGNUP                PHASE HISTORY',
      'firm     a1        aff-1      standard   50000  2026-10-01T00:00:00Z  phase_1@unknown → phase_2@2026-10-04T00:00:00Z',
      'firm     a3        aff-1      standard   50000  2026-10-03T00:00:00Z  phase_1@2026-10-05T00:00:00Z',
    ].join('\n'));
  });

  it('bad usage: exit 2 and what is wrong', async () => {
    assert.deepEqual(await report('--by', 'week'), { code: 2, out: '', err: 'partner-sync: --by must be one of affiliate, challenge_type, account_size, cohort, got "week"' });
    assert.deepEqual(await report('--from', '2026-13-01'), { code: 2, out: '', err: 'partner-sync: --from must be a day YYYY-MM-DD (UTC), got "2026-13-01"' });
    assert.deepEqual(await report('--by', 'cohort', '--explain', 'funded'), { code: 2, out: '', err: 'partner-sync: --explain with --by cohort needs --group VALUE (the row\'s cohort; (none) for customers without one)' });
    assert.deepEqual(await report('--explain', 'paid'), { code: 2, out: '', err: 'partner-sync: --explain must name a cell: signup, phase_1, phase_2, funded, failed_phase_1, failed_phase_2, failed_funded, failed_unknown, days_signup_phase_1, days_phase_1_phase_2, days_phase_2_funded; got "paid"' });
  });
});
