/**
 * An import reads and validates its next batch while the one before it loads (jobs/import-file.ts,
 * Loader.ready): each batch is still its own transaction, in file order. Imported in batches of two,
 * a file ends in the store exactly as imported in one batch: versions across batches, rejects in
 * the middle (a field named with its rule, a line that is no JSON; the rest loaded), a record whose
 * customer is not there yet. A batch whose transaction fails stops the import there (a store
 * failure halfway: test/cli/store-errors.test.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { importFile, type ImportSummary } from '../../jobs/import-file.js';
import type { Entity, SpecRecord } from '../../src/types.js';
import { everyJob, loaderWith, loaderWithEveryJob } from '../support/loader.js';
import { customer, deposit, stored } from '../support/records.js';
import { STORES, type TestStore } from '../support/stores.js';

const CUSTOMERS: SpecRecord[] = [
  customer('c1', { last_modified_date: '2026-11-01T10:00:00Z', country_code: 'DE' }),
  customer('c2'),
  // An older version of c1 in the next batch: stale, c1 stays DE.
  customer('c1', { last_modified_date: '2026-11-01T09:00:00Z', country_code: 'FR' }),
  customer('c3', { affiliate_id: 'aff-2' }),
  // A newer one two batches on: applied.
  customer('c1', { last_modified_date: '2026-11-01T11:00:00Z', country_code: 'AT' }),
];

const TRANSACTIONS: SpecRecord[] = [
  deposit('t1', 'c1', { amount_currency: 10 }),
  deposit('t2', 'c9', { amount_currency: 20 }),
  // Position 3: rejected, its field and rule named; the rest of its batch (t4) loads.
  deposit('t3', 'c2', { amount_currency: 'ten' }),
  deposit('t4', 'c2', { amount_currency: 40 }),
  deposit('t5', 'c3', { amount_currency: 50 }),
  deposit('t1', 'c1', { amount_currency: 11 }),
  deposit('t6', 'c1', { amount_currency: 60 }),
];

const ndjson = (records: readonly unknown[]): string => records.map((r) => JSON.stringify(r)).join('\n') + '\n';
/** The transactions, with a line that is no JSON after t5 (position 6). */
const TRANSACTIONS_FILE = ndjson(TRANSACTIONS.slice(0, 5)) + '{"transaction_id": \n' + ndjson(TRANSACTIONS.slice(5));

for (const backend of STORES) {
  describe(`import in batches, each read and validated while the one before it loads (${backend.name})`, function () {
    this.timeout(120_000);
    const stores: TestStore[] = [];
    let dir: string;
    const before = process.env.PARTNER_SYNC_IMPORT_BATCH;
    beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'ps-import-batches-')); });
    afterEach(async () => {
      if (before === undefined) delete process.env.PARTNER_SYNC_IMPORT_BATCH;
      else process.env.PARTNER_SYNC_IMPORT_BATCH = before;
      for (const t of stores.splice(0)) await t.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    async function importAll(batch: number, files: { entity: Entity; text: string }[]): Promise<{ t: TestStore; summaries: ImportSummary[] }> {
      process.env.PARTNER_SYNC_IMPORT_BATCH = String(batch);
      const t = await backend.create();
      stores.push(t);
      const loader = loaderWithEveryJob(t.store);
      const summaries: ImportSummary[] = [];
      for (const [i, f] of files.entries()) {
        const file = join(dir, `${batch}-${i}-${f.entity}.ndjson`);
        writeFileSync(file, f.text);
        summaries.push(await importFile({ store: t.store, loader }, { partner: 'casino', variant: 'igaming', entity: f.entity, file, stdin: new PassThrough() }));
      }
      return { t, summaries };
    }

    async function contents(t: TestStore): Promise<unknown> {
      const rejects = (await t.store.knex('rejects').select('entity', 'position', 'errors').orderBy(['entity', 'position'])) as { entity: string; position: number; errors: unknown }[];
      const waiting = (await t.store.knex('waiting_records').select('entity', 'record_key').orderBy('record_key')) as unknown[];
      return {
        customers: await stored(t.store, 'casino', 'igaming', 'customers'),
        transactions: await stored(t.store, 'casino', 'igaming', 'transactions'),
        rejects: rejects.map((r) => ({ entity: r.entity, position: Number(r.position), errors: typeof r.errors === 'string' ? JSON.parse(r.errors) : r.errors })),
        waiting,
      };
    }

    it('a batch whose transaction fails stops the import there: the batches before it stay, none after it loads', async () => {
      process.env.PARTNER_SYNC_IMPORT_BATCH = '2';
      const t = await backend.create();
      stores.push(t);
      // A job that fails inside the transaction of the batch holding t4 (the third batch of two).
      const loader = loaderWith(t.store, [{
        name: 'fails-on-t4',
        async mark(_tx, change) {
          if (change.records.transactions.some((r) => r.transaction_id === 't4')) throw new Error('the job failed on t4');
        },
      }, ...everyJob(t.store)]);
      const customers = join(dir, 'customers.ndjson');
      writeFileSync(customers, ndjson(CUSTOMERS));
      await importFile({ store: t.store, loader }, { partner: 'casino', variant: 'igaming', entity: 'customers', file: customers, stdin: new PassThrough() });
      const file = join(dir, 'transactions.ndjson');
      const byId = (id: string, amount: number) => TRANSACTIONS.find((r) => r.transaction_id === id && r.amount_currency === amount) as SpecRecord;
      // Batches of two: [t1, t5] loads; [t4, t6] fails in its transaction; [t1 again] is read and validated meanwhile, never loaded.
      writeFileSync(file, ndjson([byId('t1', 10), byId('t5', 50), byId('t4', 40), byId('t6', 60), byId('t1', 11)]));
      await assert.rejects(importFile({ store: t.store, loader }, { partner: 'casino', variant: 'igaming', entity: 'transactions', file, stdin: new PassThrough() }), /the job failed on t4/);
      const rows = await stored(t.store, 'casino', 'igaming', 'transactions');
      assert.deepEqual(rows.map((r) => `${String(r.transaction_id)} ${Number(r.amount_currency)}`), ['t1 10', 't5 50']);
      const runs = (await t.store.knex('runs').where('stream', 'transactions').select('status', 'error')) as { status: string; error: string }[];
      assert.deepEqual(runs.map((r) => [r.status, r.error]), [['failed', 'the job failed on t4']]);
    });

    it('batches of two end as one batch does, with the same counts', async () => {
      const files = [{ entity: 'customers' as const, text: ndjson(CUSTOMERS) }, { entity: 'transactions' as const, text: TRANSACTIONS_FILE }];
      const small = await importAll(2, files);
      const whole = await importAll(1000, files);
      const got = await contents(small.t);
      assert.deepEqual(got, await contents(whole.t));
      const { customers, transactions, rejects, waiting } = got as { customers: SpecRecord[]; transactions: SpecRecord[]; rejects: { position: number; errors: { field: string; rule: string }[] }[]; waiting: { record_key: string }[] };
      assert.deepEqual(customers.map((c) => `${String(c.customer_id)} ${String(c.country_code ?? '')}`), ['c1 AT', 'c2 ', 'c3 ']);
      assert.deepEqual(transactions.map((t) => `${String(t.transaction_id)} ${Number(t.amount_currency)}`), ['t1 11', 't4 40', 't5 50', 't6 60']);
      assert.deepEqual(rejects.map((r) => r.position), [3, 6]);
      assert.equal(rejects[0]!.errors[0]!.field, 'amount_currency');
      assert.match(JSON.stringify(rejects[1]!.errors), /JSON/);
      assert.equal(waiting.length, 1);
      assert.match(waiting[0]!.record_key, /t2/);
      const counts = (s: ImportSummary) => ({ ...s.counts, distinct: s.distinct });
      assert.deepEqual(small.summaries.map(counts), whole.summaries.map(counts));
      assert.deepEqual(small.summaries.map((s) => [s.counts.loaded, s.counts.stale, s.counts.rejected, s.counts.waiting]), [[4, 1, 0, 0], [5, 0, 2, 1]]);
    });
  });
}
