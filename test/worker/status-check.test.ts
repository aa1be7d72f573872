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

  it('exit 1 when a definition is invalid: its streams are not being pulled', async () => {
    await setState('transactions', { watermark: ago(60_000) });
    config.write((y) => y.replace(/per_page: 500/, 'per_page: 5000'));
    try {
      const r = await runCliEntry(['--config', config.dir, 'status', '--check'], env);
      assert.equal(r.code, 1);
      assert.match(r.stdout, /check failed: 0 of 0 stream\(s\) breach their freshness target; 1 definition error/);
    } finally {
      config.write();
    }
  });
});
