/**
 * A temporary `--config` folder for CLI tests: `partners/<name>.yaml` is a copy of a bundled
 * example definition pointed at a running sandbox, its cursor streams starting at `start`, and
 * rewritable per test (a broken key, a wrong path, a fixed mapping).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';

export interface CliConfig {
  /** The folder to pass as `--config`. */
  dir: string;
  /** The definition file inside it. */
  file: string;
  /** The definition as first written (base_url and start set). */
  base: string;
  /** Writes `edit(base)` as the definition (the base itself without an edit). */
  write(edit?: (yaml: string) => string): void;
  cleanup(): void;
}

export function exampleCliConfig(name: 'sandbox-casino' | 'sandbox-prop', baseUrl: string, start?: string): CliConfig {
  const dir = mkdtempSync(join(tmpdir(), 'partner-sync-cli-config-'));
  mkdirSync(join(dir, 'partners'));
  const file = join(dir, 'partners', `${name}.yaml`);
  let base = readFileSync(join(packageRoot(), 'config', 'partners', `${name}.yaml`), 'utf8').replace(/base_url: .*/, `base_url: ${baseUrl}`);
  if (start !== undefined) base = base.replace(/^( +)mode: cursor\b.*$/gm, `$&\n$1start: ${start}`);
  const write = (edit?: (yaml: string) => string): void => {
    const text = edit ? edit(base) : base;
    // An edit that changes nothing is a test bug: its pattern no longer matches the example.
    if (edit && text === base) throw new Error(`exampleCliConfig: the edit left ${name}.yaml unchanged`);
    writeFileSync(file, text);
  };
  write();
  return { dir, file, base, write, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
