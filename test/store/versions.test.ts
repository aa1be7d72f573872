/**
 * An older version never overwrites a newer one: customers by last_modified_date, transactions by
 * the source's change field carried beside the record; through every entry route (pull, import,
 * replay, overlapping backfills, records waiting for their customer) on every store backend. The
 * PostgreSQL batches below meet stored keys, so they take the merge path after the COPY-first try.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { importFile } from '../../jobs/import-file.js';
import { replayRejects } from '../../jobs/replay-rejects.js';
import { Loader } from '../../src/pipeline/load.js';
import { listRejects } from '../../src/store/rejects.js';
import { waitingSummary } from '../../src/store/waiting.js';
import type { RawRecord, SpecRecord } from '../../src/types.js';
import { loaderWith } from '../support/loader.js';
import { customer, deposit, raw, stored } from '../support/records.js';
import { exampleDefinition } from '../support/sandbox.js';
import { STORES, fixedClock, type TestStore } from '../support/stores.js';

/** A transaction as a cursor stream hands it over: its change time beside the mapped record. */
const pulled = (records: readonly [SpecRecord, string][]): RawRecord[] =>
  records.map(([value, version], i) => ({ position: i + 1, value, source: { ...value, updated_at: version }, version }));

for (const backend of STORES) {
  describe(`record versions on ${backend.name}`, () => {
    let t: TestStore;
    let loader: Loader;
    beforeEach(async () => {
      t = await backend.create(fixedClock());
      loader = loaderWith(t.store, []);
    });
    afterEach(async () => t.drop());

    const load = (entity: 'customers' | 'transactions', records: RawRecord[], runId = 'run-1') =>
      loader.load({ partner: 'p1', variant: 'igaming', entity, runId, records });
    const counts = (r: { received: number; loaded: number; rejected: number; waiting: number; stale: number }) =>
      [r.received, r.loaded, r.rejected, r.waiting, r.stale];

    it('a customer older than the stored one is stale, not applied; an equal version applies; one without a version applies and keeps the stored version', async () => {
      await load('customers', raw([customer('c1', { kyc_status_id: 'approved', last_modified_date: '2026-11-03T10:00:00.123457+02:00' })]));
      // 08:00:00.123456 UTC is one microsecond older than the stored 08:00:00.123457
      const older = await load('customers', raw([customer('c1', { kyc_status_id: 'pending', last_modified_date: '2026-11-03T08:00:00.123456Z' }), customer('c2')]));
      assert.deepEqual(counts(older), [2, 1, 0, 0, 1]);
      assert.deepEqual(older.stalePositions, [1]);
      assert.equal((await stored(t.store, 'p1', 'igaming', 'customers'))[0]?.kyc_status_id, 'approved');
      // Past the store's microseconds: 08:00:00.1234571 is newer than .123457 (compared as the source wrote it)
      await load('customers', raw([customer('c1', { kyc_status_id: 'rejected', last_modified_date: '2026-11-03T08:00:00.1234571Z' })]));
      const equal = await load('customers', raw([customer('c1', { kyc_status_id: 'resent', last_modified_date: '2026-11-03T08:00:00.1234571Z' })]));
      assert.deepEqual(counts(equal), [1, 1, 0, 0, 0]);
      const none = await load('customers', raw([customer('c1', { kyc_status_id: 'manual fix' })]));
      assert.deepEqual(counts(none), [1, 1, 0, 0, 0]);
      assert.equal((await stored(t.store, 'p1', 'igaming', 'customers'))[0]?.kyc_status_id, 'manual fix');
      // The stored version stayed: an older pull still loses.
      const later = await load('customers', raw([customer('c1', { kyc_status_id: 'pending', last_modified_date: '2026-11-03T08:00:00Z' })]));
      assert.deepEqual(counts(later), [1, 0, 0, 0, 1]);
      assert.equal((await t.store.knex('customers').where('customer_id', 'c1').first('source_version')).source_version, '2026-11-03T08:00:00.123457100');
    });

    it('within one batch the newest version of a key wins whatever its position; older ones count stale', async () => {
      await load('customers', raw([customer('c1')]));
      const batch = await load('transactions', pulled([
        [deposit('t1', 'c1', { status: 'reversed' }), '2026-11-05T10:00:00Z'],
        [deposit('t1', 'c1', { status: 'approved' }), '2026-11-05T09:00:00Z'],
        [deposit('t2', 'c1', { status: 'pending' }), '2026-11-05T09:00:00Z'],
        [deposit('t2', 'c1', { status: 'approved' }), '2026-11-05T09:00:00Z'],
      ]));
      assert.deepEqual(counts(batch), [4, 3, 0, 0, 1]);
      assert.deepEqual(batch.stalePositions, [2]);
      const rows = await stored(t.store, 'p1', 'igaming', 'transactions');
      assert.deepEqual(rows.map((r) => [r.transaction_id, r.status]), [['t1', 'reversed'], ['t2', 'approved']]);
    });

    it('a pulled transaction older than the stored one (its updated_at, not a spec field) is stale; the run history counts it', async () => {
      await load('customers', raw([customer('c1')]));
      await load('transactions', pulled([[deposit('t1', 'c1', { status: 'reversed' }), '2026-11-05T10:00:00+00:00']]));
      const again = await load('transactions', pulled([
        [deposit('t1', 'c1', { status: 'approved' }), '2026-11-05T10:59:59.999999+01:00'],
        [deposit('t3', 'c1'), '2026-11-05T08:00:00Z'],
      ]));
      assert.deepEqual(counts(again), [2, 1, 0, 0, 1]);
      const rows = await stored(t.store, 'p1', 'igaming', 'transactions');
      assert.deepEqual(rows.map((r) => [r.transaction_id, r.status]), [['t1', 'reversed'], ['t3', 'approved']]);
      assert.equal((await t.store.knex('transactions').where('transaction_id', 't1').first('source_version')).source_version, '2026-11-05T10:00:00.000000000');
    });

    it('a version parked for its customer is never overwritten by an older one, and an older one is never parked over a stored newer row', async () => {
      await load('customers', raw([customer('c1')]));
      // t1 waits for c9 at 10:00; an older t1 for the known c1 must not load past it.
      const parked = await load('transactions', pulled([[deposit('t1', 'c9', { status: 'reversed' }), '2026-11-05T10:00:00Z']]));
      assert.deepEqual(counts(parked), [1, 0, 0, 1, 0]);
      const older = await load('transactions', pulled([[deposit('t1', 'c1', { status: 'approved' }), '2026-11-05T09:00:00Z']]));
      assert.deepEqual(counts(older), [1, 0, 0, 0, 1]);
      const olderParked = await load('transactions', pulled([[deposit('t1', 'c9', { status: 'pending' }), '2026-11-05T08:00:00Z']]));
      assert.deepEqual(counts(olderParked), [1, 0, 0, 0, 1]);
      const released = await load('customers', raw([customer('c9')]));
      assert.equal(released.released, 1);
      assert.deepEqual((await stored(t.store, 'p1', 'igaming', 'transactions')).map((r) => [r.transaction_id, r.customer_id, r.status]), [['t1', 'c9', 'reversed']]);
      // Stored at 10:00 for c9: an older version waiting for another unknown customer is stale, not parked.
      const stale = await load('transactions', pulled([[deposit('t1', 'c8', { status: 'declined' }), '2026-11-05T09:30:00Z']]));
      assert.deepEqual(counts(stale), [1, 0, 0, 0, 1]);
      assert.deepEqual(await waitingSummary(t.store.knex, 'p1'), []);
      await load('customers', raw([customer('c8')]));
      assert.equal((await stored(t.store, 'p1', 'igaming', 'transactions'))[0]?.status, 'reversed');
    });

    it('import of an old file after a newer load: stale records counted in the summary and the run history, the store unchanged', async () => {
      await load('customers', raw([customer('c1', { kyc_status_id: 'approved', last_modified_date: '2026-11-10T00:00:00Z' }), customer('c2', { last_modified_date: '2026-11-10T00:00:00Z' })]));
      const dir = mkdtempSync(join(tmpdir(), 'partner-sync-versions-'));
      try {
        const file = join(dir, 'old.ndjson');
        writeFileSync(file, [
          customer('c1', { kyc_status_id: 'pending', last_modified_date: '2026-11-01T00:00:00Z' }),
          customer('c2', { kyc_status_id: 'pending', last_modified_date: '2026-11-10T00:00:00Z' }),
          customer('c3', { last_modified_date: '2026-11-01T00:00:00Z' }),
          { customer_id: 'c4' },
        ].map((r) => JSON.stringify(r)).join('\n'));
        const summary = await importFile({ store: t.store, loader }, { partner: 'p1', variant: 'igaming', entity: 'customers', file, stdin: Readable.from([]) });
        const c = summary.counts;
        assert.deepEqual([c.pulled, c.loaded, c.rejected, c.waiting, c.stale], [4, 2, 1, 0, 1]);
        const run = await t.store.knex('runs').where('id', summary.runId).first('pulled', 'loaded', 'rejected', 'waiting', 'stale');
        assert.deepEqual([run.pulled, run.loaded, run.rejected, run.waiting, run.stale].map(Number), [4, 2, 1, 0, 1]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      const rows = await stored(t.store, 'p1', 'igaming', 'customers');
      assert.deepEqual(rows.map((r) => [r.customer_id, r.kyc_status_id ?? null]), [['c1', 'approved'], ['c2', 'pending'], ['c3', null]]);
    });

    it('two overlapping backfill windows committing out of order: the newer versions stay', async () => {
      const window = (lmd: string, status: string) => raw(['c1', 'c2', 'c3'].map((id) => customer(id, { kyc_status_id: status, last_modified_date: lmd })));
      const newer = await loader.transaction(async (tx) => tx.load({ partner: 'p1', variant: 'igaming', entity: 'customers', runId: 'backfill-b', records: window('2026-11-06T00:00:00Z', 'approved') }));
      const older = await loader.transaction(async (tx) => tx.load({ partner: 'p1', variant: 'igaming', entity: 'customers', runId: 'backfill-a', records: window('2026-11-05T23:59:59Z', 'pending') }));
      assert.deepEqual([counts(newer), counts(older)], [[3, 3, 0, 0, 0], [3, 0, 0, 0, 3]]);
      const rows = await t.store.knex('customers').orderBy('customer_id').select('kyc_status_id', 'run_id');
      assert.deepEqual(rows.map((r: { kyc_status_id: string; run_id: string }) => [r.kyc_status_id, r.run_id]), [['approved', 'backfill-b'], ['approved', 'backfill-b'], ['approved', 'backfill-b']]);
    });

    it('a replay whose load fails closes its run as failed with the error, and leaves the reject open', async () => {
      const { def, cleanup } = await exampleDefinition('igaming', 'http://127.0.0.1:4010');
      try {
        const bad = { customer_id: 'c1', signup_date: '2026-13-01T00:00:00Z', affiliate_id: 'aff-1' };
        await load('customers', [{ position: 1, value: bad, source: bad }]);
        await t.store.knex('rejects').update({ payload: JSON.stringify({ ...bad, signup_date: '2026-11-01T09:30:00Z' }) });
        // The store refuses the replay's write (a job's mark fails in the load transaction).
        const failing = loaderWith(t.store, [{ name: 'refuses', async mark() { throw new Error('disk full'); } }]);
        await assert.rejects(replayRejects(failing, 'p1', def, 'customers'), /disk full/);
        const runs = (await t.store.knex('runs').where({ partner_id: 'p1', kind: 'replay' }).select('status', 'error')) as { status: string; error: string }[];
        assert.deepEqual(runs.map((r) => [r.status, r.error]), [['failed', 'disk full']]);
        assert.equal((await listRejects(t.store.knex, { partner: 'p1', status: 'open' })).length, 1);
      } finally {
        cleanup();
      }
    });

    it('rejects --replay of an old reject after a newer version loaded: the replay is stale, the reject closed as superseded', async () => {
      const { def, cleanup } = await exampleDefinition('igaming', 'http://127.0.0.1:4010');
      try {
        const old = { customer_id: 'c1', signup_date: '01/11/2026', affiliate_id: 'aff-1', kyc_status_id: 'pending', last_modified_date: '2026-11-01T00:00:00Z' };
        // Pulled with a mapping that could not read its signup date: the reject has no key.
        await load('customers', [{ position: 1, value: old, source: old, mappingErrors: [{ field: 'signup_date', rule: 'mapping', message: 'not a date-time' }] }]);
        const newer = customer('c1', { kyc_status_id: 'approved', last_modified_date: '2026-11-02T00:00:00Z' });
        await load('customers', [{ position: 1, value: newer, source: newer }], 'run-2');
        assert.equal((await listRejects(t.store.knex, { partner: 'p1', status: 'open' })).length, 1, 'a different payload without a key: still open');
        // The fix: the signup date now maps; the replayed record is valid and older than the stored one.
        old.signup_date = '2026-11-01T09:30:00Z';
        await t.store.knex('rejects').update({ payload: JSON.stringify(old) });
        const [result] = await replayRejects(loader, 'p1', def, 'customers');
        assert.deepEqual([result?.replayed, result?.superseded, result?.stillRejected, result?.counts.loaded, result?.counts.stale], [0, 1, 0, 0, 1]);
        assert.equal((await stored(t.store, 'p1', 'igaming', 'customers'))[0]?.kyc_status_id, 'approved');
        const [closed] = await listRejects(t.store.knex, { partner: 'p1' });
        assert.deepEqual([closed?.status, closed?.resolution, closed?.resolved_run_id], ['resolved', 'superseded', result?.runId]);
        const run = await t.store.knex('runs').where('id', result?.runId).first('stale');
        assert.equal(Number(run.stale), 1);
      } finally {
        cleanup();
      }
    });
  });
}
