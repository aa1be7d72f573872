import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { runCli } from '../support/cli.js';
import { customer, deposit, gaming } from '../support/records.js';

describe('partner-sync CLI (subprocess)', () => {
  let dir: string;
  let env: Record<string, string>;
  const file = (name: string, lines: unknown[]): string => {
    const path = join(dir, name);
    writeFileSync(path, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
    return path;
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-cli-'));
    env = { STORE_URL: `sqlite:${join(dir, 'store.sqlite')}` };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describe('validate', () => {
    it('exits 0 and says so when every record is valid', async () => {
      const r = await runCli(['validate', '--variant', 'igaming', '--entity', 'customers', file('ok.ndjson', [customer('c1'), customer('c2')])]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^OK: 2 records, all valid \(igaming\/customers/);
    });

    it('exits 1 with --json naming line, field and rule of every problem', async () => {
      const path = file('mixed.ndjson', [deposit('t1', 'c1'), deposit('t2', 'c1', { amount_currency: 10.123 }), '{oops', { ...deposit('t3', 'c1'), extra: 1 }]);
      const r = await runCli(['validate', '--variant', 'igaming', '--entity', 'transactions', '--json', path]);
      assert.equal(r.code, 1, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.deepEqual([out.total, out.valid, out.invalid], [4, 1, 3]);
      assert.deepEqual(out.errors.map((e: { line: number; field: string; rule: string }) => [e.line, e.field, e.rule]), [
        [2, 'amount_currency', 'maxDecimalPlaces'],
        [3, '(record)', 'json'],
        [4, 'extra', 'additionalProperties'],
      ]);
    });

    it('reads stdin when FILE is -', async () => {
      const r = await runCli(['validate', '--variant', 'prop-trading', '--entity', 'transactions', '--json', '-'], {
        input: JSON.stringify([deposit('t1', 'c1', { transaction_type: 'challenge_fee' }), deposit('t2', 'c1')]),
      });
      assert.equal(r.code, 1);
      const out = JSON.parse(r.stdout);
      assert.deepEqual(out.errors.map((e: { line: number; field: string; rule: string }) => [e.line, e.field, e.rule]), [[2, 'transaction_type', 'enum']]);
    });

    it('exits 2 on bad usage or an unreadable file, saying which', async () => {
      const missing = await runCli(['validate', '--variant', 'igaming', '--entity', 'customers', join(dir, 'nope.ndjson')]);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /nope\.ndjson/);
      const badVariant = await runCli(['validate', '--variant', 'poker', '--entity', 'customers', join(dir, 'x')]);
      assert.equal(badVariant.code, 2);
      assert.match(badVariant.stderr, /poker/);
      const noFile = await runCli(['validate', '--variant', 'igaming', '--entity', 'customers']);
      assert.equal(noFile.code, 2);
      const unknown = await runCli(['frobnicate']);
      assert.equal(unknown.code, 2);
    });
  });

  describe('migrate and import', () => {
    it('migrate creates the store, then reports it up to date', async () => {
      const first = await runCli(['migrate', '--json'], { env });
      assert.equal(first.code, 0, first.stderr);
      assert.deepEqual(JSON.parse(first.stdout).applied, MIGRATIONS.map((m) => m.name));
      const second = await runCli(['migrate'], { env });
      assert.match(second.stdout, /up to date/);
    });

    it('import prints loaded / rejected / waiting counts and the reasons', async () => {
      const txs = file('tx.ndjson', [deposit('t1', 'c1'), deposit('t2', 'c2'), deposit('t3', 'c1', { currency: 'eur' })]);
      const customers = file('c.ndjson', [customer('c1')]);
      const tx = await runCli(['import', 'p1', '--variant', 'igaming', '--entity', 'transactions', '--json', txs], { env });
      assert.equal(tx.code, 0, tx.stderr);
      const out = JSON.parse(tx.stdout);
      assert.deepEqual([out.total, out.loaded, out.rejected, out.waiting], [3, 0, 1, 2]);
      assert.deepEqual(out.rejects.map((e: { line: number; field: string; rule: string }) => [e.line, e.field, e.rule]), [[3, 'currency', 'pattern']]);
      const cu = await runCli(['import', 'p1', '--variant', 'igaming', '--entity', 'customers', customers], { env });
      assert.equal(cu.code, 0, cu.stderr);
      assert.match(cu.stdout, /1 records, 1 loaded, 0 rejected, 0 waiting for their customer, 1 earlier waiting records released/);
    });

    it('import --customers --transactions --activity loads the files in entity order and evaluates the jobs once, at the end', async () => {
      const c = file('c.ndjson', [customer('c1', { affiliate_id: 'aff-1', country_code: 'DE' })]);
      const t = file('t.ndjson', [deposit('t1', 'c1', { currency: 'USD', amount_currency: 60 }), deposit('t2', 'c1', { currency: 'usd' })]);
      const a = file('a.ndjson', [gaming('2026-11-02', 'c1', { currency: 'USD', total_bets: 500, wins: 400 })]);
      // Given activity first: the transactions still find their customer, loaded before them.
      const r = await runCli(['import', 'sandbox-casino', '--variant', 'igaming', '--activity', a, '--transactions', t, '--customers', c], { env });
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.split('\n').filter((l) => l.startsWith('sandbox-casino'));
      assert.deepEqual(lines.map((l) => l.split(' ')[1]), ['igaming/customers', 'igaming/transactions', 'igaming/activity']);
      assert.match(lines[1]!, /2 records, 1 loaded, 1 rejected, 0 waiting for their customer/);
      assert.match(r.stdout, /2 +currency +pattern/);
      // The shipped plans: CPA 150 for a German FTD of 60 USD, RevShare 25% of the day's NGR of 100.
      const ledger = JSON.parse((await runCli(['commissions', '--json'], { env })).stdout);
      assert.deepEqual(ledger.totals.map((l: { plan_id: string; amount_usd: string }) => [l.plan_id, l.amount_usd]), [['casino-cpa-2026', '150.00'], ['casino-revshare-2026', '25.00']]);
      assert.deepEqual(JSON.parse((await runCli(['status', '--json'], { env })).stdout).unevaluated, [], 'nothing loaded waits for its evaluation');
      // --json: one summary a file, in the order loaded.
      const again = await runCli(['import', 'sandbox-casino', '--variant', 'igaming', '--json', '--transactions', t, '--customers', c], { env });
      assert.equal(again.code, 0, again.stderr);
      const out = JSON.parse(again.stdout);
      assert.deepEqual(out.map((s: { entity: string; total: number; loaded: number; rejected: number }) => [s.entity, s.total, s.loaded, s.rejected]), [['customers', 1, 1, 0], ['transactions', 2, 1, 1]]);
      assert.deepEqual(out[1].rejects.map((e: { line: number; field: string; rule: string }) => [e.line, e.field, e.rule]), [[2, 'currency', 'pattern']]);
    });

    it('import of several files refuses before loading any when one cannot be read, and says which', async () => {
      const c = file('c.ndjson', [customer('c1')]);
      const r = await runCli(['import', 'p1', '--variant', 'igaming', '--customers', c, '--transactions', join(dir, 'nope.ndjson')], { env });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /cannot read .*nope\.ndjson: no such file/);
      const status = JSON.parse((await runCli(['status', '--json', '--partner', 'p1'], { env })).stdout);
      assert.deepEqual(status.streams.filter((s: { partner: string }) => s.partner === 'p1'), [], 'no customer of p1 was loaded');
    });

    it('import says what is wrong with its files, with exit 2', async () => {
      const c = file('c.ndjson', [customer('c1')]);
      const cases: [string[], RegExp][] = [
        [['--entity', 'customers', c, '--activity', c], /either --entity E FILE or --customers, --transactions and\/or --activity FILE, not both/],
        [['--entity', 'customers'], /--entity customers needs a FILE/],
        [[c], /FILE .*c\.ndjson needs --entity E/],
        [[], /give --entity E FILE, or --customers, --transactions and\/or --activity FILE/],
        [['--customers', '-', '--activity', '-'], /stdin \(-\) can be the file of one entity only/],
      ];
      for (const [args, message] of cases) {
        const r = await runCli(['import', 'p1', '--variant', 'igaming', ...args], { env });
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, message);
      }
    });

    it('refuses a store URL it cannot use, with exit 2', async () => {
      const r = await runCli(['migrate'], { env: { STORE_URL: 'mongodb://localhost/x' } });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /unsupported store URL scheme/);
    });
  });
});
