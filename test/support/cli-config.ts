/**
 * A temporary `--config` folder for CLI tests: `partners/<name>.yaml` is a copy of a bundled
 * example definition pointed at a running sandbox, its cursor streams starting at `start`, and
 * rewritable per test (a broken key, a wrong path, a fixed mapping).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { SANDBOX_SECRET } from './sandbox.js';
import type { StoreBackend, TestStore } from './stores.js';

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

/** What `sandboxCli` makes before each test: the partner, its definition folder and the store. */
export interface SandboxCli {
  sandbox: Sandbox;
  config: CliConfig;
  store: TestStore;
}

/**
 * Mocha hooks for CLI tests against the sandbox: before each test a sandbox partner, the bundled
 * example definition pointed at it (cursor streams starting at its first day) and a fresh store of
 * `backend`; after it, all three closed and removed. Read the fields inside tests, not before.
 */
export function sandboxCli(backend: StoreBackend, name: 'sandbox-casino' | 'sandbox-prop', data: { seed: number; customers: number }): SandboxCli {
  const made = {} as SandboxCli;
  beforeEach(async () => {
    made.sandbox = await startSandbox({ port: 0, ...data, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
    made.config = exampleCliConfig(name, made.sandbox.url, `${made.sandbox.data.from}T00:00:00Z`);
    made.store = await backend.create();
  });
  afterEach(async () => {
    await made.sandbox.close();
    made.config.cleanup();
    await made.store.drop();
  });
  return made;
}
