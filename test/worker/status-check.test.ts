/** `status --check` for monitoring: exit 1 and an error event on a freshness breach. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../src/store/store.js';
import { exampleCliConfig, type CliConfig } from '../support/cli-config.js';
import { SANDBOX_SECRET } from '../support/sandbox.js';
import { runCliEntry } from './support/worker-process.js';

describe('status --check', function () {
  this.timeout(60_000);
  let dir: string;
  let config: CliConfig;
  let store: Store;
  let env: Record<string, string>;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-check-'));
    config = exampleCliConfig('sandbox-casino', 'http://127.0.0.1:9');
    env = { SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, STORE_URL: `sqlite:${join(dir, 's.sqlite')}` };
    store = await openStore({ url: env.STORE_URL });
  });
  after(async () => {
    await store.close();
    config.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });
  const setState = async (stream: string, state: unknown) => {
    await store.knex('sync_state').insert({ partner_id: 'sandbox-casino', stream, state: JSON.stringify(state), updated_at: store.now() }).onConflict(['partner_id', 'stream']).merge();
  };
  const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
  const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

  it('exit 0 when every configured stream is within its target', async () => {
    await setState('customers', { watermark: ago(60_000) });
    await setState('transactions', { watermark: ago(60_000) });
    await setState('activity', { last_day: yesterday(), days: { [yesterday()]: ago(3_600_000) } });
    const r = await runCliEntry(['--config', config.dir, 'status', '--check'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /check ok: 3 stream\(s\) within their freshness target/);
    assert.ok(!/freshness_breach/.test(r.stderr));
  });

  it('exit 1, an error event and the breaches in --json when a stream is more than 5 minutes behind', async () => {
    await setState('transactions', { watermark: ago(9 * 60_000) });
    const r = await runCliEntry(['--config', config.dir, '--json', 'status', '--check'], env);
    assert.equal(r.code, 1, r.stderr);
    const out = JSON.parse(r.stdout) as { check: { ok: boolean; breaches: { partner: string; stream: string; state: string }[] } };
    assert.equal(out.check.ok, false);
    assert.deepEqual(out.check.breaches.map((b) => [b.partner, b.stream, b.state]), [['sandbox-casino', 'transactions', 'behind']]);
    const events = r.stderr.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const breach = events.find((e) => e.event === 'freshness_breach');
    assert.equal(breach?.level, 'error');
    assert.equal(breach?.partner, 'sandbox-casino');
    assert.equal(breach?.stream, 'transactions');
    assert.match(String(breach?.message), /9m behind \(target 5m\)/);
    // Without --check, status reports and exits 0 as before.
    assert.equal((await runCliEntry(['--config', config.dir, 'status'], env)).code, 0);
  });

  it('exit 1 when a definition is invalid: its streams are not being pulled, each stopped', async () => {
    await setState('transactions', { watermark: ago(60_000) });
    config.write((y) => y.replace(/per_page: 500/, 'per_page: 5000'));
    try {
      const r = await runCliEntry(['--config', config.dir, 'status', '--check'], env);
      assert.equal(r.code, 1);
      assert.match(r.stdout, /check failed: 3 of 3 stream\(s\) breach their freshness target \(sandbox-casino\/customers, sandbox-casino\/transactions, sandbox-casino\/activity\); 1 definition error/);
    } finally {
      config.write();
    }
  });

  it('a definition that exists and cannot load (its secret\'s variable unset) reads as such, not as no definition: file, path, reason; stopped', async () => {
    // Every stream was fresh until then: only the definition stops them.
    await setState('customers', { watermark: ago(60_000) });
    await setState('transactions', { watermark: ago(60_000) });
    await setState('activity', { last_day: yesterday(), days: { [yesterday()]: ago(3_600_000) } });
    const unset = { ...env, SANDBOX_CLIENT_SECRET: undefined };
    const line = config.base.split('\n').findIndex((l) => /client_secret: \$\{SANDBOX_CLIENT_SECRET\}/.test(l)) + 1;
    assert.ok(line > 0);
    const why = `definition invalid, not pulled: ${config.file}: source.auth.client_secret (line ${line}): environment variable SANDBOX_CLIENT_SECRET is not set`;

    const text = await runCliEntry(['--config', config.dir, 'status'], unset);
    assert.equal(text.code, 0, text.stderr);
    assert.doesNotMatch(text.stdout, /no definition/);
    const rows = text.stdout.split('\n').filter((l) => l.startsWith('sandbox-casino '));
    assert.deepEqual(rows.map((l) => [l.split(/ +/)[1], l.includes('stopped: definition invalid (below)')]), [['customers', true], ['transactions', true], ['activity', true]], text.stdout);
    assert.ok(text.stdout.includes(`sandbox-casino: the definition cannot load, its streams are not pulled:\n  ${config.file}: source.auth.client_secret (line ${line}): environment variable SANDBOX_CLIENT_SECRET is not set\n`), text.stdout);
    assert.match(text.stderr, /warning: .*sandbox-casino\.yaml: source\.auth\.client_secret \(line \d+\): environment variable SANDBOX_CLIENT_SECRET is not set/);

    const check = await runCliEntry(['--config', config.dir, 'status', '--check'], unset);
    assert.equal(check.code, 1, check.stderr);
    assert.match(check.stdout, /check failed: 3 of 3 stream\(s\) breach their freshness target \(sandbox-casino\/customers, sandbox-casino\/transactions, sandbox-casino\/activity\); 1 definition error\(s\)/);
    const events = check.stderr.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(events.filter((e) => e.event === 'freshness_breach').map((e) => [e.stream, e.state, e.level]), [['customers', 'stopped', 'error'], ['transactions', 'stopped', 'error'], ['activity', 'stopped', 'error']]);
    assert.ok(events.some((e) => e.event === 'definition_error' && e.path === 'source.auth.client_secret'));

    const json = await runCliEntry(['--config', config.dir, '--json', 'status', '--check'], unset);
    assert.equal(json.code, 1, json.stderr);
    const out = JSON.parse(json.stdout) as {
      streams: { partner: string; stream: string; fed_by: string | null; freshness: { state: string; detail: string } | null; definition_errors: { file: string; path: string; line?: number; message: string }[] }[];
      check: { ok: boolean; breaches: { stream: string; state: string; detail: string }[]; definition_errors: number };
    };
    assert.deepEqual(out.streams.map((s) => [s.partner, s.stream, s.fed_by, s.freshness?.state, s.freshness?.detail]), ['customers', 'transactions', 'activity'].map((s) => ['sandbox-casino', s, 'pull', 'stopped', `stopped: ${why}`]));
    for (const s of out.streams) assert.deepEqual(s.definition_errors.map((e) => [e.file, e.path, e.line, e.message]), [[config.file, 'source.auth.client_secret', line, 'environment variable SANDBOX_CLIENT_SECRET is not set']]);
    assert.deepEqual(out.check.breaches.map((b) => [b.stream, b.state]), [['customers', 'stopped'], ['transactions', 'stopped'], ['activity', 'stopped']]);
    assert.equal(out.check.definition_errors, 1);

    // With the variable set again, the same streams are fresh: nothing else held them.
    const fixed = await runCliEntry(['--config', config.dir, 'status', '--check'], env);
    assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
  });
});
