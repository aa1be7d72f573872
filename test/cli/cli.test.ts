import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { runCli } from '../support/cli.js';
import { customer, deposit } from '../support/records.js';

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

    it('refuses a store URL it cannot use, with exit 2', async () => {
      const r = await runCli(['migrate'], { env: { STORE_URL: 'mongodb://localhost/x' } });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /unsupported store URL scheme/);
    });
  });
});
