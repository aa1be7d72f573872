/**
 * Rejects close when their record loads valid later (by key, or by the same raw payload when no
 * key could be read), stay open when only an older version loads, and close at once as
 * superseded when they are older than the stored record; on every store backend.
 */
import assert from 'node:assert/strict';
import { Loader } from '../../src/pipeline/load.js';
import { countOpenRejects, listRejects } from '../../src/store/rejects.js';
import type { RawRecord } from '../../src/types.js';
import { loaderWith } from '../support/loader.js';
import { customer, raw } from '../support/records.js';
import { STORES, fixedClock, type TestStore } from '../support/stores.js';

for (const backend of STORES) {
  describe(`reject lifecycle on ${backend.name}`, () => {
    let t: TestStore;
    let loader: Loader;
    beforeEach(async () => {
      t = await backend.create(fixedClock());
      loader = loaderWith(t.store, []);
    });
    afterEach(async () => t.drop());

    const load = (records: RawRecord[], runId: string) => loader.load({ partner: 'p1', variant: 'igaming', entity: 'customers', runId, records });
    const rejects = async () => (await listRejects(t.store.knex, { partner: 'p1' })).map((r) => [r.record_key, r.status, r.resolution, r.resolved_run_id]);

    it('a reject closes as loaded when a valid version of its key loads later, not when an older one does', async () => {
      await load(raw([
        customer('c1', { lang_id: 'EN', last_modified_date: '2026-11-02T00:00:00Z' }),
        customer('c2', { lang_id: 'EN', last_modified_date: '2026-11-02T00:00:00Z' }),
      ]), 'run-1');
      assert.deepEqual(await rejects(), [['c1', 'open', null, null], ['c2', 'open', null, null]]);
      await load(raw([
        customer('c1', { lang_id: 'en', last_modified_date: '2026-11-03T00:00:00Z' }),
        customer('c2', { lang_id: 'en', last_modified_date: '2026-11-01T00:00:00Z' }),
      ]), 'run-2');
      // c2 loaded (nothing newer was stored) but the partner's newest state is still the bad one.
      assert.deepEqual(await rejects(), [['c1', 'resolved', 'loaded', 'run-2'], ['c2', 'open', null, null]]);
      assert.deepEqual([...(await countOpenRejects(t.store.knex))], [['p1/customers', 1]]);
    });

    it('a reject without a readable key closes when its same raw payload loads valid (a mapping fixed)', async () => {
      const source = { id: 'c1', signup: '01/11/2026 09:30', aff: 'aff-1' };
      await load([{ position: 1, value: source, source, mappingErrors: [{ field: 'signup_date', rule: 'mapping', message: 'unreadable' }] }], 'run-1');
      const other = { ...source, id: 'c2' };
      await load([{ position: 1, value: customer('c2'), source: other }], 'run-2');
      assert.deepEqual(await rejects(), [[null, 'open', null, null]]);
      await load([{ position: 1, value: customer('c1'), source }], 'run-3');
      assert.deepEqual(await rejects(), [[null, 'resolved', 'loaded', 'run-3']]);
    });

    it('an invalid record older than the stored version closes at once as superseded; a closed reject seen again reopens', async () => {
      await load(raw([customer('c1', { last_modified_date: '2026-11-03T00:00:00Z' })]), 'run-1');
      const old = customer('c1', { lang_id: 'EN', last_modified_date: '2026-11-01T00:00:00Z' });
      const result = await load(raw([old]), 'run-2');
      assert.equal(result.rejected, 1);
      assert.deepEqual(await rejects(), [['c1', 'resolved', 'superseded', 'run-2']]);
      assert.deepEqual([...(await countOpenRejects(t.store.knex))], []);
      const bad = customer('c3', { lang_id: 'EN' });
      await load(raw([bad]), 'run-3');
      await load(raw([customer('c3')]), 'run-4');
      await load(raw([bad]), 'run-5');
      assert.deepEqual((await rejects())[1], ['c3', 'open', null, null]);
    });
  });
}
