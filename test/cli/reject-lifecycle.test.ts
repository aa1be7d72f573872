/**
 * The reject lifecycle as a user meets it, through the CLI as a subprocess against the sandbox
 * partner, on every store backend: a mapping that rejects every customer, the definition fixed, a
 * backfill that loads them all, and `status` showing no open rejects (found: 11,000 stayed open
 * with no way to clear them); open, resolved and discarded rejects listed and closed on purpose;
 * an old file imported after newer records, its records counted stale.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { Entity } from '../../src/types.js';
import { runCli, type CliResult } from '../support/cli.js';
import { sandboxCli } from '../support/cli-config.js';
import { SANDBOX_SECRET } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';

const PARTNER = 'sandbox-casino';

interface Counts { pulled: number; loaded: number; rejected: number; waiting: number; stale: number }
interface RunJson { streams: { stream: Entity; status: string; counts: Counts }[] }
interface StatusJson { streams: { stream: Entity; rejects_open: number }[] }
interface RejectJson { id: number; stream: Entity; status: string; record_key: string | null; resolution: string | null; resolved_run_id: string | null; resolved_by: string | null; reason: string | null; errors: { field: string; rule: string }[] }

for (const backend of STORES) {
  describe(`reject lifecycle through the CLI on ${backend.name}`, function () {
    this.timeout(120_000);
    const fx = sandboxCli(backend, PARTNER, { seed: 11, customers: 30 });

    const cli = (args: string[]): Promise<CliResult> =>
      runCli(['--config', fx.config.dir, '--store', fx.store.url, ...args], { env: { SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, LOG_LEVEL: 'warn' } });
    async function cliJson<T>(args: string[], code = 0): Promise<T> {
      const r = await cli([...args, '--json']);
      assert.equal(r.code, code, `partner-sync ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
      return JSON.parse(r.stdout) as T;
    }
    const openRejects = async () => (await cliJson<StatusJson>(['status'])).streams.find((s) => s.stream === 'customers')?.rejects_open;
    /** A mapping that cannot read the partner's signup dates: every customer is rejected, with no key to read. */
    const rejectingMapping = (y: string) => y.replace(/fields: \{\}/, 'fields:\n        signup_date: { from: signup_date, datetime: { format: "dd/MM/yyyy HH:mm", zone: UTC } }');

    it('a mapping that rejects every customer, the definition fixed, a backfill: status shows 0 open rejects, each closed as loaded by the backfill', async () => {
      fx.config.write(rejectingMapping);
      // 100% rejected: the reject-rate guard fails the run (exit 1), the rejects are kept.
      const run = await cliJson<RunJson>(['run', PARTNER, '--stream', 'customers'], 1);
      const pulled = run.streams[0]!.counts;
      assert.deepEqual([pulled.pulled, pulled.loaded, pulled.rejected], [30, 0, 30]);
      assert.equal(await openRejects(), 30);
      const listed = await cliJson<{ rejects: RejectJson[] }>(['rejects', PARTNER]);
      assert.equal(listed.rejects.length, 30);
      assert.ok(listed.rejects.every((r) => r.status === 'open' && r.record_key === null), 'a failed mapping leaves no key to read');

      fx.config.write(); // the fix
      const backfill = await cliJson<RunJson & { streams: { runId: string }[] }>(['backfill', PARTNER, '--from', fx.sandbox.data.from, '--to', fx.sandbox.data.to, '--stream', 'customers']);
      const loaded = backfill.streams[0]!.counts;
      assert.deepEqual([loaded.pulled, loaded.loaded, loaded.rejected, loaded.stale], [30, 30, 0, 0]);
      assert.equal(await openRejects(), 0);
      const text = await cli(['status']);
      assert.match(text.stdout, new RegExp(`^${PARTNER}\\s+customers\\s.*\\s0\\s+0$`, 'm'));
      assert.match((await cli(['rejects', PARTNER])).stdout, /^sandbox-casino: no open rejects$/m);
      const all = await cliJson<{ rejects: RejectJson[] }>(['rejects', PARTNER, '--all']);
      assert.equal(all.rejects.length, 30, 'kept for audit');
      assert.deepEqual([...new Set(all.rejects.map((r) => `${r.status} ${r.resolution} ${r.resolved_run_id}`))], [`resolved loaded ${backfill.streams[0]!.runId}`]);
    });

    // The discard commands' text and audit fields once; the lifecycle's store work runs on every store above and in test/store.
    if (backend === STORES[0]) it('--discard closes open rejects with who, when and why; without --reason it is a usage error; --all lists them', async () => {
      fx.config.write(rejectingMapping);
      await cliJson<RunJson>(['run', PARTNER, '--stream', 'customers'], 1);
      const missing = await cli(['rejects', PARTNER, '--discard']);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /--discard needs --reason TEXT/);
      const stray = await cli(['rejects', PARTNER, '--reason', 'x']);
      assert.equal(stray.code, 2);
      assert.match(stray.stderr, /--reason goes with --discard/);
      const badDate = await cli(['rejects', PARTNER, '--discard', '--reason', 'x', '--before', 'last week']);
      assert.equal(badDate.code, 2);
      assert.match(badDate.stderr, /--before must be a date YYYY-MM-DD/);
      assert.equal(await openRejects(), 30);

      // Nothing was last seen before the partner's first day.
      const none = await cliJson<{ discarded: number }>(['rejects', PARTNER, '--discard', '--before', fx.sandbox.data.from, '--reason', 'too old']);
      assert.equal(none.discarded, 0);
      const done = await cliJson<{ discarded: number }>(['rejects', PARTNER, '--discard', '--stream', 'customers', '--reason', 'partner test accounts, never to be loaded']);
      assert.equal(done.discarded, 30);
      assert.equal(await openRejects(), 0);
      const all = await cliJson<{ rejects: RejectJson[] }>(['rejects', PARTNER, '--all']);
      assert.deepEqual([...new Set(all.rejects.map((r) => [r.status, r.resolution, r.resolved_by, r.reason].join('|')))],
        [`resolved|discarded|${userInfo().username}|partner test accounts, never to be loaded`]);
      const text = await cli(['rejects', PARTNER, '--all']);
      assert.match(text.stdout, /^ID\s+STREAM\s+SEEN\s+FIELD\s+RULE\s+MESSAGE\s+STATUS$/m);
      assert.match(text.stdout, /discarded \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} by \S+: partner test accounts/);
      // The same bad records pulled again stay discarded: the decision was about these payloads.
      await cliJson<RunJson>(['run', PARTNER, '--stream', 'customers'], 1);
      assert.equal(await openRejects(), 0);
    });
  });
}

for (const backend of STORES) {
  describe(`import of an old file through the CLI on ${backend.name}`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let dir: string;
    beforeEach(async () => {
      t = await backend.create();
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-import-old-'));
    });
    afterEach(async () => {
      await t.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    const importFile = (name: string, records: object[], json: boolean) => {
      const file = join(dir, name);
      writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n'));
      return runCli(['--store', t.url, 'import', 'p1', '--variant', 'igaming', '--entity', 'customers', file, ...(json ? ['--json'] : [])]);
    };
    const c = (id: string, lmd: string, kyc: string) => ({ customer_id: id, signup_date: '2026-11-01T09:30:00Z', affiliate_id: 'aff-1', last_modified_date: lmd, kyc_status_id: kyc });

    it('counts older records as stale (table and --json), keeps the newer rows', async () => {
      const newer = await importFile('new.ndjson', [c('c1', '2026-11-10T00:00:00Z', 'approved'), c('c2', '2026-11-10T00:00:00Z', 'approved')], true);
      assert.equal(newer.code, 0, newer.stderr);
      const old = await importFile('old.ndjson', [c('c1', '2026-11-01T00:00:00Z', 'pending'), c('c2', '2026-11-01T00:00:00+00:00', 'pending'), c('c3', '2026-11-01T00:00:00Z', 'pending')], true);
      assert.equal(old.code, 0, old.stderr);
      const out = JSON.parse(old.stdout) as { total: number; loaded: number; rejected: number; waiting: number; stale: number };
      assert.deepEqual([out.total, out.loaded, out.rejected, out.waiting, out.stale], [3, 1, 0, 0, 2]);
      const text = await importFile('old2.ndjson', [c('c1', '2026-11-02T00:00:00Z', 'pending')], false);
      assert.match(text.stdout, /1 records, 0 loaded, 0 rejected, 0 waiting for their customer, 1 stale \(older than the version stored, not applied\)/);
      const rows = (await t.store.knex('customers').orderBy('customer_id').select('customer_id', 'kyc_status_id')) as { customer_id: string; kyc_status_id: string }[];
      assert.deepEqual(rows.map((r) => [r.customer_id, r.kyc_status_id]), [['c1', 'approved'], ['c2', 'approved'], ['c3', 'pending']]);
    });
  });
}
