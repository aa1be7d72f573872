/**
 * The reject-rate guard, as a user meets it: a mapping that cannot read the partner's ids rejects
 * every record of a window; `run` exits 1 saying so and naming the top reasons, the stream's
 * state does not move, the rejects are kept, `status --check` exits 1 for that stream and the
 * worker's freshness monitor raises its alert. A bad max_reject_ratio is a definition error.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CursorState } from '../../jobs/cursor-state.js';
import { packageRoot } from '../../src/paths.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { listRejects } from '../../src/store/rejects.js';
import { readState } from '../../src/store/sync-state.js';
import type { SpecRecord } from '../../src/types.js';
import { webhookAlerter, type AlertEvent } from '../../src/worker/alert.js';
import { FreshnessMonitor } from '../../src/worker/freshness-monitor.js';
import { localLocks } from '../../src/store/stream-locks.js';
import { readStates } from '../../src/worker/store-ports.js';
import { runCli } from '../support/cli.js';
import { SANDBOX_SECRET } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';
import { FakeTimers } from '../worker/support/fake-timers.js';
import { captureLogger } from '../worker/support/log-capture.js';

for (const backend of STORES) {
  describe(`the reject-rate guard on ${backend.name}`, function () {
    this.timeout(120_000);
    let sandbox: Sandbox;
    let dir: string;
    let created: TestStore | undefined;
    afterEach(async () => {
      await sandbox?.close();
      rmSync(dir, { recursive: true, force: true });
      await created?.drop();
      created = undefined;
    });

    const writeDefinition = (edit: (yaml: string) => string = (y) => y) => {
      const yaml = readFileSync(join(packageRoot(), 'config', 'partners', 'sandbox-casino.yaml'), 'utf8')
        .replace(/base_url: .*/, `base_url: ${sandbox.url}`)
        .replace(/^(\s+)lookback: (\S+).*$/gm, `$1lookback: $2\n$1start: ${sandbox.data.from}T00:00:00Z`);
      writeFileSync(join(dir, 'partners', 'sandbox-casino.yaml'), edit(yaml));
    };

    it('a mapping that cannot read the ids: run exits 1 naming the top reasons, the state does not move, the rejects are kept, status --check exits 1, the worker alerts', async () => {
      sandbox = await startSandbox({ port: 0, seed: 31, customers: 20, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-guard-'));
      mkdirSync(join(dir, 'partners'));
      const t = await backend.create();
      created = t;
      const env = { SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, STORE_URL: t.url, LOG_LEVEL: 'error' };
      const run = ['--config', dir, 'run', 'sandbox-casino', '--stream', 'customers'];
      const runAll = ['--config', dir, 'run', 'sandbox-casino'];
      writeDefinition();
      const first = await runCli(runAll, { env });
      assert.equal(first.code, 0, first.stderr + first.stdout);
      const before = (await readState(t.store.knex, 'sandbox-casino', 'customers')) as CursorState;
      assert.ok(before.watermark && before.start);

      // 200 new customers, then a definition whose mapping reads the id from a field the partner does not send.
      const template = sandbox.data.customers('igaming')[0] as SpecRecord;
      for (let i = 0; i < 200; i++) sandbox.data.upsertCustomer('igaming', { ...template, customer_id: `new-${i}`, email: `new-${i}@example.test` });
      writeDefinition((yaml) => yaml.replace('      fields: {}', '      fields:\n        customer_id: player.id'));
      const broken = await runCli(run, { env });
      assert.equal(broken.code, 1, broken.stdout + broken.stderr);
      assert.match(broken.stdout, /customers: failed: sandbox-casino\/customers window from \S+: 20[0-9] of 20[0-9] records rejected \(100%\), more than max_reject_ratio 0\.5: the window is stopped and the stream's start does not move; fix the definition or the source, then run again\. Top reasons: customer_id required \(20[0-9]\)/);

      const after = (await readState(t.store.knex, 'sandbox-casino', 'customers')) as CursorState;
      assert.deepEqual({ ...after, halted: undefined }, { ...before, halted: undefined }, 'watermark, start and greatest cursor value unchanged');
      assert.match(after.halted?.detail ?? '', /more than max_reject_ratio 0\.5/);
      const rejects = await listRejects(t.store.knex, { partner: 'sandbox-casino' });
      assert.ok(rejects.length >= 200, `${rejects.length} rejects kept`);
      assert.equal(await t.store.knex('customers').where({ customer_id: 'new-0' }).first(), undefined);

      const check = await runCli(['--config', dir, 'status', '--check', '--json'], { env });
      assert.equal(check.code, 1, check.stderr);
      const breaches = (JSON.parse(check.stdout) as { check: { breaches: { partner: string; stream: string; state: string; detail: string }[] } }).check.breaches;
      assert.deepEqual(breaches.map((b) => [b.partner, b.stream, b.state]), [['sandbox-casino', 'customers', 'stopped']], 'the other streams are fresh');
      assert.match(breaches[0]?.detail ?? '', /^stopped: .*records rejected/);

      // The worker's freshness monitor reads the same state and raises its alert.
      const received: AlertEvent[] = [];
      const hook = createServer((req, res) => {
        let body = '';
        req.on('data', (d: Buffer) => (body += d.toString()));
        req.on('end', () => {
          received.push(JSON.parse(body) as AlertEvent);
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
      try {
        const { logger } = captureLogger();
        const monitor = new FreshnessMonitor({
          timers: new FakeTimers(new Date().toISOString()), logger, locks: localLocks(), graceMs: 0,
          alerter: webhookAlerter(`http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`, { logger }),
          streams: () => [{ partner: 'sandbox-casino', stream: 'customers' }], readStates: () => readStates(t.store),
        });
        monitor.start();
        await monitor.check();
        await monitor.stop();
      } finally {
        hook.close();
      }
      assert.deepEqual(received.map((e) => [e.event, e.partner, e.stream, e.state]), [['freshness_breach', 'sandbox-casino', 'customers', 'stopped']]);

      // Fixed: the same window loads and the stream is fresh again.
      writeDefinition();
      const fixed = await runCli(runAll, { env });
      assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
      assert.ok(await t.store.knex('customers').where({ customer_id: 'new-199' }).first());
      assert.equal(((await readState(t.store.knex, 'sandbox-casino', 'customers')) as CursorState).halted, undefined);
      assert.equal((await runCli(['--config', dir, 'status', '--check'], { env })).code, 0);
    });

    it('a daily window over the ratio replaces nothing, keeps its rejects, is not recorded as loaded and stops the stream until a day loads', async () => {
      sandbox = await startSandbox({ port: 0, seed: 33, customers: 80, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-guard-'));
      mkdirSync(join(dir, 'partners'));
      const t = await backend.create();
      created = t;
      const env = { SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, STORE_URL: t.url, LOG_LEVEL: 'error' };
      writeDefinition();
      const first = await runCli(['--config', dir, 'run', 'sandbox-casino'], { env });
      assert.equal(first.code, 0, first.stderr + first.stdout);
      const stateBefore = await readState(t.store.knex, 'sandbox-casino', 'activity');
      const rowsBefore = await t.store.knex('gaming_activity').where({ partner_id: 'sandbox-casino' }).orderBy(['date', 'customer_id', 'game_type', 'currency']);
      const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      const due = rowsBefore.filter((r: { date: string }) => String(r.date).slice(0, 10) === yesterday).length;
      assert.ok(due >= 20, `the sandbox has ${due} activity rows on ${yesterday}: enough to be judged`);

      // The mapping reads the customer from a field the partner does not send: every record of every day is rejected.
      writeDefinition((yaml) => yaml.replace(/( {2}activity:\n(?:.*\n)*? {4}schedule: .*\n)/, '$1    mapping:\n      passthrough: true\n      fields:\n        customer_id: player.id\n'));
      const broken = await runCli(['--config', dir, 'run', 'sandbox-casino', '--stream', 'activity'], { env });
      assert.equal(broken.code, 1, broken.stdout + broken.stderr);
      assert.match(broken.stdout, /activity: failed: sandbox-casino\/activity \d{4}-\d{2}-\d{2}: (\d+) of \1 records rejected \(100%\), more than max_reject_ratio 0\.5: .*Top reasons: customer_id required \(\d+\)/);
      const rowsAfter = await t.store.knex('gaming_activity').where({ partner_id: 'sandbox-casino' }).orderBy(['date', 'customer_id', 'game_type', 'currency']);
      assert.deepEqual(rowsAfter, rowsBefore, 'no stored day was replaced');
      const rejects = await listRejects(t.store.knex, { partner: 'sandbox-casino' });
      assert.ok(rejects.filter((r) => r.entity === 'activity').length >= 20, 'the window\'s rejects are kept');
      const halted = (await readState(t.store.knex, 'sandbox-casino', 'activity')) as { halted?: { detail: string } };
      assert.match(halted.halted?.detail ?? '', /more than max_reject_ratio 0\.5/);
      assert.deepEqual({ ...halted, halted: undefined }, { ...(stateBefore as object), halted: undefined }, 'no day recorded as loaded');
      const check = await runCli(['--config', dir, 'status', '--check', '--json'], { env });
      assert.equal(check.code, 1, check.stderr);
      const breaches = (JSON.parse(check.stdout) as { check: { breaches: { stream: string; state: string }[] } }).check.breaches;
      assert.deepEqual(breaches.map((b) => [b.stream, b.state]), [['activity', 'stopped']]);

      writeDefinition();
      const fixed = await runCli(['--config', dir, 'run', 'sandbox-casino', '--stream', 'activity'], { env });
      assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
      assert.equal(((await readState(t.store.knex, 'sandbox-casino', 'activity')) as { halted?: unknown }).halted, undefined);
      assert.equal((await runCli(['--config', dir, 'status', '--check'], { env })).code, 0);
    });

    it('max_reject_ratio outside 0..1 is a definition error naming the key', async () => {
      sandbox = await startSandbox({ port: 0, seed: 32, customers: 2, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-guard-'));
      mkdirSync(join(dir, 'partners'));
      const env = { SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, LOG_LEVEL: 'error' };
      writeDefinition((yaml) => yaml.replace('variant: igaming', 'variant: igaming\nmax_reject_ratio: 1.5'));
      let checked = await runCli(['--config', dir, 'check', '--partner', 'sandbox-casino'], { env });
      assert.equal(checked.code, 2, checked.stdout + checked.stderr);
      assert.match(checked.stdout, /sandbox-casino\.yaml: max_reject_ratio \(line \d+\): must be <= 1, got 1\.5/);
      writeDefinition((yaml) => yaml.replace('variant: igaming', 'variant: igaming\nmax_reject_ratio: half'));
      checked = await runCli(['--config', dir, 'check', '--partner', 'sandbox-casino'], { env });
      assert.equal(checked.code, 2, checked.stdout + checked.stderr);
      assert.match(checked.stdout, /sandbox-casino\.yaml: max_reject_ratio \(line \d+\): must be a number, got "half"/);
    });
  });
}
