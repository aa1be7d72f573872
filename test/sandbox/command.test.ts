import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { sandboxCommand } from '../../src/cli/commands/sandbox.js';
import { CliError, type Io } from '../../src/cli/io.js';
import { packageRoot } from '../../src/paths.js';
import { form } from './helpers.js';

function memoryIo(): Io & { lines: string[] } {
  const lines: string[] = [];
  return { lines, out: (t) => lines.push(t), err: (t) => lines.push(t), stdin: Readable.from([]), isTty: false };
}

const LINE = /^sandbox partner API listening on (http:\/\/127\.0\.0\.1:\d+) \(client id sandbox-client; secret from SANDBOX_CLIENT_SECRET or the demo default\)$/;

describe('partner-sync sandbox', () => {
  it('prints where it listens (never the secret), serves until stopped, then returns 0', async () => {
    const io = memoryIo();
    const stop = new AbortController();
    const done = sandboxCommand({ port: 0, seed: 3, customers: 5, duplicates: true }, io, stop.signal);
    for (let i = 0; i < 200 && io.lines.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const url = LINE.exec(io.lines[0] ?? '')?.[1];
    assert.ok(url !== undefined, io.lines.join('\n'));
    const res = await fetch(`${url}/_sandbox/faults`);
    assert.equal(((await res.json()) as { duplicateAcrossPages: boolean }).duplicateAcrossPages, true);
    stop.abort();
    assert.equal(await done, 0);
    await assert.rejects(fetch(`${url}/_sandbox/stats`), 'closed');
    assert.equal(io.lines.length, 1);
  });

  it('rejects bad option values as usage errors', async () => {
    await assert.rejects(sandboxCommand({ port: 70000 }, memoryIo()), (e: unknown) => e instanceof CliError && /--port must be a whole number from 0 to 65535/.test(e.message));
    await assert.rejects(sandboxCommand({ port: 0, errorRate: 1.5 }, memoryIo()), /--error-rate must be a fraction from 0 to 1, got 1.5/);
    await assert.rejects(sandboxCommand({ port: 0, tokenTtl: 0 }, memoryIo()), /--token-ttl must be a whole number from 1 up/);
  });

  it('runs as a subprocess and exits 0 on SIGTERM', async function () {
    this.timeout(20_000);
    const secret = 'subprocess-secret-value';
    const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'partner-sync.js'), 'sandbox', '--port', '0', '--customers', '5', '--token-ttl', '60'], {
      cwd: packageRoot(),
      env: { ...process.env, SANDBOX_CLIENT_SECRET: secret, SANDBOX_CLIENT_ID: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      for (let i = 0; i < 500 && !output.includes('\n'); i++) await new Promise((r) => setTimeout(r, 20));
      const url = LINE.exec(output.trim())?.[1];
      assert.ok(url !== undefined, output);
      const res = await fetch(`${url}/oauth/token`, form({ grant_type: 'client_credentials', client_id: 'sandbox-client', client_secret: secret }));
      assert.equal(((await res.json()) as { expires_in: number }).expires_in, 60);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, output);
    assert.ok(!output.includes(secret));
  });
});
