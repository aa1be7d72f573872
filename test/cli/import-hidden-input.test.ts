/**
 * Import files whose JSON text says more than its parsed value, through the CLI as a subprocess,
 * on every store backend: bytes that are not UTF-8 (`id-\xff` and `id-\xfe` were decoded to one
 * customer, the second overwriting the first), a field given twice (the last value loaded without a
 * word) and an amount of 17 significant digits (rounded to 1 before the rules saw it). Each such
 * record is a reject naming field and rule, in the rejects table; the rest of the file loads.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../support/cli.js';
import { customer, deposit } from '../support/records.js';
import { STORES, type TestStore } from '../support/stores.js';

interface ImportJson { total: number; loaded: number; rejected: number; waiting: number; rejects: { line: number; field: string; rule: string; message: string }[] }

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

for (const backend of STORES) {
  describe(`import of JSON whose text hides what its value shows, on ${backend.name}`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let dir: string;
    beforeEach(async () => {
      t = await backend.create();
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-import-hidden-'));
    });
    afterEach(async () => {
      await t.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    const importFile = async (entity: string, name: string, bytes: Buffer): Promise<ImportJson> => {
      const file = join(dir, name);
      writeFileSync(file, bytes);
      const r = await runCli(['--store', t.url, 'import', 'p1', '--variant', 'igaming', '--entity', entity, file, '--json']);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as ImportJson;
    };
    const storedRejects = async () =>
      ((await t.store.knex('rejects').orderBy('position').select('position', 'errors')) as { position: number; errors: string | { field: string; rule: string }[] }[]).map((r) => ({
        position: Number(r.position),
        errors: (typeof r.errors === 'string' ? JSON.parse(r.errors) : r.errors) as { field: string; rule: string }[],
      }));

    it('rejects each customer whose id holds bytes that are not UTF-8 (two customers, not one), and loads the others', async () => {
      // `{"customer_id":"id-\xff",...}`: the id is written as JSON with a placeholder, then the byte put in.
      const bad = (byte: number) => {
        const text = json(customer('id-@')).toString();
        const at = text.indexOf('id-@') + 3;
        return Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([byte]), Buffer.from(text.slice(at + 1))]);
      };
      const file = Buffer.concat([json(customer('c1')), Buffer.from('\n'), bad(0xff), Buffer.from('\n'), bad(0xfe), Buffer.from('\r\n'), json(customer('c2')), Buffer.from('\n')]);
      const out = await importFile('customers', 'customers.ndjson', file);
      assert.deepEqual([out.total, out.loaded, out.rejected], [4, 2, 2]);
      assert.deepEqual(out.rejects.map((e) => [e.line, e.field, e.rule]), [[2, 'customer_id', 'encoding'], [3, 'customer_id', 'encoding']]);
      assert.match(out.rejects[0]!.message, /^customer_id: not valid UTF-8/);
      const rows = (await t.store.knex('customers').orderBy('customer_id').select('customer_id')) as { customer_id: string }[];
      assert.deepEqual(rows.map((r) => r.customer_id), ['c1', 'c2']);
      assert.deepEqual((await storedRejects()).map((r) => [r.position, r.errors.map((e) => `${e.field} ${e.rule}`)]), [[2, ['customer_id encoding']], [3, ['customer_id encoding']]]);
    });

    it('rejects a transaction with a field given twice, and one whose amount has 17 significant digits as written, in a JSON array file', async () => {
      await importFile('customers', 'c.ndjson', json(customer('c1')));
      const text =
        '[' +
        JSON.stringify(deposit('t1', 'c1')) +
        ',\n' +
        JSON.stringify(deposit('t2', 'c1', { amount_currency: 10 })).replace('"amount_currency":10', '"amount_currency":10,"amount_currency":99999') +
        ',\n' +
        JSON.stringify(deposit('t3', 'c1', { amount_currency: 7 })).replace('"amount_currency":7', '"amount_currency":1.0000000000000001') +
        ',\n' +
        JSON.stringify(deposit('t4', 'c1', { amount_currency: 12.5 })) +
        ']';
      const out = await importFile('transactions', 'tx.json', Buffer.from(text));
      assert.deepEqual([out.total, out.loaded, out.rejected], [4, 2, 2]);
      assert.deepEqual(out.rejects.map((e) => [e.line, e.field, e.rule]), [
        [2, 'amount_currency', 'duplicateKey'],
        [3, 'amount_currency', 'maxSignificantDigits'],
        [3, 'amount_currency', 'maxDecimalPlaces'],
      ]);
      assert.equal(out.rejects[1]!.message, 'amount_currency: more than 15 significant digits as written (1.0000000000000001)');
      assert.match(out.rejects[0]!.message, /^amount_currency: given more than once in one object/);
      const rows = (await t.store.knex('transactions').orderBy('transaction_id').select('transaction_id', 'amount_currency')) as { transaction_id: string; amount_currency: string | number }[];
      assert.deepEqual(rows.map((r) => [r.transaction_id, Number(r.amount_currency)]), [['t1', 100.5], ['t4', 12.5]]);
      assert.deepEqual((await storedRejects()).map((r) => [r.position, r.errors.map((e) => `${e.field} ${e.rule}`)]), [
        [2, ['amount_currency duplicateKey']],
        [3, ['amount_currency maxSignificantDigits', 'amount_currency maxDecimalPlaces']],
      ]);
      // A replay would load the stored payload's last value (99999) and its double (1): both stay open.
      const replay = await runCli(['--store', t.url, 'rejects', 'p1', '--replay', '--json']);
      assert.equal(replay.code, 0, replay.stdout + replay.stderr);
      const after = (await t.store.knex('transactions').orderBy('transaction_id').select('transaction_id', 'amount_currency')) as { transaction_id: string; amount_currency: string | number }[];
      assert.deepEqual(after.map((r) => [r.transaction_id, Number(r.amount_currency)]), [['t1', 100.5], ['t4', 12.5]], 'nothing the partner did not send is loaded');
      const open = (await t.store.knex('rejects').where({ status: 'open' }).orderBy('position').select('position', 'errors')) as { position: number; errors: string | { rule: string; message: string }[] }[];
      assert.equal(open.length, 2, 'both rejects stay open');
      for (const r of open) {
        const errors = (typeof r.errors === 'string' ? JSON.parse(r.errors) : r.errors) as { rule: string; message: string }[];
        assert.ok(errors.every((e) => /not replayable, ask the partner to send the record again$/.test(e.message)), JSON.stringify(errors));
      }
    });
  });
}
