/**
 * `partner-sync tombstones` as a subprocess, on every store: the records a delete moved to
 * tombstones, with how and when it was learned and what went with a deleted customer.
 */
import assert from 'node:assert/strict';
import type { Loader } from '../../src/pipeline/load.js';
import { runCli } from '../support/cli.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { customer, deposit, raw } from '../support/records.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

for (const backend of STORES) {
  describe(`partner-sync tombstones (${backend.name})`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let loader: Loader;
    const clock = fixedClock('2026-11-22T10:00:00.000Z');
    beforeEach(async () => {
      t = await backend.create(clock);
      loader = loaderWithEveryJob(t.store);
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId: 'r1', records: raw([customer('c1'), customer('c2')]) });
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'transactions', runId: 'r2', records: raw([deposit('d1', 'c1'), deposit('d2', 'c2')]) });
    });
    afterEach(async () => t.drop());

    it('lists what was deleted, how and when, and what went with a customer; --json has the rows', async () => {
      const empty = await runCli(['--store', t.url, 'tombstones', 'casino'], { clock });
      assert.equal(empty.code, 0, empty.stderr);
      assert.match(empty.stdout, /casino: no records deleted at the source/);
      await loader.remove({ partner: 'casino', variant: 'igaming', entity: 'transactions', ids: ['d1'], learnedVia: 'push', runId: 'del-1' });
      await loader.remove({ partner: 'casino', variant: 'igaming', entity: 'customers', ids: ['c2'], learnedVia: 'push', runId: 'del-2' });
      const table = await runCli(['--store', t.url, 'tombstones', 'casino'], { clock });
      assert.equal(table.code, 0, table.stderr);
      assert.match(table.stdout, /ID\s+STREAM\s+RECORD\s+CUSTOMER\s+LEARNED VIA\s+LEARNED AT\s+WITH/);
      assert.match(table.stdout, /3\s+transactions\s+d2\s+c2\s+push\s+2026-11-22T10:00:00\s+customer's 2/);
      assert.match(table.stdout, /3 record\(s\) deleted at the source/);
      const json = await runCli(['--store', t.url, 'tombstones', 'casino', '--customer', 'c1', '--json'], { clock });
      assert.equal(json.code, 0, json.stderr);
      const body = JSON.parse(json.stdout) as { tombstones: Record<string, unknown>[] };
      assert.deepEqual(body.tombstones.map((x) => [x.id, x.entity, x.record_key, x.learned_via, x.learned_at, x.cascade_of, (x.row as Record<string, unknown>).amount_currency]),
        [[1, 'transactions', 'd1', 'push', '2026-11-22T10:00:00.000000Z', null, 100.5]]);
    });
  });
}
