/**
 * `partner-sync worker` as a user starts it, with config/alerts.yaml routing runs that fail to a
 * Slack-compatible webhook (a real local receiver): the partner's API answers 503 to every
 * request, the worker's first run fails, and the alert arrives at once (not after the
 * freshness grace of the first 5 minutes), naming the partner, the stream and what to run next,
 * with no secret of the definition in it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { SANDBOX_SECRET } from '../support/sandbox.js';
import { startCli, type WorkerProcess } from './support/worker-process.js';

describe('the worker process routes a failing run to its alert channel', function () {
  this.timeout(90_000);
  let sandbox: Sandbox;
  let slack: Receiver;
  let dir: string;
  let worker: WorkerProcess | undefined;

  before(async () => {
    sandbox = await startSandbox({ port: 0, seed: 3, customers: 10, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }], faults: { errorRate: 1 } });
    slack = await startReceiver();
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-alerts-'));
    mkdirSync(join(dir, 'partners'));
    const definition = readFileSync(join(packageRoot(), 'config', 'partners', 'sandbox-casino.yaml'), 'utf8')
      .replace(/base_url: .*/, `base_url: ${sandbox.url}`)
      .replace(/^(\s+)max: 5$/m, '$1max: 0')
      .replace(/^(\s+)lookback: (\S+).*$/gm, `$1lookback: $2\n$1start: ${sandbox.data.from}T00:00:00Z`);
    writeFileSync(join(dir, 'partners', 'sandbox-casino.yaml'), definition);
    writeFileSync(join(dir, 'alerts.yaml'), `console_url: https://sync.example.com
thresholds: { run_failures: 1 }
channels:
  team: { type: slack, url_env: TEAM_SLACK_URL }
rules:
  - when: run_failed
    partners: [sandbox-casino]
    channels: team
`);
  });

  after(async () => {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await slack.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one message per failing stream, within seconds of its first run, with the next step and no secret', async () => {
    worker = startCli(['--config', dir, '--store', `sqlite:${join(dir, 'store.sqlite')}`, 'worker'], {
      SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, TEAM_SLACK_URL: `${slack.url}/services/T1/B2/slacktoken778899`, LOG_LEVEL: 'info', LOG_FORMAT: 'json',
    });
    await slack.waitFor(1, 60_000);
    const bodies = slack.requests.map((r) => JSON.parse(r.body) as { text: string; blocks: { type: string; elements?: { text: string }[] }[] });
    const first = bodies[0]!;
    assert.match(first.text, /^partner-sync ALERT runs failing: sandbox-casino\/(customers|transactions|activity): the last 1 run\(s\) failed/);
    assert.match(first.blocks.at(-1)?.elements?.[0]?.text ?? '', /\*Next:\* partner-sync status --partner sandbox-casino \(the error\), then partner-sync run sandbox-casino --stream \w+ · <https:\/\/sync\.example\.com\/console\/runs\|open the console>/);
    for (const r of slack.requests) {
      assert.ok(!r.body.includes(SANDBOX_SECRET), 'the client secret is in no message');
      assert.ok(!r.body.includes('slacktoken778899'), 'nor the channel\'s own token');
    }
    assert.equal(new Set(bodies.map((b) => b.text.split(':')[1])).size, bodies.length, 'one message per stream, none twice');
    worker.child.kill('SIGTERM');
    assert.equal((await worker.exited).code, 0);
    assert.ok(!worker.stderr().includes('slacktoken778899'), 'the channel URL is redacted from the log');
  });
});
