/**
 * The commission commands as a user runs them (subprocesses of the built CLI), on every store:
 * a transaction re-sent with another customer or day, recompute filters and what a repair may
 * take of the pending scope, and the report's wording. Amounts are computed by hand.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyScope, writePending } from '../../src/commission/scope.js';
import { runCli, type CliResult } from '../support/cli.js';
import { CPA, CPA_FROM_20, plansYaml, planWith, REVSHARE } from '../support/plans.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

const PLANS = plansYaml(
  planWith(CPA_FROM_20, { id: 'cpa1', partner: 'p1', amount_usd: '{ default: 100, by_country: { DE: 150 } }' }),
  planWith(REVSHARE, { id: 'rs1', partner: 'p1', revenue: 'ngr' }),
  planWith(CPA, { id: 'cpa2', partner: 'p2', amount_usd: '{ default: 40 }' }),
);

const customer = (id: string, extra: Record<string, unknown> = {}) => ({ customer_id: id, signup_date: '2026-09-01T09:30:00Z', affiliate_id: 'aff-1', country_code: 'GB', ...extra });
const deposit = (id: string, customerId: string, amount: number, date: string, extra: Record<string, unknown> = {}) =>
  ({ transaction_id: id, customer_id: customerId, transaction_type: 'deposit', amount_currency: amount, currency: 'USD', transaction_date: date, status: 'approved', ...extra });

interface Totals { totals: { partner: string; affiliate: string; month: string; plan_id: string; amount_usd: string; earned: string; clawed_back: string }[]; lines: { customer_id: string | null; reason: string; amount_usd: string; period: string }[] }

// The CLI's text and exit codes once, on the first store: the money behind them runs on every store in
// test/commission/prior-versions.test.ts and recompute-lock.test.ts.
for (const backend of STORES.slice(0, 1)) {
  describe(`commission commands (subprocess) on ${backend.name}`, function () {
    this.timeout(120_000);
    let dir: string;
    let config: string;
    let t: TestStore;
    // The commands' day, whatever day the suite runs on (each subprocess starts its clock there).
    const clock = fixedClock('2026-11-20T10:00:00.000Z');
    const cli = (args: string[], at = clock): Promise<CliResult> => runCli(['--config', config, ...args], { env: { STORE_URL: t.url, LOG_LEVEL: 'warn' }, clock: at });
    const file = (name: string, records: unknown[]): string => {
      const path = join(dir, name);
      writeFileSync(path, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
      return path;
    };
    const importOk = async (partner: string, entity: string, records: unknown[]): Promise<CliResult> => {
      const r = await cli(['import', partner, '--variant', 'igaming', '--entity', entity, file(`${partner}-${entity}-${Date.now()}.ndjson`, records)]);
      assert.equal(r.code, 0, r.stderr);
      return r;
    };
    const plans = () => writeFileSync(join(config, 'commissions.yaml'), PLANS);
    const report = async (args: string[] = []): Promise<Totals> => {
      const r = await cli(['commissions', '--lines', '--json', ...args]);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as Totals;
    };
    const pendingEntries = async (partner: string): Promise<number> =>
      Number((await t.store.knex('commission_pending').where('partner_id', partner).count({ n: '*' }))[0]?.n);

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-commissions-'));
      config = join(dir, 'config');
      mkdirSync(config);
      t = await backend.create(clock);
    });
    afterEach(async () => {
      await t.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('a deposit re-imported with another customer moves its CPA; a bonus re-dated takes its deduction along; recompute agrees', async () => {
      plans();
      await importOk('p1', 'customers', [customer('a'), customer('b', { country_code: 'DE' })]);
      await importOk('p1', 'transactions', [deposit('t1', 'a', 50, '2026-10-02T12:00:00Z')]);
      await importOk('p1', 'transactions', [deposit('t1', 'b', 50, '2026-10-02T12:00:00Z')]);
      const cpa = await report(['--plan', 'cpa1']);
      // a: +100 on t1, −100 once t1 is b's; b (DE): +150.
      assert.deepEqual(cpa.lines.map((l) => [l.customer_id, l.reason, l.amount_usd]), [['a', 'cpa_ftd', '100.00'], ['a', 'cpa_correction', '-100.00'], ['b', 'cpa_ftd', '150.00']]);
      // Both customers are aff-1's: October earned 100 + 150; the correction is booked in the month it is learned.
      assert.deepEqual(cpa.totals.map((x) => [x.month, x.amount_usd, x.earned, x.clawed_back]), [['2026-10', '250.00', '250.00', '0.00'], ['2026-11', '-100.00', '0.00', '-100.00']]);

      await importOk('p1', 'activity', [{ date: '2026-11-03', customer_id: 'a', game_type: 'slots', currency: 'USD', ggr: 500 }]);
      await importOk('p1', 'transactions', [{ ...deposit('b1', 'a', 100, '2026-11-03T15:00:00Z'), transaction_type: 'bonus' }]);
      await importOk('p1', 'transactions', [{ ...deposit('b1', 'a', 100, '2026-11-04T15:00:00Z'), transaction_type: 'bonus' }]);
      // 500 × 25% = 125.00; (500 − 100) × 25% = 100.00; the bonus moved to a day without activity: 125.00.
      const rs = await report(['--plan', 'rs1']);
      assert.deepEqual(rs.lines.map((l) => l.amount_usd), ['125.00', '-25.00', '25.00']);
      assert.deepEqual(rs.totals.map((x) => [x.month, x.amount_usd, x.earned, x.clawed_back]), [['2026-11', '125.00', '150.00', '-25.00']]);
      const check = await cli(['commissions', 'recompute']);
      assert.equal(check.code, 0, check.stdout + check.stderr);
      assert.match(check.stdout, /the ledger agrees with a rebuild from history, to the cent/);
    });

    it('a RevShare month is open until its end plus 6 h by the process clock, then closed; a test clock without its switch is a usage error', async () => {
      plans();
      await importOk('p1', 'customers', [customer('a')]);
      await importOk('p1', 'activity', [{ date: '2026-11-03', customer_id: 'a', game_type: 'slots', currency: 'USD', ggr: 400, ngr: 400 }]);
      const states = async (at: string) => {
        const r = await cli(['commissions', '--json', '--plan', 'rs1'], fixedClock(at));
        assert.equal(r.code, 0, r.stderr);
        return (JSON.parse(r.stdout) as { totals: { month: string; month_state: string; amount_usd: string }[] }).totals.map((x) => [x.month, x.month_state, x.amount_usd]);
      };
      // 400 × 25% = 100.00 whatever the day; the month closes at 2026-12-01T06:00:00Z.
      // (A minute before: the test clock runs on from its start, and a loaded machine may take seconds to reach the report.)
      assert.deepEqual(await states('2026-12-01T05:59:00.000Z'), [['2026-11', 'open', '100.00']]);
      assert.deepEqual(await states('2026-12-01T06:00:00.000Z'), [['2026-11', 'closed', '100.00']]);
      assert.deepEqual(await states('2031-01-01T00:00:00.000Z'), [['2026-11', 'closed', '100.00']]);
      const unswitched = await runCli(['--config', config, 'commissions'], { env: { STORE_URL: t.url, PARTNER_SYNC_TEST: '', PARTNER_SYNC_TEST_NOW: '2026-12-01T05:00:00Z' } });
      assert.equal(unswitched.code, 2);
      assert.equal(unswitched.stderr.trim(), "partner-sync: PARTNER_SYNC_TEST_NOW is set (2026-12-01T05:00:00Z) but PARTNER_SYNC_TEST is not 1: the test clock is for tests only; unset PARTNER_SYNC_TEST_NOW to run on the machine's clock");
      const zoneless = await runCli(['--config', config, 'commissions'], { env: { STORE_URL: t.url, PARTNER_SYNC_TEST: '1', PARTNER_SYNC_TEST_NOW: '2026-12-01 05:00' } });
      assert.equal(zoneless.code, 2);
      assert.equal(zoneless.stderr.trim(), 'partner-sync: PARTNER_SYNC_TEST_NOW must be an RFC 3339 date-time with a zone such as 2026-11-22T10:00:00Z, got "2026-12-01 05:00"');
    });

    it('recompute --partner and --month limit what is recomputed and repaired; a month repair leaves the pending scope it did not evaluate', async () => {
      // Loaded before any plan existed: nothing booked, so every key differs once plans arrive.
      await importOk('p1', 'customers', [customer('a')]);
      await importOk('p1', 'transactions', [deposit('t1', 'a', 50, '2026-10-02T12:00:00Z')]);
      await importOk('p2', 'customers', [customer('x'), customer('y')]);
      await importOk('p2', 'transactions', [deposit('tx', 'x', 10, '2026-09-05T12:00:00Z'), deposit('ty', 'y', 10, '2026-10-05T12:00:00Z')]);
      plans();
      const json = async (args: string[], code: number) => {
        const r = await cli(['commissions', 'recompute', '--json', ...args]);
        assert.equal(r.code, code, r.stdout + r.stderr);
        return JSON.parse(r.stdout) as { partners: { partner: string; differences: { customer: string; difference_usd: string }[] }[] };
      };
      const differing = (out: Awaited<ReturnType<typeof json>>) => out.partners.map((p) => [p.partner, p.differences.map((d) => `${d.customer} ${d.difference_usd}`)]);

      assert.deepEqual(differing(await json(['--partner', 'p1'], 1)), [['p1', ['a 100.00']]]);
      assert.deepEqual(differing(await json(['--partner', 'p1', '--repair'], 0)), [['p1', ['a 100.00']]]);
      assert.deepEqual((await report()).lines.map((l) => [l.customer_id, l.amount_usd]), [['a', '100.00']]);
      assert.deepEqual(differing(await json([], 1)), [['p1', []], ['p2', ['x 40.00', 'y 40.00']]]);

      // A crash between a load's commit and its evaluation left y's scope pending.
      const scope = emptyScope('p2', 'igaming', 'crashed');
      scope.customers.add('y');
      await t.store.transaction((trx) => writePending(trx, scope, t.store.now()));
      assert.deepEqual(differing(await json(['--partner', 'p2', '--month', '2026-09', '--repair'], 0)), [['p2', ['x 40.00']]]);
      assert.deepEqual((await report(['--partner', 'p2'])).lines.map((l) => [l.customer_id, l.period, l.amount_usd]), [['x', '2026-09', '40.00']]);
      assert.equal(await pendingEntries('p2'), 1, 'y was not evaluated: its pending scope stays');
      // The filter written before the subcommand is the same filter.
      const before = await cli(['commissions', '--partner', 'p2', '--month', '2026-10', 'recompute', '--json']);
      assert.equal(before.code, 1);
      assert.deepEqual(differing(JSON.parse(before.stdout)), [['p2', ['y 40.00']]]);
      assert.deepEqual(differing(await json(['--partner', 'p2', '--repair'], 0)), [['p2', ['y 40.00']]]);
      assert.equal(await pendingEntries('p2'), 0, 'a whole-partner repair evaluated y');
      assert.deepEqual(differing(await json([], 0)), [['p1', []], ['p2', []]]);

      for (const args of [['--partner', 'nonexistent'], ['--partner', 'nonexistent', '--repair']]) {
        const r = await cli(['commissions', 'recompute', ...args]);
        assert.equal(r.code, 2);
        assert.match(r.stderr, /unknown partner nonexistent: nothing is loaded for it and it has no ledger lines \(partners in the store: p1, p2\)/);
      }
      assert.equal((await report()).lines.length, 3);
    });

    it('recompute --affiliate (before or after the subcommand) compares and repairs only that affiliate\'s keys', async () => {
      await importOk('p2', 'customers', [customer('x'), customer('y', { affiliate_id: 'aff-2' })]);
      await importOk('p2', 'transactions', [deposit('tx', 'x', 10, '2026-09-05T12:00:00Z'), deposit('ty', 'y', 10, '2026-10-05T12:00:00Z')]);
      plans();
      const differing = (stdout: string) => (JSON.parse(stdout) as { partners: { partner: string; differences: { customer: string; affiliate: string }[] }[] })
        .partners.map((p) => [p.partner, p.differences.map((d) => `${d.affiliate} ${d.customer}`)]);
      for (const args of [['commissions', '--affiliate', 'aff-2', 'recompute'], ['commissions', 'recompute', '--affiliate', 'aff-2']]) {
        const r = await cli([...args, '--partner', 'p2', '--json']);
        assert.equal(r.code, 1, r.stdout + r.stderr);
        assert.deepEqual(differing(r.stdout), [['p2', ['aff-2 y']]]);
      }
      const repaired = await cli(['commissions', 'recompute', '--partner', 'p2', '--affiliate', 'aff-2', '--repair', '--json']);
      assert.equal(repaired.code, 0, repaired.stdout + repaired.stderr);
      assert.deepEqual((await report(['--partner', 'p2'])).lines.map((l) => [l.customer_id, l.amount_usd]), [['y', '40.00']], 'aff-1\'s key was not repaired');
      const rest = await cli(['commissions', 'recompute', '--partner', 'p2', '--json']);
      assert.equal(rest.code, 1);
      assert.deepEqual(differing(rest.stdout), [['p2', ['aff-1 x']]]);
    });

    it('says what is true when there is nothing to recompute; status without a partners folder does not warn', async () => {
      plans();
      const r = await cli(['commissions', 'recompute']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), 'nothing to recompute: plans exist for partners p1, p2 but nothing is loaded for them yet');
      const status = await cli(['status']);
      assert.equal(status.code, 0, status.stderr);
      assert.doesNotMatch(status.stderr, /ENOENT|warning/);
      assert.match(status.stdout, /no partners yet/);
      const check = await cli(['status', '--check', '--json']);
      assert.equal(check.code, 0, check.stderr);
      assert.deepEqual(JSON.parse(check.stdout).definition_errors, []);
      await importOk('p2', 'customers', [customer('x')]);
      const after = await cli(['status']);
      assert.doesNotMatch(after.stderr, /ENOENT|warning/);
      assert.match(after.stdout, /note: no connector definitions \(.*partners does not exist\): only imported data is shown/);
    });

    it('import says how many distinct records a file with repeats held', async () => {
      const records = [customer('c1'), customer('c2'), customer('c1', { affiliate_id: 'aff-9' }), customer('c3'), customer('c2', { country_code: 'DE' })];
      const text = await cli(['import', 'p1', '--variant', 'igaming', '--entity', 'customers', file('c.ndjson', records)]);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /5 records, 5 loaded \(3 distinct records; 2 repeated in the file: last version kept\), 0 rejected/);
      const json = await cli(['import', 'p1', '--variant', 'igaming', '--entity', 'customers', '--json', file('c2.ndjson', [...records, { customer_id: 'bad' }])]);
      assert.deepEqual((({ total, loaded, rejected, distinct }) => ({ total, loaded, rejected, distinct }))(JSON.parse(json.stdout)), { total: 6, loaded: 5, rejected: 1, distinct: 3 });
      const stored: { customer_id: string; affiliate_id: string; country_code: string }[] = await t.store.knex('customers').where('partner_id', 'p1').orderBy('customer_id').select('customer_id', 'affiliate_id', 'country_code');
      assert.deepEqual(stored.map((c) => [c.customer_id, c.affiliate_id, c.country_code]), [['c1', 'aff-9', 'GB'], ['c2', 'aff-1', 'DE'], ['c3', 'aff-1', 'GB']]);
    });
  });
}
