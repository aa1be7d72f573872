/**
 * `partner-sync deletes list|apply|discard` and the deletes lines of `status`, as subprocesses on
 * every store: a hold the mass-delete guard made is listed with why, `status` shows it and
 * `status --check` fails while it waits, `apply` books the clawbacks (100 USD per deleted FTD, by
 * hand) and closes the hold with who decided, a second apply is refused (exit 1), `discard` keeps
 * the records; `--json` throughout.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { money } from '../../src/kernel/money.js';
import type { Loader } from '../../src/pipeline/load.js';
import { runCli } from '../support/cli.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CPA, plansFrom, plansYaml } from '../support/plans.js';
import { customer, deposit, raw } from '../support/records.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

for (const backend of STORES) {
  describe(`partner-sync deletes (${backend.name})`, function () {
    this.timeout(120_000);
    let t: TestStore;
    let loader: Loader;
    let config: string;
    const clock = fixedClock('2026-11-22T10:00:00.000Z');
    beforeEach(async () => {
      t = await backend.create(clock);
      config = mkdtempSync(join(tmpdir(), 'partner-sync-deletes-'));
      mkdirSync(join(config, 'partners'));
      writeFileSync(join(config, 'commissions.yaml'), plansYaml(CPA));
      loader = loaderWithEveryJob(t.store, { plans: plansFrom(plansYaml(CPA)) });
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId: 'r1', records: raw(ids('c', 40).map((c) => customer(c))) });
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'transactions', runId: 'r2', records: raw(ids('c', 40).map((c) => deposit(`d${c.slice(1)}`, c, { currency: 'USD', amount_currency: 50, amount_usd: 50 }))) });
    });
    afterEach(async () => {
      await t.drop();
      rmSync(config, { recursive: true, force: true });
    });
    const cli = (...args: string[]) => runCli(['--store', t.url, '--config', config, ...args], { clock });
    const ledger = async () => ((await t.store.knex('commission_ledger').select('amount_usd')) as { amount_usd: unknown }[]).reduce((s, l) => s.plus(money(String(l.amount_usd))), money(0)).toFixed(2);

    it('lists a hold, status shows it and --check fails; apply claws back exactly its FTDs; a second apply is refused', async () => {
      const none = await cli('deletes', 'list');
      assert.equal(none.code, 0, none.stderr);
      assert.match(none.stdout, /no held deletes/);
      // 25 of the day's 40 deposits in one run: past 5% and past 20.
      const held = await loader.remove({ partner: 'casino', variant: 'igaming', entity: 'transactions', ids: ids('d', 25), learnedVia: 'soft_delete', runId: 'run-x' });
      const id = String(held.held?.holdId);
      const list = await cli('deletes', 'list');
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, new RegExp(`${id}\\s+casino\\s+transactions\\s+25\\s+soft_delete\\s+2026-11-22T10:00:00\\s+held\\s+would delete 25 of the 40 transactions of 2026-11-02`));
      assert.match(list.stdout, /partner-sync deletes apply ID/);
      const status = await cli('status', '--check');
      assert.equal(status.code, 1, status.stdout);
      assert.match(status.stdout, /casino\s+transactions\s+0\s+25 in 1 hold\(s\)\s+-/);
      assert.match(status.stdout, /1 delete hold\(s\) wait for an operator/);
      const statusJson = JSON.parse((await cli('status', '--json')).stdout) as { deletes: unknown[] };
      assert.deepEqual(statusJson.deletes, [{ partner: 'casino', stream: 'transactions', deleted: 0, held: 25, holds: 1, discarded: 0 }]);
      assert.equal(await ledger(), '4000.00');

      const applied = await cli('deletes', 'apply', id, '--json');
      assert.equal(applied.code, 0, applied.stderr);
      const body = JSON.parse(applied.stdout) as { deleted: number; hold: { state: string; decided_by: string; count: number } };
      assert.equal(body.deleted, 25);
      assert.equal(body.hold.state, 'applied');
      assert.ok(body.hold.decided_by.length > 0);
      assert.equal(await ledger(), '1500.00');
      assert.equal(Number(((await t.store.knex('transactions').count({ n: '*' }).first()) as { n: unknown }).n), 15);
      const again = await cli('deletes', 'apply', id);
      assert.equal(again.code, 1);
      assert.match(again.stderr, new RegExp(`deletes apply: delete hold ${id} was applied already`));
      const after = await cli('status', '--check');
      assert.match(after.stdout, /casino\s+transactions\s+25\s+-\s+-/);
      const all = JSON.parse((await cli('deletes', 'list', '--all', '--json')).stdout) as { holds: { id: number; state: string }[] };
      assert.deepEqual(all.holds.map((h) => [h.id, h.state]), [[Number(id), 'applied']]);
    });

    it('discard keeps the records; a bad id is a usage error', async () => {
      const held = await loader.remove({ partner: 'casino', variant: 'igaming', entity: 'customers', ids: ids('c', 30), learnedVia: 'reconcile', runId: 'scan-1' });
      const out = await cli('deletes', 'discard', String(held.held?.holdId));
      assert.equal(out.code, 0, out.stderr);
      assert.match(out.stdout, new RegExp(`hold ${held.held?.holdId} discarded: 30 customers of casino kept`));
      assert.equal(Number(((await t.store.knex('customers').count({ n: '*' }).first()) as { n: unknown }).n), 40);
      assert.equal(await ledger(), '4000.00');
      const bad = await cli('deletes', 'apply', 'x');
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /ID must be a hold's number/);
    });
  });
}
