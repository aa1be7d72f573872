/**
 * Versions end to end over real HTTP: a transactions stream's change field (the sandbox's
 * `updated_at`, not a spec field) is the version kept beside each stored row, so a backfill that
 * reads an older version of a transaction (a partner's lagging read replica, a batch job stamping
 * the business time) does not overwrite the newer one; a newer change still applies. Through the
 * CLI as a subprocess, on every store backend.
 */
import assert from 'node:assert/strict';
import { versionText } from '../../src/store/versions.js';
import type { Entity } from '../../src/types.js';
import { runCli } from '../support/cli.js';
import { sandboxCli } from '../support/cli-config.js';
import { SANDBOX_SECRET } from '../support/sandbox.js';
import { STORES } from '../support/stores.js';

const PARTNER = 'sandbox-casino';

interface Counts { pulled: number; loaded: number; rejected: number; waiting: number; stale: number }
interface RunJson { streams: { stream: Entity; status: string; counts: Counts }[] }

for (const backend of STORES) {
  describe(`record versions from a pulled change field on ${backend.name}`, function () {
    this.timeout(120_000);
    const fx = sandboxCli(backend, PARTNER, { seed: 7, customers: 30 });

    async function cliJson(args: string[]): Promise<RunJson> {
      const r = await runCli(['--config', fx.config.dir, '--store', fx.store.url, ...args, '--json'], { env: { SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, LOG_LEVEL: 'warn' } });
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout}\n${r.stderr}`);
      return JSON.parse(r.stdout) as RunJson;
    }
    const storedTx = async (id: string) => fx.store.store.knex('transactions').where({ partner_id: PARTNER, transaction_id: id }).first('status', 'source_version');

    it('a backfill reading an older updated_at of a transaction leaves the newer row; a newer change applies', async () => {
      await cliJson(['run', PARTNER]);
      const latest = fx.sandbox.data.transactions('igaming').at(-1)!;
      const id = latest.transaction_id as string;
      const updated = latest.updated_at as string;
      const before = await storedTx(id);
      assert.deepEqual(before, { status: latest.status, source_version: versionText(updated) });

      // The partner serves a version stamped one second before the one we hold.
      const older = new Date(Date.parse(updated) - 1000);
      const olderStatus = latest.status === 'reversed' ? 'declined' : 'reversed';
      fx.sandbox.data.setTransactionStatus('igaming', id, olderStatus, older);
      const day = older.toISOString().slice(0, 10);
      const backfill = await cliJson(['backfill', PARTNER, '--from', day, '--to', updated.slice(0, 10), '--stream', 'transactions']);
      const c = backfill.streams[0]!.counts;
      assert.equal(c.stale, 1, JSON.stringify(c));
      assert.equal(c.pulled, c.loaded + c.rejected + c.waiting + c.stale);
      assert.deepEqual(await storedTx(id), before);

      // A change stamped later than the stored version applies.
      fx.sandbox.data.setTransactionStatus('igaming', id, 'declined', new Date(Date.now() - 60_000));
      const run = await cliJson(['run', PARTNER, '--stream', 'transactions']);
      assert.equal(run.streams[0]!.counts.stale, 0);
      assert.equal((await storedTx(id))?.status, 'declined');
    });
  });
}
