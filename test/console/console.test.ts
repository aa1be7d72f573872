/**
 * The web console end to end: one `serve`-equivalent app (buildApi with the console module) on a
 * SQLite store holding the bundled samples, one headless chromium (playwright-core) for the
 * browser scenarios, plain fetch for the refusals (CSRF, roles) and cookie flags.
 * Screenshots of every page are written to a temp folder (printed).
 */
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { buildApi } from '../../src/cli/server.js';
import type { KdfParams } from '../../src/access/secret-hash.js';
import { fxImportCommand } from '../../src/cli/commands/fx.js';
import { importCommand } from '../../src/cli/commands/import.js';
import { loadConfig } from '../../src/cli/definitions.js';
import type { CliError, Io } from '../../src/cli/io.js';
import { usersAddCommand } from '../../src/cli/commands/users.js';
import { cliLoader } from '../../src/cli/loader.js';
import type { Loader } from '../../src/pipeline/load.js';
import { addUser, checkPassword } from '../../src/access/console-users.js';
import { silentLogger } from '../../src/log.js';
import { packageRoot } from '../../src/paths.js';
import { saveChecklist, verifyChecklist } from '../../src/onboarding/checklist.js';
import { quarantine } from '../../src/store/rejects.js';
import { openStore, type Store } from '../../src/store/store.js';
import { offsetClock, systemClock } from '../../src/kernel/clock.js';
import { CHROMIUM, launchChromium } from '../support/browser.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import type { PartnerDefinition } from '../../src/config/definition.js';

const TEST_KDF: KdfParams = { alg: 'scrypt', N: 1024, r: 8, p: 1, keylen: 32 };
const PASSWORD = 'correct horse battery';
const root = packageRoot();

const quietIo = (): Io => ({ out: () => undefined, err: () => undefined, stdin: new PassThrough(), isTty: false });

/**
 * The console's day: in the samples' month (their dates are fixed), whatever day the suite runs on,
 * and running on from there, so that its charts' windows and default ranges hold the samples.
 */
const clock = offsetClock(systemClock, Date.parse('2026-11-25T12:00:00Z') - Date.now());

describe('web console', function () {
  this.timeout(60_000);
  let dir: string;
  let store: Store;
  let app: FastifyInstance;
  let url: string;
  let browser: Browser | undefined;
  let loaderOf: () => Loader;
  let shots: string;
  let sandbox: Sandbox;
  let live: PartnerDefinition;
  const timings: Record<string, number[]> = {};

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-test-'));
    shots = join(dir, 'screenshots');
    mkdirSync(shots);
    const storeUrl = `sqlite:${join(dir, 'store.sqlite')}`;
    const globals = { config: join(root, 'config'), store: storeUrl, clock };
    // The example definitions read their secrets from the environment (the sandbox's demo credential, stand-in databases).
    process.env.SANDBOX_CLIENT_SECRET ??= 'sandbox-secret';
    // The prop firm's replica, a SQLite stand-in seeded from samples/ (as the demo does): "run now" pulls from it.
    const replica = new Database(join(dir, 'replica.sqlite'));
    // Its rows are dated relative to 'now' when it is applied: the console's day, not the machine's.
    replica.exec(readFileSync(join(root, 'samples', 'replica', 'prop-replica.sql'), 'utf8').replaceAll("'now'", `'${clock().toISOString().slice(0, 19).replace('T', ' ')}'`));
    replica.close();
    process.env.REPLICA_PROP_URL = `sqlite:${join(dir, 'replica.sqlite')}`;
    process.env.WAREHOUSE_CASINO_URL ??= `sqlite:${join(dir, 'warehouse.sqlite')}`;
    const io = quietIo();
    const logLevel = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = 'error';
    // FX rates of the samples' days, so their GBP, EUR and SEK amounts count in the USD reports.
    const rates = ['date,currency,rate'];
    for (let d = Date.parse('2026-10-01'); d <= Date.parse('2026-11-30'); d += 86_400_000) {
      for (const [currency, rate] of [['GBP', '1.27'], ['EUR', '1.08'], ['SEK', '0.095']]) rates.push(`${new Date(d).toISOString().slice(0, 10)},${currency},${rate}`);
    }
    writeFileSync(join(dir, 'rates.csv'), `${rates.join('\n')}\n`);
    await fxImportCommand(globals, { file: join(dir, 'rates.csv') }, io);
    for (const [partner, variant, entity, file] of [
      ['lucky-casino', 'igaming', 'customers', 'samples/igaming/customers.ndjson'],
      ['lucky-casino', 'igaming', 'transactions', 'samples/igaming/transactions.ndjson'],
      ['lucky-casino', 'igaming', 'activity', 'samples/igaming/activity.ndjson'],
      // The same players at sandbox-casino, whose commission plans (config/commissions.yaml) book CPAs.
      ['sandbox-casino', 'igaming', 'customers', 'samples/igaming/customers.ndjson'],
      ['sandbox-casino', 'igaming', 'transactions', 'samples/igaming/transactions.ndjson'],
      ['sandbox-casino', 'igaming', 'customers', 'samples/fraud/customers.ndjson'],
      ['sandbox-casino', 'igaming', 'transactions', 'samples/fraud/transactions.ndjson'],
    ] as const) {
      await importCommand(globals, { partner, variant, entity, file: join(root, file) }, io);
    }
    if (logLevel === undefined) delete process.env.LOG_LEVEL;
    else process.env.LOG_LEVEL = logLevel;
    store = await openStore({ url: storeUrl, clock });
    await addUser(store, 'olga', 'operator', PASSWORD, TEST_KDF);
    await addUser(store, 'max', 'manager', PASSWORD, TEST_KDF);
    // A record rejected under a rule since fixed: valid now, so a replay loads it.
    await store.transaction((trx) => quarantine(trx, { partner: 'lucky-casino', variant: 'igaming', entity: 'customers', runId: 'before-the-fix', now: store.now() }, [{
      position: 1, origin: 'spec', key: 'LC-9001',
      payload: { customer_id: 'LC-9001', signup_date: '2026-11-03T10:00:00Z', affiliate_id: 'AFF-7', last_modified_date: '2026-11-03T10:00:00Z', country_code: 'GB', email: 'zoe.replayed@example.com' },
      errors: [{ field: 'country_code', rule: 'enum', message: 'country_code: an older list of countries lacked GB' }],
    }]));
    const config = await loadConfig(globals);
    const loader = await cliLoader(globals, io, store, silentLogger());
    loaderOf = () => loader;
    // A sandbox partner API answering slowly (120 ms a request), so a backfill's progress can be watched:
    // sandbox-live is sandbox-casino's definition pointed at it.
    sandbox = await startSandbox({ clock, customers: 40, seed: 5, clients: [{ client_id: 'sandbox-client', client_secret: process.env.SANDBOX_CLIENT_SECRET! }], faults: { latencyMs: 120 } });
    const casino = config.definitions.find((d) => d.partner === 'sandbox-casino')!;
    live = { ...casino, partner: 'sandbox-live', source: { ...casino.source, base_url: sandbox.url } } as PartnerDefinition;
    app = await buildApi({ store, loader, logger: silentLogger(), config: { dir: globals.config, definitions: [...config.definitions, live], redact: config.redact } }, { env: { PARTNER_SYNC_JWT_SECRET: 'x'.repeat(40) } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    console.log(`      console screenshots: ${shots}`);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await sandbox?.close();
    await store?.close();
    const rows = Object.entries(timings).map(([page, ms]) => `${page} ${Math.max(...ms).toFixed(1)} ms`);
    if (rows.length > 0) console.log(`      server time per page (max of visits, demo-sized store): ${rows.join(', ')}`);
    if (dir && process.env.KEEP_CONSOLE_ARTIFACTS === undefined) rmSync(join(dir, 'store.sqlite'), { force: true });
  });

  async function signIn(name: string): Promise<string> {
    const res = await fetch(`${url}/console/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ name, password: PASSWORD }) });
    assert.equal(res.status, 303);
    return res.headers.get('set-cookie')!;
  }

  async function csrfOf(cookie: string, path: string): Promise<string> {
    const page = await (await fetch(`${url}${path}`, { headers: { cookie: cookie.split(';')[0]! } })).text();
    return /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
  }

  describe('users add', () => {
    const lines: string[] = [];
    const io = (): Io => ({ ...quietIo(), out: (t) => lines.push(t) });
    const globalsOf = () => ({ config: join(root, 'config'), store: `sqlite:${join(dir, 'store.sqlite')}` });

    it('stores a salted scrypt hash of the password from PARTNER_SYNC_USER_PASSWORD; the user signs in with it', async () => {
      assert.equal(await usersAddCommand(globalsOf(), { name: 'ines', role: 'manager' }, io(), { PARTNER_SYNC_USER_PASSWORD: 'ines-long-password' }), 0);
      const row = (await store.knex('console_users').where('name', 'ines').first()) as Record<string, string>;
      assert.equal(row.role, 'manager');
      assert.equal(JSON.parse(row.kdf!).alg, 'scrypt');
      assert.ok(!JSON.stringify(row).includes('ines-long-password'), 'only the hash is stored');
      assert.deepEqual(await checkPassword(store, 'ines', 'ines-long-password'), { name: 'ines', role: 'manager' });
      assert.equal(await checkPassword(store, 'ines', 'ines-long-passworD'), undefined);
    });

    it('generates and prints the password once without a terminal or variable; refuses a bad role (exit 2) and a taken name', async () => {
      lines.length = 0;
      assert.equal(await usersAddCommand(globalsOf(), { name: 'omar', role: 'operator' }, io(), {}), 0);
      const password = /password: (\S+)/.exec(lines.join('\n'))![1]!;
      assert.deepEqual(await checkPassword(store, 'omar', password), { name: 'omar', role: 'operator' });
      await assert.rejects(usersAddCommand(globalsOf(), { name: 'x', role: 'admin' }, io(), {}), (e: CliError) => e.exitCode === 2 && /--role must be one of operator, manager, affiliate, got "admin"/.test(e.message));
      await assert.rejects(usersAddCommand(globalsOf(), { name: 'omar', role: 'operator' }, io(), {}), (e: CliError) => e.exitCode === 2 && e.message === 'user omar already exists');
    });
  });

  describe('access (HTTP)', () => {
    it('sets an HttpOnly, SameSite=Strict session cookie on /console, refuses a wrong password', async () => {
      const cookie = await signIn('olga');
      assert.match(cookie, /^ps_console=[A-Za-z0-9_-]{43}; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=43200; Expires=/);
      assert.doesNotMatch(cookie, /Secure/, 'plain HTTP on loopback: no Secure flag (it would never be sent back)');
      const wrong = await fetch(`${url}/console/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=olga&password=nope' });
      assert.equal(wrong.status, 401);
      assert.match(await wrong.text(), /Wrong user name or password/);
      const anonymous = await fetch(`${url}/console/partners`, { redirect: 'manual' });
      assert.equal(anonymous.status, 303);
      assert.equal(anonymous.headers.get('location'), '/console/login?next=%2Fconsole%2Fpartners');
    });

    it('marks the cookie Secure when the console is reached over HTTPS (behind a TLS proxy)', async () => {
      const proxied = await buildApi({ store, loader: loaderOf(), logger: silentLogger() }, { trustProxy: true, env: { PARTNER_SYNC_JWT_SECRET: 'x'.repeat(40) } });
      try {
        const res = await proxied.inject({ method: 'POST', url: '/console/login', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https' }, payload: `name=olga&password=${encodeURIComponent(PASSWORD)}` });
        assert.equal(res.statusCode, 303);
        assert.match(String(res.headers['set-cookie']), /; HttpOnly; SameSite=Strict; Max-Age=43200; Expires=[^;]+; Secure$/);
      } finally {
        await proxied.close();
      }
    });

    it('runs a partner now through the run job: its runs are in the store and the action in the audit log', async () => {
      const cookie = (await signIn('olga')).split(';')[0]!;
      const csrf = await csrfOf(cookie, '/console/partners');
      const res = await fetch(`${url}/console/partners/run`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ partner: 'replica-prop', _csrf: csrf }) });
      assert.equal(res.status, 303);
      assert.match(decodeURIComponent(res.headers.get('location')!), /^\/console\/partners\?notice=Ran replica-prop: customers succeeded: [1-9]\d* loaded/);
      const runs = (await store.knex('runs').where({ partner_id: 'replica-prop', kind: 'run' }).select('stream', 'status')) as { stream: string; status: string }[];
      assert.deepEqual(runs.map((r) => r.stream).sort(), ['activity', 'customers', 'transactions']);
      const entry = (await store.knex('console_audit').where('action', 'run now').first()) as Record<string, string>;
      assert.equal(entry.user_name, 'olga');
      assert.equal(entry.target, 'replica-prop');
    });

    it('refuses a backfill whose dates are reversed (400), naming them', async () => {
      const cookie = (await signIn('olga')).split(';')[0]!;
      const csrf = await csrfOf(cookie, '/console/partners');
      const res = await fetch(`${url}/console/partners/backfill`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ partner: 'sandbox-casino', from: '2026-11-05', to: '2026-11-01', _csrf: csrf }) });
      assert.equal(res.status, 400);
      assert.match(await res.text(), /From 2026-11-05 is after to 2026-11-01\./);
    });

    it('refuses an action without the CSRF token or with another one (403), and records nothing', async () => {
      const cookie = (await signIn('olga')).split(';')[0]!;
      for (const body of ['partner=lucky-casino&reason=x', 'partner=lucky-casino&reason=x&_csrf=forged']) {
        const res = await fetch(`${url}/console/rejects/discard`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body });
        assert.equal(res.status, 403);
        assert.match(await res.text(), /CSRF token missing or wrong/);
      }
      const open = await store.knex('rejects').where({ partner_id: 'lucky-casino', status: 'open' }).count({ n: '*' });
      assert.ok(Number(open[0]!.n) > 0, 'the rejects are still open');
      assert.equal((await store.knex('console_audit').where('action', 'discard rejects')).length, 0);
    });

    it('refuses money pages and fraud decisions to an operator and runs to a manager (403)', async () => {
      const operator = (await signIn('olga')).split(';')[0]!;
      assert.equal((await fetch(`${url}/console/commissions`, { headers: { cookie: operator } })).status, 403);
      const manager = (await signIn('max')).split(';')[0]!;
      const csrf = await csrfOf(manager, '/console/partners');
      const res = await fetch(`${url}/console/partners/run`, { method: 'POST', redirect: 'manual', headers: { cookie: manager, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ partner: 'sandbox-casino', _csrf: csrf }) });
      assert.equal(res.status, 403);
      assert.match(await res.text(), /This needs the operator role; you are signed in as manager/);
      const flag = (await store.knex('fraud_flags').first('id')) as { id: number };
      const opCsrf = await csrfOf(operator, '/console/partners');
      const decide = await fetch(`${url}/console/fraud/${flag.id}/decide`, { method: 'POST', redirect: 'manual', headers: { cookie: operator, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ decision: 'confirmed', reason: 'x', _csrf: opCsrf }) });
      assert.equal(decide.status, 403);
      assert.equal(((await store.knex('fraud_flags').where('id', flag.id).first('status')) as { status: string }).status, 'open');
    });
  });

  describe('every action (HTTP)', () => {
    const post = (cookie: string, path: string, fields: Record<string, string>) =>
      fetch(`${url}${path}`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
    const audited = async () => Number(((await store.knex('console_audit').whereNotIn('action', ['sign in', 'sign in failed']).count({ n: '*' })) as { n: unknown }[])[0]!.n);

    it('Postbacks (managers): add shows the secret once and checks the URL, remove and replay are audited; operators are refused', async () => {
      const operator = (await signIn('olga')).split(';')[0]!;
      const manager = (await signIn('max')).split(';')[0]!;
      assert.equal((await fetch(`${url}/console/postbacks`, { headers: { cookie: operator } })).status, 403);
      const token = await csrfOf(manager, '/console/postbacks');
      const before = process.env.POSTBACK_SECRET_KEY;
      process.env.POSTBACK_SECRET_KEY = 'console-test-postback-key-0123456789abcdef';
      try {
        const refused = await post(manager, '/console/postbacks/add', { _csrf: token, affiliate: 'AFF-7', events: 'ftd', url: 'http://10.0.0.5/pb', method: 'GET' });
        assert.equal(refused.status, 400);
        assert.match(await refused.text(), /Cannot add the postback: url: 10\.0\.0\.5: 10\.0\.0\.5 is a private, loopback, link-local or reserved address/);
        const added = await post(manager, '/console/postbacks/add', { _csrf: token, affiliate: 'AFF-7', events: 'ftd,registration', url: 'https://93.184.215.14/pb?c={click_id}', method: 'GET' });
        assert.equal(added.status, 200);
        const page = await added.text();
        const secret = /<code>(pbs_[^<]+)<\/code>/.exec(page)![1]!;
        const id = /Postback (pb_[0-9a-f]+) sends/.exec(page)![1]!;
        const list = await (await fetch(`${url}/console/postbacks`, { headers: { cookie: manager } })).text();
        assert.ok(list.includes(id) && !list.includes(secret), 'listed, never with its secret');
        assert.equal((await post(manager, '/console/postbacks/replay', { _csrf: token, postback: id })).status, 303);
        assert.equal((await post(manager, '/console/postbacks/remove', { _csrf: token, postback: id })).status, 303);
        const actions = (await store.knex('console_audit').where('action', 'like', 'postbacks %').orderBy('id').select('action', 'target')) as { action: string; target: string }[];
        assert.deepEqual(actions.map((a) => [a.action, a.target]), [['postbacks add', id], ['postbacks replay', id], ['postbacks remove', id]]);
      } finally {
        if (before === undefined) delete process.env.POSTBACK_SECRET_KEY;
        else process.env.POSTBACK_SECRET_KEY = before;
      }
    });

    it('needs the session\'s CSRF token: each action without it, or with another session\'s, answers 403 and records nothing', async () => {
      const operator = (await signIn('olga')).split(';')[0]!;
      const manager = (await signIn('max')).split(';')[0]!;
      const otherToken = await csrfOf(manager, '/console/partners');
      const flag = (await store.knex('fraud_flags').first('id')) as { id: number };
      const before = await audited();
      const actions: [string, string, Record<string, string>][] = [
        [operator, '/console/partners/run', { partner: 'replica-prop' }],
        [operator, '/console/partners/backfill', { partner: 'sandbox-live', from: '2026-11-01', to: '2026-11-02' }],
        [operator, '/console/rejects/replay', { partner: 'lucky-casino' }],
        [operator, '/console/rejects/discard', { partner: 'lucky-casino', reason: 'x' }],
        [manager, `/console/fraud/${flag.id}/decide`, { decision: 'dismissed', reason: 'x' }],
        [operator, '/console/logout', {}],
      ];
      for (const [cookie, path, fields] of actions) {
        for (const token of [undefined, cookie === manager ? await csrfOf(operator, '/console/partners') : otherToken]) {
          const res = await post(cookie, path, token === undefined ? fields : { ...fields, _csrf: token });
          assert.equal(res.status, 403, `${path} ${token ? 'with another session\'s token' : 'without a token'}`);
        }
      }
      assert.equal(await audited(), before, 'nothing recorded');
      assert.equal((await fetch(`${url}/console/partners`, { headers: { cookie: operator }, redirect: 'manual' })).status, 200, 'the refused logout left the session signed in');
    });

    it('keeps roles apart: managers cannot run, backfill, replay or discard; operators cannot see money or decide flags (403)', async () => {
      const operator = (await signIn('olga')).split(';')[0]!;
      const manager = (await signIn('max')).split(';')[0]!;
      const managerToken = await csrfOf(manager, '/console/partners');
      for (const [path, fields] of [
        ['/console/partners/run', { partner: 'replica-prop' }], ['/console/partners/backfill', { partner: 'sandbox-live', from: '2026-11-01', to: '2026-11-02' }],
        ['/console/rejects/replay', { partner: 'lucky-casino' }], ['/console/rejects/discard', { partner: 'lucky-casino', reason: 'x' }],
      ] as const) {
        const res = await post(manager, path, { ...fields, _csrf: managerToken });
        assert.equal(res.status, 403, path);
      }
      for (const path of ['/console/commissions', '/console/commissions/lines?affiliate=AFF-7', '/console/records/transactions?partner=sandbox-casino&id=LT-5001', '/console/reports', '/console/fraud', '/console/fraud/1']) {
        assert.equal((await fetch(`${url}${path}`, { headers: { cookie: operator }, redirect: 'manual' })).status, 403, path);
      }
      // An erasure is a manager's: an operator's is refused and erases nothing.
      const erased = await post(operator, '/console/customers/erase', { partner: 'sandbox-casino', customer_id: 'x-1', confirm: 'yes', _csrf: await csrfOf(operator, '/console/partners') });
      assert.equal(erased.status, 403);
      assert.equal(await store.knex('erasures').first('id'), undefined);
      // Neither role's pages show the other's actions as buttons.
      assert.doesNotMatch(await (await fetch(`${url}/console/partners`, { headers: { cookie: manager } })).text(), /action="\/console\/partners\/(run|backfill)"/);
    });

    it('records each action with who, when and what, and shows it on the Activity page', async () => {
      const cookie = (await signIn('olga')).split(';')[0]!;
      const token = await csrfOf(cookie, '/console/rejects');
      const res = await post(cookie, '/console/rejects/discard', { partner: 'replica-prop', reason: 'test records of the stand-in', _csrf: token });
      assert.equal(res.status, 303);
      const entry = (await store.knex('console_audit').where('action', 'discard rejects').first()) as Record<string, unknown>;
      assert.equal(entry.user_name, 'olga');
      assert.equal(entry.target, 'replica-prop');
      assert.match(String(entry.detail), /^[1-9]\d* discarded: test records of the stand-in$/);
      assert.ok(Math.abs(Date.parse(String(entry.at instanceof Date ? entry.at.toISOString() : entry.at).replace(/(\.\d{3})\d+Z$/, '$1Z')) - clock().getTime()) < 60_000, 'when');
      assert.equal((await post(cookie, '/console/logout', { _csrf: token })).status, 303);
      const manager = (await signIn('max')).split(';')[0]!;
      const activity = await (await fetch(`${url}/console/activity`, { headers: { cookie: manager } })).text();
      assert.match(activity, /<td>olga<\/td><td>discard rejects<\/td><td>replica-prop<\/td><td>[1-9]\d* discarded: test records of the stand-in<\/td>/);
      assert.match(activity, /<td>olga<\/td><td>sign out<\/td>/);
      assert.match(activity, /<td>max<\/td><td>sign in<\/td>/);
    });
  });

  describe('in a browser (chromium)', () => {
    before(function () {
      if (!browser) {
        console.log(`      SKIPPED: no chromium at ${CHROMIUM} (scripts/ensure-services.sh installs the Debian package when run as root)`);
        this.skip();
      }
    });

    async function visit(page: Page, path: string, name: string): Promise<void> {
      const res = await page.goto(`${url}${path}`);
      assert.ok(res && res.ok(), `${path}: ${res?.status()}`);
      const timing = /dur=([\d.]+)/.exec((await res.allHeaders())['server-timing'] ?? '');
      if (timing) (timings[name] ??= []).push(Number(timing[1]));
      await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
      await page.addScriptTag({ content: readFileSync(join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8') }).catch(async () => {
        // The console's CSP refuses inline scripts; axe goes in through the page's own context instead.
        await page.evaluate(readFileSync(join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8'));
      });
      const violations = await page.evaluate(async () => {
        const result = await (globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }).axe.run();
        return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}, ${v.nodes.length} nodes)`);
      });
      assert.deepEqual(violations, [], `${path}: accessibility violations`);
    }

    async function login(page: Page, name: string): Promise<void> {
      await page.goto(`${url}/console/login`);
      await page.screenshot({ path: join(shots, 'login.png') });
      await page.fill('#name', name);
      await page.fill('#password', PASSWORD);
      await page.click('button[type=submit]');
      await page.waitForURL(/\/console\/partners/);
    }

    it('a hold of the mass-delete guard shows as a notice and a table on Partners; an operator discards it there, audited', async () => {
      const [tx] = (await store.knex('transactions').where('partner_id', 'lucky-casino').orderBy('transaction_id').limit(1).select('transaction_id')) as { transaction_id: string }[];
      // A guard that allows nothing holds the one delete.
      const held = await loaderOf().remove({ partner: 'lucky-casino', variant: 'igaming', entity: 'transactions', ids: [tx!.transaction_id], learnedVia: 'soft_delete', runId: 'console-hold', guard: { max_share: 0, min_records: 0 } });
      assert.equal(held.held?.held, 1);
      const context = await browser!.newContext({ viewport: { width: 1300, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(5000);
      await login(page, 'olga');
      await visit(page, '/console/partners', 'partners-delete-hold');
      assert.match(await page.locator('.notice').first().innerText(), /The mass-delete guard holds 1 delete\(s\) in 1 hold\(s\) \(lucky-casino\/transactions\)/);
      const main = await page.locator('main').innerText();
      assert.match(main, /Deletes at the source/);
      assert.match(main, new RegExp(`${held.held!.holdId}\\s+lucky-casino\\s+transactions\\s+1\\s+soft_delete`));
      await page.click(`form[action="/console/deletes/discard"] button:has-text("Discard hold ${held.held!.holdId}")`);
      await page.waitForURL(/notice=/);
      assert.match(await page.locator('.notice').first().innerText(), new RegExp(`Hold ${held.held!.holdId} discarded: 1 transactions kept`));
      await page.screenshot({ path: join(shots, 'partners-delete-discarded.png'), fullPage: true });
      assert.doesNotMatch(await page.locator('main').innerText(), /The mass-delete guard holds/);
      assert.ok(await store.knex('transactions').where({ partner_id: 'lucky-casino', transaction_id: tx!.transaction_id }).first('transaction_id'), 'the record is kept');
      const audited = await store.knex('console_audit').where({ action: 'deletes discard' }).first('user_name', 'target');
      assert.deepEqual(audited, { user_name: 'olga', target: 'lucky-casino' });
      await context.close();
    });

    it('an operator sees the partners\' freshness, replays a reject and sees it load; the action is on the Activity page', async () => {
      const context = await browser!.newContext({ viewport: { width: 1300, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(5000);
      await login(page, 'olga');
      await visit(page, '/console/partners', 'partners');
      const text = await page.locator('main').innerText();
      assert.match(text, /lucky-casino\s+customers/);
      assert.match(text, /sandbox-casino\s+customers\s+(ok|late|breach)/);
      await visit(page, '/console/runs?partner=lucky-casino', 'runs');
      assert.match(await page.locator('main').innerText(), /lucky-casino\s+customers\s+import\s+(succeeded|partial)/);
      await visit(page, '/console/rejects', 'rejects');
      const rejects = await page.locator('main').innerText();
      assert.match(rejects, /country_code\s+enum\s+1\s+country_code: an older list of countries lacked GB\s+\{\s+"customer_id": "LC-9001"/);
      assert.doesNotMatch(rejects, /zoe\.replayed@example\.com/, 'personal fields are masked');
      assert.match(rejects, /"email": "z\*+"/);
      await page.click('form[action="/console/rejects/replay"] button:has-text("Replay lucky-casino")');
      await page.waitForURL(/notice=/);
      assert.match(await page.locator('.notice').innerText(), /Replayed lucky-casino: customers: \d+ replayed, [1-9]\d* loaded/);
      const loaded = await store.knex('customers').where({ partner_id: 'lucky-casino', customer_id: 'LC-9001' }).first('customer_id');
      assert.ok(loaded, 'the replayed customer is in the store');
      await visit(page, '/console/activity', 'activity');
      assert.match(await page.locator('main').innerText(), /olga\s+replay rejects\s+lucky-casino/);
      await visit(page, '/console/onboarding', 'onboarding');
      await context.close();
    });

    it('an operator backfills a sandbox partner and watches its progress advance to the final counts, without a reload', async () => {
      const context = await browser!.newContext({ viewport: { width: 1300, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(5000);
      await login(page, 'olga');
      const day = (n: number) => new Date(clock().getTime() - n * 86_400_000).toISOString().slice(0, 10);
      await page.selectOption('#bf-partner', 'sandbox-live');
      await page.fill('#bf-from', day(6));
      await page.fill('#bf-to', day(2));
      await page.click('form[action="/console/partners/backfill"] button[type=submit]');
      await page.waitForURL(/\/console\/backfills\/[A-Za-z0-9_-]+$/);
      const address = page.url();
      let navigations = 0;
      page.on('framenavigated', () => (navigations += 1));
      // What the page shows, sampled while the backfill runs: the state and each stream's cells.
      const snapshots: { state: string; cells: string[][] }[] = [];
      for (let i = 0; i < 400; i++) {
        const snap = await page.evaluate(() => {
          type El = { textContent: string | null; querySelectorAll(s: string): El[] };
          const doc = (globalThis as unknown as { document: { getElementById(id: string): El; querySelectorAll(s: string): El[] } }).document;
          return { state: doc.getElementById('bf-state').textContent ?? '', cells: [...doc.querySelectorAll('#backfill tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')) };
        });
        if (JSON.stringify(snap) !== JSON.stringify(snapshots.at(-1))) snapshots.push(snap);
        if (snapshots.length === 3) await page.screenshot({ path: join(shots, 'backfill-running.png'), fullPage: true });
        if (snap.state !== 'running') break;
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
      const final = snapshots.at(-1)!;
      assert.equal(final.state, 'done');
      assert.equal(navigations, 0, 'the page was not reloaded');
      assert.equal(page.url(), address);
      const running = snapshots.filter((s) => s.state === 'running');
      assert.ok(running.length >= 3, `progress advanced on the page while running: ${running.length} distinct views`);
      // Loaded counts only grow, and some stream was seen part-way (a days window below the last, with records loaded).
      const loadedOf = (s: { cells: string[][] }) => s.cells.reduce((n, c) => n + Number(c[4]), 0);
      for (let i = 1; i < snapshots.length; i++) assert.ok(loadedOf(snapshots[i]!) >= loadedOf(snapshots[i - 1]!), 'loaded never goes back');
      assert.ok(running.some((s) => s.cells.some((c) => /^(\d+)\/(\d+)$/.test(c[1]!) && Number(c[1]!.split('/')[0]) < Number(c[1]!.split('/')[1]) && Number(c[4]) > 0)), 'a stream seen mid-way with records loaded');
      await page.screenshot({ path: join(shots, 'backfill-done.png'), fullPage: true });
      // The final counts are the runs' stored counts (the same job as `partner-sync backfill`).
      const runs = (await store.knex('runs').where({ partner_id: 'sandbox-live', kind: 'backfill' }).select('stream', 'status', 'loaded', 'rejected')) as { stream: string; status: string; loaded: number; rejected: number }[];
      assert.deepEqual(runs.map((r) => r.stream).sort(), ['activity', 'customers', 'transactions']);
      for (const r of runs) {
        const row = final.cells.find((c) => c[0] === r.stream)!;
        assert.deepEqual([row[4], row[5], row[6]], [String(r.loaded), String(r.rejected), r.status], r.stream);
        assert.ok(Number(r.loaded) > 0, `${r.stream} loaded records`);
      }
      assert.equal(await page.locator('#bf-summary').innerText(), 'Done.');
      await visit(page, '/console/activity', 'activity-backfill');
      assert.match(await page.locator('main').innerText(), /olga\s+backfill\s+sandbox-live \d{4}-\d{2}-\d{2}\.\.\d{4}-\d{2}-\d{2}\s+customers succeeded: [1-9]\d* loaded/);
      // The partner's go-live checklist as `partner-sync onboard verify` records it, shown on the Onboarding page.
      await saveChecklist(store.knex, live.partner, await verifyChecklist({ store, clock: store.clock, logger: silentLogger(), redact: (t: string) => t }, live, 5), store.now());
      await visit(page, '/console/onboarding', 'onboarding-checklist');
      assert.match(await page.locator('main').innerText(), /Partner sandbox-live[\s\S]*credentials_received\s+yes[\s\S]*backfill_done\s+yes/);
      await context.close();
    });

    it('a manager drills from a commission figure to its source transaction, confirms a fraud flag and sees its hold voided', async () => {
      const context = await browser!.newContext({ viewport: { width: 1300, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(5000);
      await login(page, 'max');
      await visit(page, '/console/commissions', 'commissions');
      const figure = page.locator('a[href^="/console/commissions/lines"]').first();
      await figure.click();
      await page.waitForURL(/\/console\/commissions\/lines/);
      await visit(page, page.url().slice(url.length), 'ledger-lines');
      const source = page.locator('a[href^="/console/records/transactions"]').first();
      const sourceText = await source.innerText();
      await source.click();
      await page.waitForURL(/\/console\/records\/transactions/);
      await visit(page, page.url().slice(url.length), 'source-record');
      const record = await page.locator('main').innerText();
      assert.match(record, new RegExp(`transaction_id\\s+${sourceText.replace('transactions:', '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      await visit(page, '/console/reports', 'reports');
      // The demo's days: per day, the samples' November.
      await visit(page, '/console/reports?by=day&from=2026-10-25&to=2026-11-20', 'reports-by-day');
      const charted = await page.evaluate(() => {
        const chart = (globalThis as unknown as { Chart: { getChart(id: string): { data: { datasets: { label: string; data: number[] }[] } } | undefined } }).Chart;
        return Object.fromEntries(['ftd', 'revenue', 'commissions', 'funnel'].map((id) => [id, chart.getChart(id)?.data.datasets.map((d) => [d.label, d.data.reduce((a, b) => a + b, 0)])]));
      });
      for (const id of ['ftd', 'revenue', 'commissions', 'funnel']) assert.ok(charted[id] && charted[id]!.length > 0, `chart ${id} drawn`);
      assert.ok(charted.ftd![0]![1] as number > 0, 'FTDs charted');
      assert.ok(charted.revenue!.every(([, sum]) => (sum as number) !== 0), 'GGR and NGR charted');
      assert.ok(charted.commissions![0]![1] as number > 0, 'commissions charted');
      assert.ok(charted.funnel![0]![1] as number > 0, 'funnel charted');
      assert.equal(await page.evaluate(() => typeof (globalThis as unknown as { Chart?: unknown }).Chart), 'function', 'chart.js loaded from the server');
      await visit(page, '/console/fraud', 'fraud');
      const flag = (await store.knex('fraud_flags').where({ partner_id: 'sandbox-casino', rule: 'duplicate_identity', status: 'open' }).first('id')) as { id: number };
      // The queue in money order: the two sign-ups' CPAs (GB: 2 × 140 USD) first, the held commission never rising down the page.
      const queue: string[][] = [];
      for (const row of await page.locator('main table tbody tr').all()) queue.push((await row.locator('td').allInnerTexts()).map((t) => t.trim()));
      assert.deepEqual([queue[0]?.[0], queue[0]?.[2], queue[0]?.[7]], [`#${flag.id}`, 'duplicate_identity', '280.00']);
      const held = queue.map((r) => Number(r[7]));
      assert.deepEqual(held, [...held].sort((a, b) => b - a), 'largest exposure first');
      await page.goto(`${url}/console/fraud/${flag.id}`);
      assert.ok(await page.locator('table:has(th:text("Withheld USD"))').count() > 0, 'the flag holds commission for review');
      await page.screenshot({ path: join(shots, 'fraud-flag-open.png'), fullPage: true });
      await page.fill('#reason', 'same person, two accounts');
      await page.click('button[value=confirmed]');
      await page.waitForURL(/notice=/);
      await visit(page, page.url().slice(url.length), 'fraud-flag-confirmed');
      const after = await page.locator('main').innerText();
      assert.match(after, /Flag #\d+ confirmed/);
      assert.doesNotMatch(after, /miastone@gmail\.com/, 'the evidence\'s e-mail is masked');
      assert.match(after, /No commission is held for this flag \(confirmed: its holds were voided\)/);
      assert.equal(((await store.knex('fraud_flags').where('id', flag.id).first('decided_by')) as { decided_by: string }).decided_by, 'console:max');
      await visit(page, '/console/activity', 'activity-manager');
      assert.match(await page.locator('main').innerText(), /max\s+fraud confirm\s+flag #\d+\s+same person, two accounts/);
      await context.close();
    });

    it("a manager erases a customer's personal data from its record page, confirming it; the record keeps its other fields and the Activity page says so", async () => {
      const customer = (await store.knex('customers').where('partner_id', 'sandbox-casino').whereNotNull('email').whereNotNull('first_name').orderBy('customer_id').first('customer_id', 'email', 'affiliate_id')) as { customer_id: string; email: string; affiliate_id: string };
      const context = await browser!.newContext({ viewport: { width: 1300, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(5000);
      await login(page, 'max');
      const path = `/console/records/customers?${new URLSearchParams({ partner: 'sandbox-casino', id: customer.customer_id })}`;
      await visit(page, path, 'customer-before-erasure');
      await page.click('button:text("Erase personal data")');
      assert.match(await page.locator('main').innerText(), /Tick the box to confirm/, 'not erased without the confirmation');
      assert.equal(((await store.knex('customers').where({ partner_id: 'sandbox-casino', customer_id: customer.customer_id }).first('email')) as { email: string | null }).email, customer.email);
      await page.goto(`${url}${path}`);
      await page.check('#erase-confirm');
      await page.click('button:text("Erase personal data")');
      await page.waitForURL(/notice=/);
      await visit(page, page.url().slice(url.length), 'customer-after-erasure');
      const shown = await page.locator('main').innerText();
      assert.match(shown, new RegExp(`Erased the personal data of ${customer.customer_id} \\(customers 1`));
      assert.match(shown, new RegExp(`affiliate_id\\s+${customer.affiliate_id}`), 'the other fields stay');
      // The form is gone: the page says when and by whom instead.
      assert.equal(await page.locator('form[action="/console/customers/erase"]').count(), 0);
      assert.match(shown, /Personal data erased\s+Erased on \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC by console:max \(console\)/);
      assert.deepEqual(await store.knex('customers').where({ partner_id: 'sandbox-casino', customer_id: customer.customer_id }).first('email', 'first_name', 'last_name'), { email: null, first_name: null, last_name: null });
      await visit(page, '/console/activity', 'activity-erasure');
      assert.match(await page.locator('main').innerText(), new RegExp(`max\\s+erase customer\\s+sandbox-casino ${customer.customer_id}\\s+customers 1`));
      await context.close();
    });
  });
});
