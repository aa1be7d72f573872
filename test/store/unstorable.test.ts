/**
 * Values a store cannot hold (NUL characters, years outside 0001–9999 in UTC, leap seconds) on
 * every store backend: the batch they arrive in still loads its valid records, the bad ones are
 * rejects that can be listed, and both stores keep the same thing.
 */
import assert from 'node:assert/strict';
import { runPartner } from '../../jobs/run-partner.js';
import type { PartnerDefinition, RestStream } from '../../src/config/definition.js';
import { createRedactor } from '../../src/config/redact.js';
import { silentLogger } from '../../src/log.js';
import { Loader } from '../../src/pipeline/load.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { listRejects } from '../../src/store/rejects.js';
import { readState } from '../../src/store/sync-state.js';
import type { RawRecord } from '../../src/types.js';
import { loaderWith } from '../support/loader.js';
import { customer, deposit, raw, stored } from '../support/records.js';
import { SANDBOX_SECRET, exampleDefinition, storedByKey } from '../support/sandbox.js';
import { STORES, fixedClock, type TestStore } from '../support/stores.js';

for (const backend of STORES) {
  describe(`values no store can hold, on ${backend.name}`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let loader: Loader;
    beforeEach(async () => {
      t = await backend.create(fixedClock());
      loader = loaderWith(t.store, []);
    });
    afterEach(async () => t.drop());

    const load = (entity: 'customers' | 'transactions', records: RawRecord[]) =>
      loader.load({ partner: 'p1', variant: 'igaming', entity, runId: 'run-1', records });

    it('a batch with a NUL record and out-of-range dates loads its valid records; the others are listed rejects', async () => {
      await load('customers', raw([customer('c1')]));
      const result = await load('transactions', raw([
        deposit('t1', 'c1'),
        deposit('t2', 'c1', { note: 'ref\u0000x' }),
        deposit('t3', 'c1', { transaction_date: '0000-01-01T00:00:00Z' }),
        deposit('t4', 'c1', { transaction_date: '9999-12-31T23:00:00-05:00' }),
        deposit('t5', 'c1'),
      ]));
      assert.deepEqual([result.loaded, result.rejected], [2, 3]);
      assert.deepEqual((await stored(t.store, 'p1', 'igaming', 'transactions')).map((r) => r.transaction_id), ['t1', 't5']);
      const rejects = await listRejects(t.store.knex, { partner: 'p1' });
      assert.deepEqual(rejects.map((r) => [r.position, r.errors.map((e) => `${e.field} ${e.rule}`)]), [
        [2, ['note noNul']], [3, ['transaction_date yearRange']], [4, ['transaction_date yearRange']],
      ]);
      // the payload keeps the NUL as JSON's escape: a replay meets the same record again
      assert.equal(JSON.parse(rejects[0]?.payload ?? '').note, 'ref\u0000x');
      assert.match(rejects[0]?.errors[0]?.message ?? '', /^note: must not contain the NUL character U\+0000/);
    });

    it('a reject whose raw text, unknown field name or mapping message holds a NUL is kept, the NUL written as \\u0000', async () => {
      const result = await load('transactions', [
        { position: 1, value: '{"transaction_id": "t\u0000', parseError: 'Unterminated string' },
        { position: 2, value: { ...deposit('t2', 'c1'), 'x\u0000y': 1 } },
        { position: 3, value: {}, source: { id: 'a\u0000' }, mappingErrors: [{ field: 'transaction_id', rule: 'mapping', message: 'transaction_id: bad value "a\u0000"' }] },
        { position: 4, value: deposit('t4', 'c1') },
      ]);
      assert.deepEqual([result.rejected, result.waiting], [3, 1]);
      const rejects = await listRejects(t.store.knex, { partner: 'p1' });
      assert.equal(rejects.length, 3);
      assert.equal(rejects[0]?.payload, '{"transaction_id": "t\\u0000');
      assert.deepEqual(rejects[1]?.errors.map((e) => [e.field, e.rule]), [['x\\u0000y', 'additionalProperties']]);
      assert.equal(rejects[2]?.errors[0]?.message, 'transaction_id: bad value "a\\u0000"');
    });

    it('a parked record with a NUL (a validator that lets it through) is kept, the NUL written as \\u0000', async () => {
      const lenient = new Loader({ store: t.store, validator: { validate: () => [] } });
      const result = await lenient.load({ partner: 'p1', variant: 'igaming', entity: 'transactions', runId: 'run-1', records: raw([deposit('t1', 'c-later', { note: 'n\u0000' })]) });
      assert.equal(result.waiting, 1);
      const row = await t.store.knex('waiting_records').first('record');
      const record = (typeof row.record === 'string' ? JSON.parse(row.record) : row.record) as { note: string };
      assert.equal(record.note, 'n\\u0000');
    });

    it('years 0–99 with an offset and fifteen nines of fraction are stored the same way in both stores; a leap second is a reject', async () => {
      const result = await load('customers', raw([
        customer('c1', { signup_date: '0050-06-01T10:00:00+02:00' }),
        customer('c2', { signup_date: '2016-12-31T23:59:60Z', last_modified_date: '2016-12-31T15:59:60.123-08:00' }),
        // cut to the store's microseconds, never rounded up into the next second (or a second 60)
        customer('c3', { signup_date: '1985-04-12T23:59:59.999999999999999Z', last_modified_date: '1985-04-12T15:59:59.999999999999999-08:00' }),
      ]));
      assert.equal(result.rejected, 1);
      const rows = await stored(t.store, 'p1', 'igaming', 'customers');
      assert.deepEqual(rows.map((r) => [r.customer_id, r.signup_date, r.last_modified_date]), [
        ['c1', '0050-06-01T08:00:00.000000Z', undefined],
        ['c3', '1985-04-12T23:59:59.999999Z', '1985-04-12T23:59:59.999999Z'],
      ]);
      const rejects = await listRejects(t.store.knex, { partner: 'p1' });
      assert.deepEqual(rejects.map((r) => r.errors.map((e) => `${e.field} ${e.rule}`)), [['signup_date leapSecond', 'last_modified_date leapSecond']]);
    });
  });

  describe(`a pull that meets a NUL record, on ${backend.name}`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let sandbox: Sandbox;
    let def: PartnerDefinition;
    let cleanup: () => void;

    beforeEach(async () => {
      t = await backend.create();
      sandbox = await startSandbox({ port: 0, seed: 3, customers: 20, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      ({ def, cleanup } = await exampleDefinition('igaming', sandbox.url));
      const stream = def.streams.customers as RestStream;
      stream.incremental.start = `${sandbox.data.from}T00:00:00Z`;
      stream.pagination.per_page = 50;
    });
    afterEach(async () => {
      await sandbox.close();
      cleanup();
      await t.drop();
    });

    it('loads the rest of the page, keeps the NUL record as a reject and moves the watermark', async () => {
      const at = new Date(Date.now() - 60_000).toISOString();
      sandbox.data.upsertCustomer('igaming', { customer_id: 'nul-1', signup_date: '2026-01-01T00:00:00Z', affiliate_id: 'aff-101', kyc_status_id: 'pending\u0000' }, at);
      const run = () => runPartner({ loader: loaderWith(t.store, []), clock: t.store.clock, logger: silentLogger(), redact: createRedactor(def.secrets) },
        def, { kind: 'run', scheduledFor: new Date() }, 'customers');
      const [first] = await run();
      assert.equal(first?.status, 'succeeded', first?.error);
      assert.equal(first?.counts.rejected, 1);
      const customers = await storedByKey(t.store, def.partner, 'igaming', 'customers');
      assert.equal(customers.size, sandbox.data.customers('igaming').length - 1);
      assert.ok(!customers.has('nul-1'));
      const rejects = await listRejects(t.store.knex, { partner: def.partner });
      assert.deepEqual(rejects.map((r) => r.errors.map((e) => `${e.field} ${e.rule}`)), [['kyc_status_id noNul']]);
      const state = (await readState(t.store.knex, def.partner, 'customers')) as { watermark: string };
      assert.ok(state.watermark > at, `${state.watermark} > ${at}`);
      // the next run does not stall on it either
      const [second] = await run();
      assert.equal(second?.status, 'succeeded', second?.error);
      assert.equal((await listRejects(t.store.knex, { partner: def.partner })).length, 1);
    });
  });
}
