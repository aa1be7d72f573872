/**
 * The Node flags `partner-sync` runs with, read from the first line of its launcher
 * (bin/partner-sync.js), so that a benchmark measures what the command gets: the benchmarks that
 * run the service in their own process start again under these flags when started without them,
 * and those that start it as a child give them to the child.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';

/** The flags after `node` on the launcher's `#!` line. */
export function launcherFlags(): string[] {
  const first = readFileSync(join(packageRoot(), 'bin', 'partner-sync.js'), 'utf8').split('\n')[0] ?? '';
  const m = /^#!.*\bnode((?:\s+-\S+)*)\s*$/.exec(first);
  return m ? (m[1] ?? '').trim().split(/\s+/).filter((a) => a !== '') : [];
}

/**
 * Runs this process's script again under the launcher's flags (and the benchmark's own `extra`
 * ones) when some are missing (exiting with its status); returns when they are all in force.
 */
export function underLauncherFlags(extra: readonly string[] = []): void {
  const missing = [...launcherFlags(), ...extra].filter((f) => !process.execArgv.includes(f));
  if (missing.length === 0) return;
  const r = spawnSync(process.execPath, [...missing, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
