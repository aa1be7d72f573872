/**
 * Retention (docs/personal-data.md, "Retention"): `purge` removes delivered postback events,
 * resolved rejects and old runs past their days, keeps each stream's latest runs, open rejects and
 * undelivered events; `--dry-run` counts and removes nothing; the ledger is the same row for row
 * and `commissions recompute` still agrees. In transactions of `--batch` rows.
 */
import { strict as assert } from 'node:assert';
import { recompute } from '../../src/commission/recompute.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { packageRoot } from '../../src/paths.js';
import { DEFAULT_RETENTION, parseRetention, purge } from '../../src/privacy/retention.js';
import { runCli } from '../support/cli.js';
import { cust, tx } from '../fraud/harness.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CPA, plansFrom, plansYaml } from '../support/plans.js';
import { raw } from '../support/records.js';
import { fixedClock, STORES } from '../support/stores.js';

for (const backend of STORES) {
  describe(`purge (${backend.name})`, () => {
    it('removes what is past its retention, keeps the latest runs, open rejects and undelivered events; --dry-run removes nothing; the ledger and recompute unchanged', async () => {
      const clock = fixedClock('2026-06-01T10:00:00.000Z');
      const t = await backend.create(clock);
      try {
        const plans = plansFrom(plansYaml(CPA));
        const loader = loaderWithEveryJob(t.store, { plans });
        const load = (entity: 'customers' | 'transactions', records: object[]) => loader.load({ partner: 'casino', variant: 'igaming', entity, runId: `r-${entity}`, records: raw(records as never) });
        await load('customers', [cust('c1'), cust('c2'), { customer_id: 'bad', signup_date: 'not a date', affiliate_id: 'aff-1' }, { customer_id: 'bad2', signup_date: 'nope', affiliate_id: 'aff-1' }]);
        await load('transactions', [tx('t1', 'c1', 'deposit', 50, '2026-05-02T10:00:00Z'), tx('t2', 'c2', 'deposit', 70, '2026-05-03T10:00:00Z')]);
        const knex = t.store.knex;
        const ledger = async () => knex('commission_ledger').orderBy('id').select('line_key', 'affiliate_id', 'amount_usd', 'reason', 'period');
        const lines = await ledger();
        assert.equal(lines.length, 2, 'two CPA lines');
        // One reject resolved long ago, one still open.
        const [first] = (await knex('rejects').orderBy('id').select('id')) as { id: number }[];
        await knex('rejects').where('id', first!.id).update({ status: 'discarded', resolved_at: '2026-01-10T00:00:00.000Z', resolution: 'discarded' });
        // Runs of one stream: two old, the latest kept; the latest completed one is kept too.
        const run = (id: string, status: string, at: string) => ({ id, partner_id: 'casino', stream: 'customers', kind: 'run', status, started_at: at, finished_at: at });
        await knex('runs').insert([run('old-1', 'succeeded', '2025-01-01T00:00:00.000Z'), run('old-2', 'succeeded', '2025-02-01T00:00:00.000Z'), run('old-3', 'failed', '2025-03-01T00:00:00.000Z')]);
        await knex('postbacks').insert({ id: 'pb1', affiliate_id: 'aff-1', events: 'ftd', method: 'GET', url: 'https://tracker.example/p', rate_per_second: 10, secret_salt: 's', created_at: '2026-01-01T00:00:00.000Z' });
        const event = (n: number, state: string, delivered: string | null) => ({
          event_id: `e${n}`, postback_id: 'pb1', fact_key: `f${n}`, kind: 'ftd', order_key: `o${n}`, partner_id: 'casino', customer_id: 'c1', affiliate_id: 'aff-1',
          data: JSON.stringify({ n }), state, next_attempt_at: '2026-01-01T00:00:00.000Z', window_start: '2026-01-01T00:00:00.000Z', created_at: '2026-01-01T00:00:00.000Z', delivered_at: delivered,
        });
        await knex('postback_events').insert([event(1, 'delivered', '2026-01-02T00:00:00.000Z'), event(2, 'delivered', '2026-01-03T00:00:00.000Z'), event(3, 'dead', null), event(4, 'delivered', '2026-05-31T00:00:00.000Z')]);

        clock.set('2026-06-01T10:00:00.000Z');
        const dry = await purge(t.store, DEFAULT_RETENTION, { dryRun: true });
        assert.deepEqual(dry.results.map((r) => [r.kind, r.due, r.purged]), [['delivered_postback_events', 2, 0], ['resolved_rejects', 1, 0], ['run_history', 1, 0]]);
        assert.equal(Number(((await knex('postback_events').count({ n: '*' }))[0] as { n: number | string }).n), 4, 'a dry run removes nothing');

        const done = await purge(t.store, DEFAULT_RETENTION, { batch: 1 });
        assert.deepEqual(done.results.map((r) => [r.kind, r.due, r.purged]), [['delivered_postback_events', 2, 2], ['resolved_rejects', 1, 1], ['run_history', 1, 1]]);
        assert.equal(done.more, false);
        assert.deepEqual((await knex('postback_events').orderBy('seq').pluck('event_id')), ['e3', 'e4'], 'the dead and the recent event stay');
        assert.deepEqual((await knex('rejects').pluck('status')), ['open']);
        assert.deepEqual((await knex('runs').whereLike('id', 'old-%').orderBy('id').pluck('id')), ['old-2', 'old-3'], 'the latest run and the latest completed run of the stream stay');
        assert.deepEqual(await ledger(), lines);
        const [again] = await recompute(t.store, plans, { runId: 'recompute-1' });
        assert.equal(again?.differences.length, 0);
        assert.deepEqual((await purge(t.store)).results.map((r) => r.due), [0, 0, 0], 'nothing more is due');
      } finally {
        await t.drop();
      }
    });
  });
}

describe('retention settings', () => {
  it('the shipped config/retention.yaml states the defaults; a wrong key or value is an error naming file and key', () => {
    const file = join(packageRoot(), 'config', 'retention.yaml');
    assert.deepEqual(parseRetention(parseYaml(readFileSync(file, 'utf8')), file), { retention: DEFAULT_RETENTION, errors: [] });
    assert.deepEqual(parseRetention({ resolved_rejects: 0, runs: 3 }, 'r.yaml').errors, ['r.yaml: resolved_rejects: must be a whole number of days from 1, got 0', 'r.yaml: runs: unknown key; allowed keys: delivered_postback_events, resolved_rejects, run_history']);
  });

  it('partner-sync purge --dry-run --json on the shipped settings: what would go, per kind, and nothing removed', async () => {
    const t = await STORES[0]!.create();
    try {
      const r = await runCli(['--store', t.url, 'purge', '--dry-run', '--json']);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { dry_run: boolean; results: { kind: string; due: number }[] };
      assert.deepEqual([out.dry_run, out.results.map((x) => [x.kind, x.due])], [true, [['delivered_postback_events', 0], ['resolved_rejects', 0], ['run_history', 0]]]);
    } finally {
      await t.drop();
    }
  });
});
