/**
 * What a user sees when `run` meets a failing stream: on a terminal (a pseudo-terminal made by
 * util-linux `script`), each log line is one readable line of its own, above the progress line and
 * never inside it, and the result table stays whole; JSON lines when stderr is not a terminal or
 * LOG_FORMAT=json. The failing URL carries the client secret: redacted in every format.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { exampleDefinition, SANDBOX_SECRET } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';

const COLUMNS = 100;
const LOG_LINE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z (error|warn |info ) /;

/** The CLI on a pseudo-terminal COLUMNS wide: stdout and stderr both, as the terminal receives them. */
function runOnTerminal(args: readonly string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = `stty cols ${COLUMNS} 2>/dev/null; exec ${[process.execPath, join(packageRoot(), 'bin', 'partner-sync.js'), ...args].map(quote).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qefc', command, '/dev/null'], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end();
  });
}

/** The lines a terminal shows for this output: carriage returns and erase-to-end-of-line applied. */
function screen(output: string): string[] {
  const lines: string[] = [];
  let line = '';
  let cursor = 0;
  for (let i = 0; i < output.length; i++) {
    const c = output[i];
    if (c === '\n') {
      lines.push(line);
      line = '';
      cursor = 0;
    } else if (c === '\r') cursor = 0;
    else if (output.startsWith('\x1b[K', i)) {
      line = line.slice(0, cursor);
      i += 2;
    } else {
      line = line.slice(0, cursor) + c + line.slice(cursor + 1);
      cursor++;
    }
  }
  if (line !== '') lines.push(line);
  return lines.filter((l) => l.trim() !== '');
}

for (const backend of STORES) {
  describe(`terminal output of run with a failing stream (${backend.name} store)`, function () {
    this.timeout(120_000);
    let sandbox: Sandbox;
    let store: TestStore;
    let dir: string;
    let cleanup: () => void;
    beforeEach(async () => {
      store = await backend.create();
      sandbox = await startSandbox({ port: 0, seed: 3, customers: 40, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      // Small pages (the progress line moves), and a transactions path the partner does not serve whose URL holds the secret.
      ({ dir, cleanup } = await exampleDefinition('igaming', sandbox.url, (yaml) => yaml
        .replace(/per_page: 500/g, 'per_page: 10')
        .replace('path: /api/v1/igaming/transactions', 'path: /api/v1/igaming/missing-${SANDBOX_CLIENT_SECRET}')));
    });
    afterEach(async () => {
      cleanup?.();
      await sandbox?.close();
      await store?.drop();
    });

    const args = () => ['--config', dir, 'run', 'sandbox-casino'];
    const env = (extra: Record<string, string> = {}) => ({ SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, STORE_URL: store.url, LOG_LEVEL: 'warn', ...extra });
    const failure = /run failed: GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/igaming\/missing-\*\*\*\?.*HTTP 404/;

    function assertTable(lines: string[]): void {
      const header = lines.findIndex((l) => /^STREAM\s+STATUS\s+PULLED\s+LOADED/.test(l));
      assert.ok(header >= 0, `no table header in:\n${lines.join('\n')}`);
      assert.match(lines[header + 1] ?? '', /^customers\s+succeeded\s+40\s+40\s/);
      assert.match(lines[header + 2] ?? '', /^transactions\s+failed\s/);
      assert.match(lines[header + 3] ?? '', /^activity\s+succeeded\s/);
    }

    it('on a terminal: each log line readable and on its own line, the progress line never tangled with it', async () => {
      const { code, output } = await runOnTerminal(args(), env());
      assert.equal(code, 1, output);
      assert.ok(!output.includes(SANDBOX_SECRET), 'the secret never reaches the terminal');
      const lines = screen(output);
      assertTable(lines);
      const logLines = lines.filter((l) => failure.test(l) && !l.startsWith('transactions: failed'));
      assert.equal(logLines.length, 1, lines.join('\n'));
      assert.match(logLines[0] ?? '', /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z error sandbox-casino transactions: run failed: /);
      // Nothing but log lines, the table and the failure summary remain: the progress line was erased whole.
      for (const line of lines) {
        assert.ok(LOG_LINE.test(line) || /^(STREAM|customers|transactions|activity)\b/.test(line), `a stray line on the terminal: ${JSON.stringify(line)}`);
        assert.ok(!line.includes('"level"'), `a JSON log line on the terminal: ${line}`);
      }
      // The progress line fits the terminal (a wrapped line cannot be erased).
      const statuses = output.split('\r\x1b[K').map((s) => s.split(/[\r\n]/)[0] ?? '').filter((s) => s.startsWith('sandbox-casino '));
      assert.ok(statuses.length > 0, 'a progress line was shown');
      for (const status of statuses) assert.ok(status.length < COLUMNS, `progress line wider than the terminal: ${status}`);
    });

    it('LOG_FORMAT=json on a terminal: JSON lines, each on its own line, secret redacted; the table stays whole', async () => {
      const { code, output } = await runOnTerminal(args(), env({ LOG_FORMAT: 'json' }));
      assert.equal(code, 1, output);
      assert.ok(!output.includes(SANDBOX_SECRET));
      const lines = screen(output);
      assertTable(lines);
      const json = lines.filter((l) => l.startsWith('{'));
      const entries = json.map((l) => JSON.parse(l) as { level: string; message: string; partner?: string; stream?: string });
      const errors = entries.filter((e) => e.level === 'error');
      assert.equal(errors.length, 1, lines.join('\n'));
      assert.match(errors[0]?.message ?? '', failure);
      assert.equal(errors[0]?.stream, 'transactions');
    });

    it('stderr not a terminal: JSON lines only, no progress line; stdout holds the table', async () => {
      const result = await runCli(args(), { env: env() });
      assert.equal(result.code, 1, result.stderr);
      assert.ok(!(result.stdout + result.stderr).includes(SANDBOX_SECRET));
      assert.ok(!result.stderr.includes('\x1b') && !result.stdout.includes('\x1b'), 'no terminal control codes in a pipe');
      const entries = result.stderr.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { level: string; message: string });
      assert.deepEqual(entries.map((e) => e.level), ['error']);
      assert.match(entries[0]?.message ?? '', failure);
      assertTable(result.stdout.split('\n'));
    });
  });
}
