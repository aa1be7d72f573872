import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { clockEnv, type Clock } from '../../src/kernel/clock.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI as a user would: a subprocess of `bin/partner-sync.js`. With `clock`, the
 * subprocess's clock starts at that clock's instant (the test clock, src/kernel/clock.ts).
 */
export function runCli(args: readonly string[], options: { env?: Record<string, string>; input?: string; cwd?: string; clock?: Clock } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'partner-sync.js'), ...args], {
      cwd: options.cwd ?? packageRoot(),
      env: { ...process.env, ...(options.clock ? clockEnv(options.clock) : {}), ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
