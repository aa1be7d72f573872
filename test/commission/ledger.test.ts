import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { commissionsCommand, commissionsRecomputeCommand } from '../../src/cli/commands/commissions.js';
import { fxImportCommand } from '../../src/cli/commands/fx.js';
import { statusCommand } from '../../src/cli/commands/status.js';
import type { Io } from '../../src/cli/io.js';
import { commissionJob } from '../../jobs/commission.js';
import { resumeJobs } from '../../jobs/load-hooks.js';
import { evaluateScope } from '../../src/commission/engine.js';
import { addDay, emptyScope, savePending } from '../../src/commission/scope.js';
import { parseRatesCsv } from '../../src/store/fx-rates.js';
import { commissionHoldSummary } from '../../src/commission/ledger.js';
import { cents, money } from '../../src/kernel/money.js';
import { silentLogger } from '../../src/log.js';
import { loaderWith } from '../support/loader.js';
import { CPA, plansYaml, REVSHARE } from '../support/plans.js';
import { STORES } from '../support/stores.js';
import { harness, igCustomer, play, tx, type Harness } from './harness.js';

const PLANS = plansYaml(CPA, REVSHARE);

function captureIo(): Io & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), stdin: new PassThrough(), isTty: false };
}

describe('commission money and FX files', () => {
  it('rounds each line half to even to the cent, exactly', () => {
    assert.deepEqual(['0.125', '0.135', '2.675', '-0.125', '1.005', '0.1', '123456789012345.675'].map((v) => cents(money(v)).toFixed(2)),
      ['0.12', '0.14', '2.68', '-0.12', '1.00', '0.10', '123456789012345.68']);
    // No binary float drift: 0.1 + 0.2 is 0.3.
    assert.equal(money(0.1).plus(money(0.2)).toFixed(), '0.3');
  });

  it('a rates file is checked line by line: header, day, currency, rate, one rate per currency and day', () => {
    assert.deepEqual(parseRatesCsv('currency,rate\nEUR,1\n').problems, [{ line: 1, message: 'the header must name the columns date, currency, rate; missing date (got currency,rate)' }]);
    const { rates, problems } = parseRatesCsv([
      'date,currency,rate', '2026-11-02,EUR,1.0734', '2026-02-30,EUR,1', '2026-11-02,eur,1', '2026-11-03,GBP,0', '2026-11-03,GBP,-1.2',
      '2026-11-02,EUR,1.0735', '2026-11-02,EUR,1.0734', '2026-11-02,USD,1.01', '', '2026-11-04,JPY,1.0666666666666667',
    ].join('\r\n'));
    assert.deepEqual(rates.map((r) => [r.date, r.currency, r.rate.toFixed()]), [['2026-11-02', 'EUR', '1.0734']]);
    assert.deepEqual(problems, [
      { line: 3, message: 'date must be a real day YYYY-MM-DD, got "2026-02-30"' },
      { line: 4, message: 'currency must be an ISO 4217 code such as EUR, got "eur"' },
      { line: 5, message: 'rate must be a positive decimal number (USD per one GBP), got "0"' },
      { line: 6, message: 'rate must be a positive decimal number (USD per one GBP), got "-1.2"' },
      { line: 7, message: 'EUR 2026-11-02 already has rate 1.0734 on line 2; one rate per currency and day' },
      { line: 9, message: 'the rate of USD is 1 by definition, got 1.01' },
      { line: 11, message: 'rate has more than 15 significant digits: 1.0666666666666667' },
    ]);
  });
});

for (const backend of STORES) {
  describe(`commission ledger and commands on ${backend.name}`, () => {
    let h: Harness;
    let dir: string;
    beforeEach(async () => {
      h = await harness(backend, PLANS);
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-commission-cli-'));
      writeFileSync(join(dir, 'commissions.yaml'), PLANS);
    });
    afterEach(async () => {
      await h.drop();
      rmSync(dir, { recursive: true, force: true });
    });
    const globals = (json = true) => ({ config: dir, store: h.t.url, json, clock: h.clock });

    it('the ledger is append-only: the store refuses UPDATE and DELETE', async () => {
      await h.load('customers', [igCustomer('c1')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50)]);
      await assert.rejects(h.t.store.knex('commission_ledger').update({ amount_usd: '1.00' }), /append-only/);
      await assert.rejects(h.t.store.knex('commission_ledger').delete(), /append-only/);
      assert.equal((await h.lines())[0]?.amount_usd, '100.00');
    });

    it('a scope whose evaluation failed stays pending and is evaluated by the partner\'s next run', async () => {
      await h.load('customers', [igCustomer('c1'), igCustomer('c2')]);
      // As if the job had failed after this commit: the data is loaded, the scope kept pending.
      await h.t.store.transaction(async (trx) => {
        await trx('transactions').insert({ partner_id: 'casino', transaction_id: 't1', customer_id: 'c1', transaction_type: 'deposit', amount_currency: '50', currency: 'USD', transaction_date: '2026-10-02T12:00:00.000000Z', status: 'approved', amount_usd: null, loaded_at: h.t.store.now() });
      });
      const lost = emptyScope('casino', 'igaming', 'run-lost');
      lost.customers.add('c1');
      addDay(lost, 'c1', '2026-10-02');
      await savePending(h.t.store, lost);
      assert.deepEqual(await h.lines(), []);
      await h.load('transactions', [tx('t2', 'c2', 'withdrawal', 5)]);
      assert.deepEqual((await h.lines()).map((l) => [l.customer_id, l.ref_id, l.amount_usd]), [['c1', 't1', '100.00']]);
      assert.equal(Number((await h.t.store.knex('commission_pending').count({ n: '*' }))[0]?.n), 0);
      await h.agrees();
      // Evaluating an empty scope again: nothing.
      await evaluateScope(h.t.store, h.plans, emptyScope('casino', 'igaming', 'again'));
      assert.equal((await h.lines()).length, 1);
    });

    it('a crash between a batch\'s commit and its evaluation loses nothing: the scope committed with the batch is evaluated on resume', async () => {
      const job = commissionJob(h.t.store, h.plans, silentLogger());
      // The process dies right after each commit: the evaluation never runs.
      const dying = loaderWith(h.t.store, [{ ...job, evaluate: async () => { throw new Error('killed after commit'); } }]);
      const load = (entity: 'customers' | 'transactions' | 'activity', records: unknown[], runId: string) =>
        dying.load({ partner: 'casino', variant: 'igaming', entity, runId, records: records.map((value, i) => ({ position: i + 1, value })) });
      await assert.rejects(load('customers', [igCustomer('c1'), igCustomer('c2')], 'r1'), /killed after commit/);
      await assert.rejects(load('transactions', [tx('t1', 'c1', 'deposit', 50), tx('t2', 'c2', 'deposit', 10)], 'r2'), /killed after commit/);
      await assert.rejects(load('activity', [play('2026-10-03', 'c1', { ggr: 100 })], 'r3'), /killed after commit/);
      assert.equal(Number((await h.t.store.knex('transactions').count({ n: '*' }))[0]?.n), 2, 'the data committed');
      assert.deepEqual(await h.lines(), [], 'no evaluation ran');
      assert.ok(Number((await h.t.store.knex('commission_pending').count({ n: '*' }))[0]?.n) > 0, 'the scope committed with the data');
      const status = captureIo();
      await statusCommand(globals(), {}, status);
      // c1, c2 (customer records and their transactions) and c1's day 2026-10-03.
      assert.deepEqual((JSON.parse(status.stdout.join('')) as { commissions: { partner: string; pending_entries: number }[] }).commissions.map((c) => [c.partner, c.pending_entries]), [['casino', 5]]);

      await resumeJobs(h.t.store, { plans: h.plans, logger: silentLogger() });
      // By hand: CPA 100 for each first deposit (default amount, no baseline) + 25% of 100 GGR in October.
      assert.deepEqual((await h.lines()).map((l) => [l.plan_id, l.customer_id, l.amount_usd]).sort(), [['cpa', 'c1', '100.00'], ['cpa', 'c2', '100.00'], ['rs', null, '25.00']]);
      assert.equal(Number((await h.t.store.knex('commission_pending').count({ n: '*' }))[0]?.n), 0);
      await h.agrees();
      // Resuming again, or reloading the same batches through the working job: no new line.
      await resumeJobs(h.t.store, { plans: h.plans, logger: silentLogger() });
      assert.equal((await h.lines()).length, 3);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50), tx('t2', 'c2', 'deposit', 10)]);
      assert.equal((await h.lines()).length, 3);
    });

    it('parallel load transactions of one partner lose no scope: every first deposit is paid exactly once', async () => {
      // Two loaders (as two workers would have) writing and evaluating one partner at the same time;
      // on PostgreSQL each transaction runs on its own connection.
      const job = commissionJob(h.t.store, h.plans, silentLogger());
      const loaders = [0, 1].map(() => loaderWith(h.t.store, [job]));
      const rounds = 12;
      await Promise.all(loaders.map(async (loader, w) => {
        for (let k = 0; k < rounds; k++) {
          const ids = [0, 1, 2].map((i) => `w${w}-r${k}-c${i}`);
          const load = (entity: 'customers' | 'transactions', records: unknown[]) =>
            loader.load({ partner: 'casino', variant: 'igaming', entity, runId: `w${w}-r${k}-${entity}`, records: records.map((value, i) => ({ position: i + 1, value })) });
          await load('customers', ids.map((id) => igCustomer(id)));
          await load('transactions', ids.map((id) => tx(`t-${id}`, id, 'deposit', 50)));
        }
      }));
      const lines = await h.lines();
      // By hand: 2 loaders × 12 rounds × 3 customers, one 100.00 CPA each, nothing else.
      assert.equal(lines.length, 72);
      assert.ok(lines.every((l) => l.plan_id === 'cpa' && l.amount_usd === '100.00'));
      assert.equal(new Set(lines.map((l) => l.customer_id)).size, 72);
      assert.equal(Number((await h.t.store.knex('commission_pending').count({ n: '*' }))[0]?.n), 0);
      await h.agrees();
    });

    it('commissions: totals per affiliate, month and plan, the lines behind them, and held entries', async () => {
      await h.load('customers', [igCustomer('c1'), igCustomer('c2', { affiliate_id: 'aff-2' })]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50), tx('t2', 'c2', 'deposit', 30, { currency: 'EUR' })]);
      await h.load('activity', [play('2026-10-03', 'c1', { ggr: 100 }), play('2026-11-03', 'c1', { ggr: 40.1 })]);
      const io = captureIo();
      assert.equal(await commissionsCommand(globals(), { lines: true }, io), 0);
      const report = JSON.parse(io.stdout.join('')) as { totals: Record<string, unknown>[]; total_usd: string; lines: { reason: string }[]; held: { customer_id: string; period: string; missing: string[] }[] };
      assert.deepEqual(report.totals, [
        { affiliate: 'aff-1', month: '2026-10', plan_id: 'cpa', plan_kind: 'cpa_ftd', partner: 'casino', lines: 1, month_state: null, amount_usd: '100.00', earned: '100.00', clawed_back: '0.00' },
        { affiliate: 'aff-1', month: '2026-10', plan_id: 'rs', plan_kind: 'revshare', partner: 'casino', lines: 1, month_state: 'closed', amount_usd: '25.00', earned: '25.00', clawed_back: '0.00' },
        { affiliate: 'aff-1', month: '2026-11', plan_id: 'rs', plan_kind: 'revshare', partner: 'casino', lines: 1, month_state: 'open', amount_usd: '10.02', earned: '10.02', clawed_back: '0.00' }, // 40.10 × 25% = 10.025: half to even
      ]);
      assert.equal(report.total_usd, '135.02');
      assert.deepEqual(report.lines.map((l) => l.reason), ['cpa_ftd', 'revshare', 'revshare']);
      // Held under the deposit's month, not the month it is looked at.
      assert.deepEqual(report.held.map((x) => [x.customer_id, x.period, x.missing]), [['c2', '2026-10', ['EUR 2026-10-02']]]);
      assert.deepEqual(await commissionHoldSummary(h.t.store.knex), [{ partner: 'casino', held: 1, oldest: '2026-11-22T10:00:00.000000Z', missing_rates: ['EUR 2026-10-02'] }]);
      const status = captureIo();
      await statusCommand(globals(), {}, status);
      assert.deepEqual((JSON.parse(status.stdout.join('')) as { commissions: unknown }).commissions,
        [{
          partner: 'casino', held: 1, held_since: '2026-11-22T10:00:00.000000Z', missing_rates: ['EUR 2026-10-02'],
          review_held: 0, review_held_since: null, review_withheld_usd: '0.00', review_waiting_usd: '0.00', review_flags: [], pending_entries: 0,
        }]);
      const statusText = captureIo();
      await statusCommand(globals(false), {}, statusText);
      assert.match(statusText.stdout.join('\n'), /casino +1 +2026-11-22 10:00:00 +EUR 2026-10-02 +-/);

      const filtered = captureIo();
      await commissionsCommand(globals(), { affiliate: 'aff-1', month: '2026-11' }, filtered);
      assert.deepEqual((JSON.parse(filtered.stdout.join('')) as { totals: { amount_usd: string }[] }).totals.map((t) => t.amount_usd), ['10.02']);

      const text = captureIo();
      await commissionsCommand(globals(false), { lines: true }, text);
      const out = text.stdout.join('\n');
      assert.match(out, /aff-1 +2026-11 +rs +revshare +casino +1 +open +10\.02/);
      assert.match(out, /held, waiting for FX rates \(1\)/);
      assert.match(out, /EUR 2026-10-02/);
      await assert.rejects(commissionsCommand(globals(), { month: '2026-13' }, captureIo()), /--month must be YYYY-MM/);
    });

    it('fx import releases what was held; a bad file loads nothing and names every bad line', async () => {
      await h.load('customers', [igCustomer('c1')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 30, { currency: 'EUR' })]);
      const bad = join(dir, 'bad.csv');
      writeFileSync(bad, 'date,currency,rate\n2026-10-02,EUR,1.1\n2026-10-32,EUR,1\n');
      const io = captureIo();
      assert.equal(await fxImportCommand(globals(false), { file: bad }, io), 1);
      assert.match(io.stdout.join('\n'), /not imported, 1 problems[\s\S]*3 +date must be a real day/);
      assert.equal(Number((await h.t.store.knex('fx_rates').count({ n: '*' }))[0]?.n), 0);
      await assert.rejects(fxImportCommand(globals(), { file: join(dir, 'nope.csv') }, captureIo()), /cannot read .*nope\.csv: ENOENT/);

      const good = join(dir, 'rates.csv');
      writeFileSync(good, 'date,currency,rate\n2026-10-02,EUR,1.1\n2026-10-03,EUR,1.2\n');
      const ok = captureIo();
      assert.equal(await fxImportCommand(globals(), { file: good }, ok), 0);
      assert.deepEqual(JSON.parse(ok.stdout.join('')), {
        file: good, rates: 2, problems: [], added: 2, changed: 0, unchanged: 0,
        commissions: { lines: 1, released: 1, held: 0, partners: [{ partner: 'casino', lines: 1, net_usd: '100.00', released: 1, held: 0 }] },
      });
      // The same file again: nothing changes.
      const again = captureIo();
      await fxImportCommand(globals(), { file: good }, again);
      assert.equal((JSON.parse(again.stdout.join('')) as { unchanged: number }).unchanged, 2);
      assert.equal((await h.lines()).length, 1);
    });

    it('recompute agrees, reports a difference, and --repair books the correction', async () => {
      await h.load('customers', [igCustomer('c1'), igCustomer('c2')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50)]);
      await h.load('activity', [play('2026-11-03', 'c1', { ggr: 100 }), play('2026-11-04', 'c2', { ggr: 60 })]);
      const ok = captureIo();
      assert.equal(await commissionsRecomputeCommand(globals(false), {}, ok), 0);
      assert.match(ok.stdout.join('\n'), /casino \(igaming\): 3 keys recomputed, 0 differ from the ledger, 0 held/);
      assert.match(ok.stdout.join('\n'), /agrees with a rebuild from history, to the cent/);

      // Data changed behind the job's back (no afterCommit): the ledger no longer agrees.
      await h.t.store.knex('gaming_activity').where({ customer_id: 'c2' }).update({ ggr: '20' });
      const diff = captureIo();
      assert.equal(await commissionsRecomputeCommand(globals(), { partner: 'casino', month: '2026-11' }, diff), 1);
      const report = JSON.parse(diff.stdout.join('')) as { agree: boolean; derived_state_differences: number; partners: { differences: Record<string, unknown>[] }[] };
      assert.equal(report.agree, false);
      assert.equal(report.derived_state_differences, 2); // the customer-day and its month
      assert.deepEqual(report.partners[0]?.differences, [{
        key: 'revshare|rs|casino|aff-1|2026-11', plan_id: 'rs', plan_kind: 'revshare', partner: 'casino', affiliate: 'aff-1', customer: null,
        period: '2026-11', ledger_usd: '40.00', recomputed_usd: '30.00', difference_usd: '-10.00', reason: 'revshare',
      }]);
      const repair = captureIo();
      assert.equal(await commissionsRecomputeCommand(globals(), { repair: true }, repair), 0);
      assert.deepEqual((JSON.parse(repair.stdout.join('')) as { partners: { repaired: unknown }[] }).partners[0]?.repaired, { lines: 1, net_usd: '-10.00' });
      await h.agrees();
      const last = (await h.lines()).pop();
      assert.deepEqual([last?.reason, last?.amount_usd, last?.run_id?.startsWith('recompute-')], ['revshare', '-10.00', true]);
    });
  });
}
