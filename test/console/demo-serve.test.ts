/**
 * The `serve` line the demo ends with, run as printed from a fresh shell (none of the demo's
 * variables set): its console shows the demo's partners with their definitions. And a console
 * whose definitions cannot load (the same command without the variables) says, on the Partners
 * page, what is wrong with each (file, key path, reason) and counts its streams stopped, where it
 * used to say "not pulled (no definition)". The demo's environment is prepared by the demo's own
 * code (scripts/demo-env.ts); the stand-in partners are pulled by the CLI as the demo pulls them.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_STORE_FILE, prepareDemoEnvironment, serveLine } from '../../scripts/demo-env.js';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../support/cli.js';

const root = packageRoot();
const PASSWORD = 'demo-operator-password';
const DEMO_PARTNERS = ['replica-prop', 'sandbox-casino', 'sandbox-prop', 'warehouse-casino'];
const DEMO_VARIABLES = ['SANDBOX_CLIENT_SECRET', 'REPLICA_PROP_URL', 'WAREHOUSE_CASINO_URL'];

interface Served {
  child: ChildProcess;
  url: string;
}

/** Runs `line` with sh in `cwd` (PORT=0: any free port) until it says where it listens. */
function startLine(line: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Served> {
  return new Promise((resolve, reject) => {
    // Its own process group: the shell and the command it starts are stopped together.
    const child = spawn('sh', ['-c', line], { cwd, env: { ...env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let err = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 30_000);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] as string });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}): ${err}`));
    });
  });
}

async function stop(served: Served | undefined): Promise<void> {
  if (!served || served.child.exitCode !== null) return;
  const exited = new Promise((resolve) => served.child.once('exit', resolve));
  process.kill(-(served.child.pid as number), 'SIGTERM');
  await exited;
}

async function partnersPage(url: string): Promise<{ html: string }> {
  const login = await fetch(`${url}/console/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ name: 'demo-operator', password: PASSWORD }) });
  assert.equal(login.status, 303);
  const cookie = (login.headers.get('set-cookie') as string).split(';')[0] as string;
  const res = await fetch(`${url}/console/partners`, { headers: { cookie } });
  assert.equal(res.status, 200);
  return { html: await res.text() };
}

/** The Partners table's rows: partner, stream, freshness signal, detail. */
function rowsOf(html: string): string[][] {
  return [...html.matchAll(/<tr><td>([^<]+)<\/td><td>([^<]+)<\/td><td><span class="state state-(\w+)"[^>]*>\w+<\/span><\/td><td>([^<]*)<\/td>/g)].map((m) => [m[1], m[2], m[3], m[4]] as string[]);
}

describe("the demo's serve line", function () {
  this.timeout(120_000);
  let work: string;
  let shell: NodeJS.ProcessEnv;
  let line: string;
  let served: Served | undefined;

  before(async () => {
    // The folder the demo runs in: the checkout's config/ and bin/ (its launcher), data/ of its own.
    work = mkdtempSync(join(tmpdir(), 'partner-sync-demo-serve-'));
    for (const folder of ['config', 'bin']) symlinkSync(join(root, folder), join(work, folder));
    // A fresh shell: none of the demo's variables, no store chosen.
    shell = Object.fromEntries(Object.entries(process.env).filter(([k]) => !DEMO_VARIABLES.includes(k) && k !== 'STORE_URL' && k !== 'PORT'));
    shell.LOG_LEVEL = 'warn';
    // The demo: its environment, its store, the stand-in partners pulled, a console user.
    const demo: NodeJS.ProcessEnv = { ...shell };
    const assigned = prepareDemoEnvironment(work, demo);
    assert.deepEqual(Object.keys(assigned).sort(), [...DEMO_VARIABLES].sort());
    const store = `sqlite:${DEMO_STORE_FILE}`;
    line = serveLine(store, assigned);
    const env = Object.fromEntries(Object.entries(demo).filter((e): e is [string, string] => e[1] !== undefined));
    for (const args of [['migrate'], ['run', 'replica-prop'], ['run', 'warehouse-casino']]) {
      const r = await runCli(['--store', store, ...args], { cwd: work, env });
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    }
    const user = await runCli(['--store', store, 'users', 'add', 'demo-operator', '--role', 'operator'], { cwd: work, env: { ...env, PARTNER_SYNC_USER_PASSWORD: PASSWORD } });
    assert.equal(user.code, 0, user.stderr);
  });

  afterEach(async () => {
    await stop(served);
    served = undefined;
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('sets the variables the definitions read in front of the command, with the demo\'s own values only', () => {
    assert.equal(line, 'SANDBOX_CLIENT_SECRET=sandbox-secret REPLICA_PROP_URL=sqlite:data/replica-prop.sqlite WAREHOUSE_CASINO_URL=sqlite:data/warehouse-casino.sqlite node bin/partner-sync.js --store sqlite:data/demo.sqlite serve');
    // A variable the user had set is inherited by the command as it is, and not printed.
    const mine = { SANDBOX_CLIENT_SECRET: 'a-secret-of-the-user', REPLICA_PROP_URL: 'mysql://u:p@db/prop', WAREHOUSE_CASINO_URL: 'postgres://u:p@wh/casino' };
    const own = prepareDemoEnvironment(work, { ...mine });
    assert.deepEqual(own, {});
    assert.equal(serveLine(`sqlite:${DEMO_STORE_FILE}`, own), 'node bin/partner-sync.js --store sqlite:data/demo.sqlite serve');
    assert.equal(serveLine('sqlite:my demo.sqlite', { X: "it's" }), `X='it'\\''s' node bin/partner-sync.js --store 'sqlite:my demo.sqlite' serve`);
  });

  it('run as printed from a fresh shell: the console shows every demo partner with its definition', async () => {
    served = await startLine(line, work, shell);
    const { html } = await partnersPage(served.url);
    const rows = rowsOf(html);
    assert.deepEqual([...new Set(rows.map((r) => r[0]))].sort(), DEMO_PARTNERS);
    assert.doesNotMatch(html, /no definition|definition invalid/);
    // The stand-ins were pulled: their streams carry a freshness detail of a pulled stream.
    for (const partner of ['replica-prop', 'warehouse-casino']) {
      assert.deepEqual(rows.filter((r) => r[0] === partner).map((r) => r[1]), ['customers', 'transactions', 'activity'], partner);
      assert.match(html, new RegExp(`<button type="submit">Run ${partner} now</button>`));
    }
    assert.ok(rows.every((r) => /\(target: (within 5 minutes|previous UTC day by 06:00 UTC)\)$/.test(r[3] as string)), JSON.stringify(rows));
  });

  it('without the variables: the Partners page says what is wrong with each definition (file, path, reason), its streams stopped', async () => {
    served = await startLine(`node bin/partner-sync.js --store sqlite:${DEMO_STORE_FILE} serve`, work, shell);
    const { html } = await partnersPage(served.url);
    const rows = rowsOf(html);
    assert.doesNotMatch(html, /no definition/);
    const reasons: Record<string, [string, string]> = {
      'replica-prop': ['source.url', 'REPLICA_PROP_URL'], 'warehouse-casino': ['source.url', 'WAREHOUSE_CASINO_URL'],
      'sandbox-casino': ['source.auth.client_secret', 'SANDBOX_CLIENT_SECRET'], 'sandbox-prop': ['source.auth.client_secret', 'SANDBOX_CLIENT_SECRET'],
    };
    for (const partner of DEMO_PARTNERS) {
      const [path, variable] = reasons[partner] as [string, string];
      const file = join('config', 'partners', `${partner}.yaml`);
      const at = readFileSync(join(root, file), 'utf8').split('\n').findIndex((l) => l.includes(`\${${variable}}`)) + 1;
      const mine = rows.filter((r) => r[0] === partner);
      assert.deepEqual(mine.map((r) => r[1]), ['customers', 'transactions', 'activity'], partner);
      for (const r of mine) {
        assert.equal(r[2], 'breach');
        assert.equal(r[3], `stopped: definition invalid, not pulled: ${file}: ${path} (line ${at}): environment variable ${variable} is not set (target: ${r[1] === 'activity' ? 'previous UTC day by 06:00 UTC' : 'within 5 minutes'})`);
      }
      assert.doesNotMatch(html, new RegExp(`Run ${partner} now`), 'nothing to run without a definition');
    }
  });
});
