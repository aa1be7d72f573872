/** A worker (or status) subprocess, run as a user runs it, with its log lines readable as they come. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { packageRoot } from '../../../src/paths.js';

const ENTRY = join(packageRoot(), 'dist', 'test', 'worker', 'support', 'cli-entry.js');

export interface WorkerProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Parsed JSON log lines so far (non-JSON lines skipped). */
  lines(): Record<string, unknown>[];
  /** Resolves when a log line satisfies `test` (rejects after `timeoutMs` or if the process ends first). */
  waitFor(test: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `env` is added to this process's environment; a variable given as undefined is left out (unset). */
export function startCli(args: readonly string[], env: Record<string, string | undefined>): WorkerProcess {
  const merged = Object.fromEntries(Object.entries({ ...process.env, ...env }).filter((e): e is [string, string] => e[1] !== undefined));
  const child = spawn(process.execPath, [ENTRY, ...args], { cwd: packageRoot(), env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let done = false;
  void exited.then(() => (done = true));
  const lines = () =>
    err.split('\n').flatMap((l) => {
      try {
        return l.trim().startsWith('{') ? [JSON.parse(l) as Record<string, unknown>] : [];
      } catch {
        return [];
      }
    });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    lines,
    exited,
    async waitFor(test, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const hit = lines().find(test);
        if (hit) return hit;
        if (done) throw new Error(`the process ended before the awaited line; stderr:\n${err}`);
        if (Date.now() > until) throw new Error(`timed out waiting for a log line; stderr:\n${err}`);
        await sleep(20);
      }
    },
  };
}

/** Runs a CLI command to its end. */
export async function runCliEntry(args: readonly string[], env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = startCli(args, env);
  const { code } = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}
