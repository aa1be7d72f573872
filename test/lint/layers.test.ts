/**
 * The layer rules of the folder map (.dependency-cruiser.cjs, run by `npm run lint` and so by the
 * test command): the tree as it is passes them, and each kind of change they exist to stop fails
 * them with the rule's name. The rules are run on a small tree of the same folders, so a rule that
 * stopped matching its paths would be noticed here, not only on the day someone breaks it.
 */
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { packageRoot } from '../../src/paths.js';

const root = packageRoot();
const depcruise = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

function cruise(cwd: string, dirs: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [depcruise, ...dirs, '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], { cwd, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

/** A tree with the project's rules and these files (path → source). */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'partner-sync-layers-'));
  copyFileSync(join(root, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** One change of each kind the rules stop, each in files of its own: `rule` must name `from`. */
const CASES: { rule: string; from: string; files: Record<string, string> }[] = [
  { rule: 'no-circular', from: 'src/reports/circle-a.ts', files: { 'src/reports/circle-a.ts': "import type { B } from './circle-b.js';\nexport type A = B;\n", 'src/reports/circle-b.ts': "import type { A } from './circle-a.js';\nexport type B = { a?: A };\n" } },
  { rule: 'store-imports-no-domain', from: 'src/store/rows.ts', files: { 'src/store/rows.ts': "import { x } from '../reports/facts.js';\nexport const y = x;\n", 'src/reports/facts.ts': 'export const x = 1;\n' } },
  { rule: 'migrations-are-frozen', from: 'src/store/migrations/019-x.ts', files: { 'src/store/migrations/019-x.ts': "import { x } from '../values.js';\nexport const y = x;\n", 'src/store/values.ts': 'export const x = 1;\n' } },
  { rule: 'connectors-know-no-store', from: 'connectors/rest/client.ts', files: { 'connectors/rest/client.ts': "import type { Clock } from '../../src/store/store.js';\nexport type C = Clock;\n", 'src/store/store.ts': 'export type Clock = () => Date;\n' } },
  { rule: 'kernel-imports-nothing-of-ours', from: 'src/kernel/money.ts', files: { 'src/kernel/money.ts': "import { x } from '../commission/engine.js';\nexport const y = x;\n", 'src/commission/engine.ts': 'export const x = 1;\n' } },
  { rule: 'no-module-imports-a-face', from: 'jobs/run.ts', files: { 'jobs/run.ts': "import { x } from '../src/cli/main.js';\nexport const y = x;\n", 'src/cli/main.ts': 'export const x = 1;\n' } },
  { rule: 'api-and-console-import-no-cli', from: 'src/console/pages.ts', files: { 'src/console/pages.ts': "import { x } from '../cli/commands/status.js';\nexport const y = x;\n", 'src/cli/commands/status.ts': 'export const x = 1;\n' } },
  { rule: 'spec-and-config-below-the-store', from: 'src/config/check.ts', files: { 'src/config/check.ts': "import { x } from '../pipeline/map-record.js';\nexport const y = x;\n", 'src/pipeline/map-record.ts': 'export const x = 1;\n' } },
  { rule: 'reports-read-the-ledger-only', from: 'src/reports/explain.ts', files: { 'src/reports/explain.ts': "import { x } from '../commission/engine.js';\nexport const y = x;\n" } },
  { rule: 'faces-import-no-face', from: 'src/api/routes/records.ts', files: { 'src/api/routes/records.ts': "import { x } from '../../worker/locks.js';\nexport const y = x;\n", 'src/worker/locks.ts': 'export const x = 1;\n' } },
  { rule: 'faces-import-no-face', from: 'src/console/users.ts', files: { 'src/console/users.ts': "import type { H } from '../api/secret-hash.js';\nexport type U = H;\n", 'src/api/secret-hash.ts': 'export type H = string;\n' } },
  { rule: 'faces-import-no-face', from: 'src/worker/reload.ts', files: { 'src/worker/reload.ts': "import { x } from '../console/backfills.js';\nexport const y = x;\n", 'src/console/backfills.ts': 'export const x = 1;\n' } },
  { rule: 'faces-import-no-face', from: 'src/cli/commands/run.ts', files: { 'src/cli/commands/run.ts': "import { x } from '../../worker/exclusive.js';\nexport const y = x;\n", 'src/worker/exclusive.ts': 'export const x = 1;\n' } },
];

describe('layer rules (npm run lint)', function () {
  this.timeout(120_000);

  it('the project passes every rule', async () => {
    const { code, output } = await cruise(root, ['src', 'connectors', 'jobs']);
    assert.equal(code, 0, output);
    assert.match(output, /no dependency violations found/);
  });

  it('each kind of change the rules exist to stop fails, with the rule and the importing file named', async () => {
    const dir = tree(Object.assign({}, ...CASES.map((c) => c.files)) as Record<string, string>);
    try {
      const { code, output } = await cruise(dir, ['src', 'connectors', 'jobs']);
      assert.notEqual(code, 0, output);
      for (const { rule, from } of CASES) assert.match(output, new RegExp(`error ${rule}: ${from.replace(/\./g, '\\.')}`), `${rule} did not fire for ${from}:\n${output}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the CLI starts the other faces from its two starting modules; a face imports its own folder', async () => {
    const dir = tree({
      'src/worker/worker.ts': 'export const startWorker = 1;\n',
      'src/api/routes/index.ts': 'export const API_ROUTE_MODULES = [];\n',
      'src/api/server.ts': "import { API_ROUTE_MODULES } from './routes/index.js';\nexport const buildApi = API_ROUTE_MODULES;\n",
      'src/console/routes.ts': 'export const consoleRoutes = 1;\n',
      'src/cli/server.ts': "import { buildApi } from '../api/server.js';\nimport { consoleRoutes } from '../console/routes.js';\nexport const app = [buildApi, consoleRoutes];\n",
      'src/cli/commands/worker.ts': "import { startWorker } from '../../worker/worker.js';\nexport const w = startWorker;\n",
      'src/cli/commands/serve.ts': "import { app } from '../server.js';\nimport { w } from './worker.js';\nexport const s = [app, w];\n",
    });
    try {
      const { code, output } = await cruise(dir, ['src']);
      assert.equal(code, 0, output);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a tree that keeps the rules passes (the rules are not simply refusing everything)', async () => {
    const dir = tree({
      'src/kernel/money.ts': 'export const x = 1;\n',
      'src/store/rows.ts': "import { x } from '../kernel/money.js';\nexport const y = x;\n",
      'src/reports/facts.ts': "import { y } from '../store/rows.js';\nexport const z = y;\n",
      'jobs/load-hooks.ts': "import { z } from '../src/reports/facts.js';\nexport const w = z;\n",
      'src/cli/main.ts': "import { w } from '../../jobs/load-hooks.js';\nexport const v = w;\n",
    });
    try {
      const { code, output } = await cruise(dir, ['src', 'jobs']);
      assert.equal(code, 0, output);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
