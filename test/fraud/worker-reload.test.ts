/**
 * The worker re-reads config/fraud.yaml on SIGHUP like the definitions and the commission plans:
 * a file with errors keeps the rules in force (and says why, with file, path and line), a valid
 * one applies to the batches from then on, a removed file stops detection.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { SANDBOX_SECRET } from '../support/sandbox.js';
import { startCli, type WorkerProcess } from '../worker/support/worker-process.js';

describe('worker: SIGHUP re-reads the fraud rules', function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let dir: string;
  const workers: WorkerProcess[] = [];
  before(async () => {
    sandbox = await startSandbox({ port: 0, seed: 5, customers: 5, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-fraud-reload-'));
    mkdirSync(join(dir, 'partners'));
    writeFileSync(join(dir, 'partners', 'sandbox-casino.yaml'), readFileSync(join(packageRoot(), 'config', 'partners', 'sandbox-casino.yaml'), 'utf8')
      .replace(/base_url: .*/, `base_url: ${sandbox.url}`)
      // Rarely due: the test is about the reload, not the runs.
      .replace(/^(\s+)schedule: .*$/gm, '$1schedule: "0 0 1 1 *"'));
  });
  after(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an invalid file keeps the rules in force and logs each error; a valid one applies; no file stops detection', async () => {
    const rulesFile = join(dir, 'fraud.yaml');
    const rules = readFileSync(join(packageRoot(), 'config', 'fraud.yaml'), 'utf8');
    writeFileSync(rulesFile, rules);
    const w = startCli(['--config', dir, 'worker'], { SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, STORE_URL: `sqlite:${join(dir, 'store.sqlite')}` });
    workers.push(w);
    await w.waitFor((l) => l.event === 'worker_started');

    writeFileSync(rulesFile, rules.replace('min_ftds: 10', 'min_ftdz: 10'));
    w.child.kill('SIGHUP');
    const invalid = await w.waitFor((l) => l.event === 'fraud_rules_error');
    assert.equal(invalid.level, 'error');
    assert.match(String(invalid.message), /reload: invalid fraud rules: .*fraud\.yaml: rules\.cpa_farming\.min_ftdz \(line \d+\): unknown key "min_ftdz"/);
    await w.waitFor((l) => l.event === 'fraud_rules_kept');
    assert.ok(!w.lines().some((l) => l.event === 'fraud_rules_reloaded'), 'an invalid file does not replace the rules');

    writeFileSync(rulesFile, rules.replace('min_ftds: 10', 'min_ftds: 12'));
    w.child.kill('SIGHUP');
    const applied = await w.waitFor((l) => l.event === 'fraud_rules_reloaded');
    assert.equal(applied.detection, true);

    rmSync(rulesFile);
    w.child.kill('SIGHUP');
    const off = await w.waitFor((l) => l.event === 'fraud_rules_reloaded' && l.detection === false);
    assert.match(String(off.message), /no detection from now on/);
    assert.equal(w.child.exitCode, null, 'still running');
    w.child.kill('SIGTERM');
    assert.equal((await w.exited).code, 0, w.stderr());
  });
});
