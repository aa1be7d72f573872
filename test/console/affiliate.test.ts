/**
 * The affiliate's own view in the console (issue 57), end to end on each store: the `serve` app
 * (buildApi with the console) over a store holding a generated month and a half of one iGaming
 * partner (the sandbox's generator, imported with `partner-sync import`, FX rates and the shipped
 * commission plans in force), Chromium for the pages, plain fetch for the refusals.
 *
 * - An affiliate invited with `users add --role affiliate` sets its password from the link and
 *   lands on its dashboard, whose figures equal `report affiliates --json` and `commissions --json`.
 * - Two affiliates never see each other's rows, whatever ids they put in queries and forms;
 *   affiliates are kept off the staff pages, operators off the affiliate's; a manager's "view as"
 *   is read-only and audited.
 * - axe-core finds no serious or critical violation on the new pages.
 * - A push shows on the refreshed dashboard within 2 s.
 * The store's clock: the last evening of the generated month, running on, so that "this month"
 * and "today" are the month's whatever day the suite runs. Screenshots go to a temp folder (printed).
 */
import assert from 'node:assert/strict';
import { revshareDetail } from '../../src/console/affiliate-pages.js';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { acceptInvitation, addUser, inviteUser } from '../../src/access/console-users.js';
import { createClient } from '../../src/access/api-clients.js';
import type { KdfParams } from '../../src/access/secret-hash.js';
import { buildApi } from '../../src/cli/server.js';
import { commissionsCommand } from '../../src/cli/commands/commissions.js';
import { fxImportCommand } from '../../src/cli/commands/fx.js';
import { importCommand } from '../../src/cli/commands/import.js';
import { affiliatesReportCommand } from '../../src/cli/commands/report.js';
import { usersAddCommand } from '../../src/cli/commands/users.js';
import { loadConfig } from '../../src/cli/definitions.js';
import { cliLoader } from '../../src/cli/loader.js';
import type { Io } from '../../src/cli/io.js';
import { offsetClock, systemClock } from '../../src/kernel/clock.js';
import { silentLogger } from '../../src/log.js';
import { packageRoot } from '../../src/paths.js';
import { addPostback } from '../../src/postbacks/definitions.js';
import { createSandboxData } from '../../src/sandbox/data.js';
import type { SpecRecord } from '../../src/types.js';
import { CHROMIUM, launchChromium } from '../support/browser.js';
import { STORES, type TestStore } from '../support/stores.js';
import { ndjson, ratesCsv } from '../volume/support.js';

const TEST_KDF: KdfParams = { alg: 'scrypt', N: 1024, r: 8, p: 1, keylen: 32 };
const PASSWORD = 'correct horse battery';
const PARTNER = 'sandbox-casino';
const root = packageRoot();
const GENERATED = { seed: 1, customers: 400, from: '2026-09-16', to: '2026-10-31' } as const;
/** The two affiliates: the one signing in from its invitation, and the other. */
const A = 'aff-107';
const B = 'aff-103';
const POSTBACK_KEY = 'affiliate-test-postback-key-0123456789abcdef';

const quietIo = (): Io => ({ out: () => undefined, err: () => undefined, stdin: new PassThrough(), isTty: false });
const capture = (): Io & { text(): string } => {
  const lines: string[] = [];
  return { ...quietIo(), out: (t: string) => void lines.push(t), text: () => lines.join('\n') };
};

const data = createSandboxData({ ...GENERATED, clock: () => new Date('2026-10-31T22:00:00.000Z') });

for (const backend of STORES) {
  describe(`the affiliate's view in the console (${backend.name})`, function () {
    this.timeout(180_000);
    // The last evening of the generated month, running on: this month is October, last month September.
    const clock = offsetClock(systemClock, Date.parse('2026-10-31T22:30:00.000Z') - Date.now());
    let dir: string;
    let shots: string;
    let t: TestStore;
    let app: FastifyInstance;
    let url: string;
    let browser: Browser | undefined;
    let globals: { config: string; store: string; clock: typeof clock };
    let invitation: string;
    const ids = (affiliate: string) => data.customers('igaming').filter((c) => c.affiliate_id === affiliate).map((c) => String(c.customer_id));
    const postbackOf: Record<string, string> = {};
    const savedKey = process.env.POSTBACK_SECRET_KEY;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'affiliate-console-'));
      shots = join(dir, 'screenshots');
      mkdirSync(shots);
      process.env.POSTBACK_SECRET_KEY = POSTBACK_KEY;
      process.env.SANDBOX_CLIENT_SECRET ??= 'sandbox-secret';
      t = await backend.create(clock);
      globals = { config: join(root, 'config'), store: t.url, clock };
      // Each affiliate's postback, there before the data: the import queues their events.
      for (const affiliate of [A, B]) postbackOf[affiliate] = (await addPostback(t.store, { affiliate, events: 'registration,ftd', method: 'GET', url: 'https://93.184.215.14/pb?c={click_id}' }, POSTBACK_KEY)).postback.id;
      const io = quietIo();
      const logLevel = process.env.LOG_LEVEL;
      process.env.LOG_LEVEL = 'error';
      writeFileSync(join(dir, 'rates.csv'), ratesCsv(GENERATED.from, GENERATED.to));
      assert.equal(await fxImportCommand(globals, { file: join(dir, 'rates.csv') }, io), 0);
      const transactions = data.transactions('igaming').map(({ updated_at: _changed, ...tx }) => tx);
      const files = ([['customers', data.customers('igaming')], ['transactions', transactions], ['activity', data.activity('igaming')]] as const).map(([entity, records]) => {
        const file = join(dir, `${entity}.ndjson`);
        writeFileSync(file, ndjson(records as readonly SpecRecord[]));
        return { entity, file };
      });
      assert.equal(await importCommand(globals, { partner: PARTNER, variant: 'igaming', files }, io), 0);
      if (logLevel === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = logLevel;
      await addUser(t.store, 'olga', 'operator', PASSWORD, TEST_KDF);
      await addUser(t.store, 'max', 'manager', PASSWORD, TEST_KDF);
      const config = await loadConfig(globals);
      const loader = await cliLoader(globals, io, t.store, silentLogger());
      app = await buildApi({ store: t.store, loader, logger: silentLogger(), config: { dir: globals.config, definitions: config.definitions, redact: config.redact } }, { env: { PARTNER_SYNC_JWT_SECRET: 'x'.repeat(40) } });
      await app.listen({ host: '127.0.0.1', port: 0 });
      url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      // Affiliate A: from the command, as an operator would; B: from the same function, its password set.
      const out = capture();
      assert.equal(await usersAddCommand(globals, { name: 'ana', role: 'affiliate', affiliates: [A], consoleUrl: url }, out, {}), 0);
      invitation = /invitation \(one use, until [^)]+\): (\S+)/.exec(out.text())![1]!;
      const bob = await inviteUser(t.store, 'bob', 'affiliate', [B], TEST_KDF);
      assert.ok('user' in (await acceptInvitation(t.store, bob.token, PASSWORD, TEST_KDF)));
      browser = await launchChromium();
      console.log(`      affiliate console screenshots (${backend.name}): ${shots}${process.env.KEEP_CONSOLE_ARTIFACTS !== undefined ? `, store ${t.url}` : ''}`);
    });

    after(async () => {
      await browser?.close();
      await app?.close();
      if (process.env.KEEP_CONSOLE_ARTIFACTS === undefined || backend.name !== 'sqlite') await t?.drop();
      else await t?.store.close();
      if (savedKey === undefined) delete process.env.POSTBACK_SECRET_KEY;
      else process.env.POSTBACK_SECRET_KEY = savedKey;
      if (dir && process.env.KEEP_CONSOLE_ARTIFACTS === undefined) rmSync(dir, { recursive: true, force: true });
    });

    async function signIn(name: string): Promise<string> {
      const res = await fetch(`${url}/console/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ name, password: PASSWORD }) });
      assert.equal(res.status, 303, `sign-in of ${name}`);
      return res.headers.get('set-cookie')!.split(';')[0]!;
    }
    const get = async (cookie: string, path: string) => {
      const res = await fetch(`${url}${path}`, { headers: { cookie }, redirect: 'manual' });
      return { status: res.status, body: await res.text() };
    };
    const post = async (cookie: string, path: string, fields: Record<string, string>) => {
      const res = await fetch(`${url}${path}`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
      return { status: res.status, body: await res.text(), location: res.headers.get('location') };
    };
    const csrfOf = async (cookie: string, path = '/console/affiliate') => /name="_csrf" value="([^"]+)"/.exec((await get(cookie, path)).body)![1]!;

    /** What the CLI says of the affiliate: `report affiliates --json` summed, and `commissions --json`. */
    async function cliFigures(affiliate: string, month: string, from: string, to: string) {
      const report = capture();
      assert.equal(await affiliatesReportCommand({ ...globals, json: true }, { affiliate, from, to, by: 'month' }, report), 0);
      const rows = (JSON.parse(report.text()) as { rows: { registrations: number; ftd_count: number; deposits_usd: string }[] }).rows;
      const commissions = capture();
      assert.equal(await commissionsCommand({ ...globals, json: true }, { affiliate, month }, commissions), 0);
      const ledger = JSON.parse(commissions.text()) as { total_usd: string; payable_usd: string };
      const cents = rows.reduce((s, r) => s + Math.round(Number(r.deposits_usd) * 100), 0);
      return {
        registrations: String(rows.reduce((s, r) => s + r.registrations, 0)),
        ftds: String(rows.reduce((s, r) => s + r.ftd_count, 0)),
        deposits: (cents / 100).toFixed(2),
        earned: Number(ledger.total_usd).toFixed(2),
        payable: Number(ledger.payable_usd).toFixed(2),
      };
    }

    /** The cells of a table (by its caption) on the page. */
    async function tableOf(page: Page, caption: string): Promise<string[][]> {
      const rows: string[][] = [];
      for (const row of await page.locator(`table:has(caption:text-is("${caption}")) tbody tr`).all()) rows.push((await row.locator('td, th').allInnerTexts()).map((c) => c.trim()));
      return rows;
    }

    async function visit(page: Page, path: string, name: string): Promise<void> {
      const res = await page.goto(`${url}${path}`);
      assert.ok(res && res.ok(), `${path}: ${res?.status()}`);
      await check(page, path, name);
    }

    async function check(page: Page, path: string, name: string): Promise<void> {
      await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
      await page.evaluate(readFileSync(join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8'));
      const violations = await page.evaluate(async () => {
        const result = await (globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }).axe.run();
        return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}, ${v.nodes.length} nodes)`);
      });
      assert.deepEqual(violations, [], `${path}: accessibility violations`);
    }

    describe('in a browser (chromium)', () => {
      before(function () {
        if (!browser) {
          console.log(`      SKIPPED: no chromium at ${CHROMIUM}`);
          this.skip();
        }
      });

      it('an invited affiliate sets its password and lands on its dashboard, whose figures are `report affiliates` and `commissions` of its id', async () => {
        const context = await browser!.newContext({ viewport: { width: 1300, height: 900 } });
        const page = await context.newPage();
        page.setDefaultTimeout(10_000);
        assert.match(invitation, new RegExp(`^${url}/console/invite/[A-Za-z0-9_-]{43}$`));
        await page.goto(invitation);
        await check(page, '/console/invite/:token', 'invitation');
        await page.fill('#password', PASSWORD);
        await page.fill('#confirm', PASSWORD);
        await page.click('button[type=submit]');
        await page.waitForURL(/\/console\/affiliate$/);
        await check(page, '/console/affiliate', 'dashboard');
        // The link opens once.
        assert.equal((await fetch(invitation)).status, 410);

        const figures = await tableOf(page, 'Your figures');
        const row = (label: string) => figures.find((r) => r[0] === label)!;
        for (const [label, month, from, to] of [['This month', '2026-10', '2026-10-01', '2026-10-31'], ['Last month', '2026-09', '2026-09-01', '2026-09-30']] as const) {
          const want = await cliFigures(A, month, from, to);
          const [, registrations, ftds, deposits, , earned, , payable] = row(label);
          assert.deepEqual({ registrations, ftds, deposits, earned, payable }, want, label);
          assert.ok(Number(want.ftds) > 0 && Number(want.earned) > 0, `${label}: FTDs and commission (${JSON.stringify(want)})`);
        }
        const today = await cliFigures(A, '2026-10', '2026-10-31', '2026-10-31');
        assert.deepEqual(row('Today').slice(1, 4), [today.registrations, today.ftds, today.deposits], 'today');
        // By partner and campaign: every campaign is the affiliate's own.
        const main = await page.locator('main').innerText();
        assert.ok(!main.includes(B), 'nothing of the other affiliate');

        await visit(page, '/console/affiliate/players', 'players');
        const players = await tableOf(page, 'Your players');
        assert.deepEqual(players.map((r) => r[1]).sort(), ids(A).sort(), 'the players are the affiliate\'s customers');
        const ftdPlayers = players.filter((r) => r[6] !== '').length;
        const allTime = await cliFigures(A, '2026-10', GENERATED.from, GENERATED.to);
        assert.equal(String(ftdPlayers), allTime.ftds, 'players with an FTD date = FTDs of the whole range');
        assert.ok(!(await page.locator('main').innerText()).includes('@example.com'), 'no personal field');

        await visit(page, '/console/affiliate/statements?month=2026-10', 'statement');
        const statement = await page.locator('main').innerText();
        const october = await cliFigures(A, '2026-10', '2026-10-01', '2026-10-31');
        assert.ok(statement.includes(`Statement of ana (aff-107) for 2026-10: ${october.payable} USD payable of ${october.earned} USD booked`), statement.slice(0, 400));
        await page.emulateMedia({ media: 'print' });
        await page.screenshot({ path: join(shots, 'statement-print.png'), fullPage: true });
        assert.equal(await page.locator('header').isVisible(), false, 'print: no navigation');
        await page.emulateMedia({ media: 'screen' });

        await visit(page, '/console/affiliate/postbacks', 'postbacks');
        const log: string[][] = [];
        for (const r of await page.locator('h2:text-is("Delivery log") + .wide table tbody tr').all()) log.push((await r.locator('td').allInnerTexts()).map((c) => c.trim()));
        assert.ok(log.length > 0, 'its postback\'s events');
        assert.ok(log.every((r) => r[1] === postbackOf[A]), 'only its own postback\'s events');
        await context.close();
      });

      it('a push followed by a refresh within 2 s shows the new FTD in today\'s figures', async () => {
        const context = await browser!.newContext({ viewport: { width: 1300, height: 900 } });
        const page = await context.newPage();
        page.setDefaultTimeout(10_000);
        await page.goto(`${url}/console/login`);
        await page.fill('#name', 'ana');
        await page.fill('#password', PASSWORD);
        await page.click('button[type=submit]');
        await page.waitForURL(/\/console\/affiliate$/);
        const ftdsToday = async () => Number((await tableOf(page, 'Your figures')).find((r) => r[0] === 'Today')![2]);
        const before = await ftdsToday();
        const client = await createClient(t.store, { partner: PARTNER, variant: 'igaming' }, TEST_KDF);
        const tokenRes = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }) });
        const token = ((await tokenRes.json()) as { access_token: string }).access_token;
        const push = async (path: string, record: SpecRecord) => {
          const res = await fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(record) });
          assert.equal(res.status, 200, `${path}: ${await res.text()}`);
        };
        const now = clock();
        const at = (ms: number) => new Date(now.getTime() - ms).toISOString();
        await push('/api/v1/igaming/customers', { customer_id: 'pushed-1', signup_date: at(60_000), affiliate_id: A, country_code: 'DE', last_modified_date: at(60_000) });
        await push('/api/v1/igaming/transactions', { transaction_id: 'pushed-1-dep', customer_id: 'pushed-1', transaction_type: 'deposit', amount_currency: 60, currency: 'USD', amount_usd: 60, transaction_date: at(30_000), status: 'approved' });
        const pushed = Date.now();
        await page.reload();
        let after = await ftdsToday();
        while (after === before && Date.now() - pushed < 2000) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          await page.reload();
          after = await ftdsToday();
        }
        assert.ok(Date.now() - pushed <= 2000, `shown within 2 s (${Date.now() - pushed} ms)`);
        assert.equal(after, before + 1, 'today\'s FTDs went up by one');
        await page.screenshot({ path: join(shots, 'dashboard-after-push.png'), fullPage: true });
        await context.close();
      });

      it('a manager opens an affiliate\'s view read-only from the Affiliates page; it is audited', async () => {
        const context = await browser!.newContext({ viewport: { width: 1300, height: 900 } });
        const page = await context.newPage();
        page.setDefaultTimeout(10_000);
        await page.goto(`${url}/console/login`);
        await page.fill('#name', 'max');
        await page.fill('#password', PASSWORD);
        await page.click('button[type=submit]');
        await page.waitForURL(/\/console\/partners/);
        await visit(page, '/console/affiliates', 'affiliates');
        await page.click('a:text("View as ana")');
        await page.waitForURL(/\/console\/affiliate\?as=ana/);
        await check(page, '/console/affiliate?as=ana', 'view-as-dashboard');
        assert.match(await page.locator('main').innerText(), /Viewing as ana \(aff-107\), read-only/);
        await page.click('nav a:text("Postbacks")');
        await page.waitForURL(/\/console\/affiliate\/postbacks\?as=ana/);
        await check(page, '/console/affiliate/postbacks?as=ana', 'view-as-postbacks');
        assert.equal(await page.locator('main form[method=post]').count(), 0, 'no action');
        const audited = (await t.store.knex('console_audit').where({ action: 'view as', user_name: 'max' }).select('target', 'detail')) as { target: string; detail: string }[];
        assert.deepEqual([...new Set(audited.map((a) => `${a.target} ${a.detail}`))].sort(), ['ana /console/affiliate', 'ana /console/affiliate/postbacks']);
        await context.close();
      });
    });

    describe('isolation (HTTP)', () => {
      it('every page, CSV and action tried by one affiliate with the other\'s ids answers 403 or 404, or shows its own rows only', async () => {
        const ana = await signIn('ana');
        const other = ids(B);
        const theirs = (body: string) => other.filter((id) => new RegExp(`\\b${id}\\b`).test(body));
        const mine = ids(A);
        const someOther = [...other].sort()[0]!;
        const paths = [
          '/console/affiliate', `/console/affiliate?affiliate=${B}`, '/console/affiliate?as=bob', `/console/affiliate?affiliate=${PARTNER}:${B}`,
          '/console/affiliate/players', `/console/affiliate/players?affiliate=${B}`, '/console/affiliate/players?as=bob', `/console/affiliate/players?campaign=${B}-welcome-100`,
          `/console/affiliate/players?after=${encodeURIComponent(`${PARTNER}|`)}`, `/console/affiliate/players?after=${encodeURIComponent(`${PARTNER}|${someOther}`)}&affiliate=${B}`, '/console/affiliate/players?after=nonsense',
          '/console/affiliate/players?format=csv', `/console/affiliate/players?format=csv&affiliate=${B}`, '/console/affiliate/players?format=csv&as=bob',
          '/console/affiliate/statements?month=2026-10', `/console/affiliate/statements?month=2026-10&affiliate=${B}`, '/console/affiliate/statements?month=2026-10&as=bob',
          '/console/affiliate/statements?month=2026-10&format=csv', `/console/affiliate/statements?month=2026-09&format=csv&affiliate=${B}`,
          '/console/affiliate/postbacks', `/console/affiliate/postbacks?affiliate=${B}`, '/console/affiliate/postbacks?as=bob', `/console/affiliate/postbacks?postback=${postbackOf[B]}`,
        ];
        for (const path of paths) {
          const { status, body } = await get(ana, path);
          assert.ok([200, 403, 404].includes(status), `${path}: ${status}`);
          assert.deepEqual(theirs(body), [], `${path}: the other affiliate's customers`);
          // (The campaign filter's own value is shown back in its field and links.)
          if (!path.includes('campaign=')) assert.ok(!body.includes(B), `${path}: the other affiliate's id`);
          assert.ok(!body.includes(postbackOf[B]!), `${path}: the other affiliate's postback`);
          if (status === 200 && /players(\?|$)(?!.*after=)/.test(path) && !path.includes('campaign=')) assert.ok(mine.some((id) => body.includes(id)), `${path}: its own players`);
        }
        const csrf = await csrfOf(ana);
        for (const action of ['remove', 'test', 'pause', 'resume']) {
          const res = await post(ana, `/console/affiliate/postbacks/${action}`, { _csrf: csrf, postback: postbackOf[B]! });
          assert.ok([403, 404].includes(res.status), `${action}: ${res.status}`);
        }
        const added = await post(ana, '/console/affiliate/postbacks/add', { _csrf: csrf, affiliate: B, events: 'ftd', method: 'GET', url: 'https://93.184.215.14/x' });
        assert.equal(added.status, 403, 'a postback for the other affiliate');
        const live = (await t.store.knex('postbacks').whereNull('removed_at').select('id', 'affiliate_id')) as { id: string; affiliate_id: string }[];
        assert.deepEqual(live.map((p) => `${p.affiliate_id} ${p.id}`).sort(), [`${A} ${postbackOf[A]}`, `${B} ${postbackOf[B]}`].sort(), 'nothing added or removed');
        // Staff pages: 403 to an affiliate.
        for (const path of ['/console/partners', '/console/commissions', `/console/commissions/lines?affiliate=${B}`, '/console/postbacks', '/console/affiliates', '/console/reports', '/console/fraud', '/console/runs', '/console/activity', `/console/records/customers?partner=${PARTNER}&id=${someOther}`]) {
          const { status, body } = await get(ana, path);
          assert.equal(status, 403, path);
          assert.deepEqual(theirs(body), [], path);
        }
        const staff = await post(ana, '/console/postbacks/pause', { _csrf: csrf, postback: postbackOf[B]! });
        assert.equal(staff.status, 403, 'a manager\'s pause');
      });

      it('an id held on one partner (PARTNER:AFF) shows that partner\'s rows only, and its postbacks stay the platform\'s', async () => {
        for (const [name, affiliates] of [['cleo', [`${PARTNER}:${A}`]], ['dora', [`another-casino:${A}`]]] as const) {
          const invited = await inviteUser(t.store, name, 'affiliate', affiliates, TEST_KDF);
          assert.ok('user' in (await acceptInvitation(t.store, invited.token, PASSWORD, TEST_KDF)));
        }
        const [cleo, dora] = [await signIn('cleo'), await signIn('dora')];
        const csv = (cookie: string) => get(cookie, '/console/affiliate/players?format=csv');
        const listed = (body: string) => body.trim().split('\r\n').slice(1).map((l) => l.split(',')[1]).sort();
        // Every aff-107 customer stored for sandbox-casino (the generated ones, and any a test above pushed).
        const stored = ((await t.store.knex('customers').where({ partner_id: PARTNER, affiliate_id: A }).pluck('customer_id')) as string[]).map(String).sort();
        assert.ok(stored.length >= ids(A).length && ids(A).every((id) => stored.includes(id)));
        assert.deepEqual(listed((await csv(cleo)).body), stored, 'cleo: aff-107 of sandbox-casino, every one');
        assert.deepEqual(listed((await csv(dora)).body), [], 'dora: aff-107 of another partner has no customer here');
        for (const path of ['/console/affiliate', '/console/affiliate/statements?month=2026-10', '/console/affiliate/players']) {
          const body = (await get(dora, path)).body;
          for (const id of ids(A).slice(0, 20)) assert.ok(!body.includes(`>${id}<`), `${path} shows no customer of sandbox-casino to dora`);
        }
        const page = await get(cleo, '/console/affiliate/postbacks');
        assert.match(page.body, /the platform sets up their postbacks/);
        assert.ok(!page.body.includes(postbackOf[A]!), "aff-107's postback fires on every partner: not cleo's to see");
        const added = await post(cleo, '/console/affiliate/postbacks/add', { _csrf: await csrfOf(cleo), affiliate: A, events: 'ftd', url: 'https://93.184.215.14/x' });
        assert.equal(added.status, 403);
        assert.equal(await post(cleo, '/console/affiliate/postbacks/remove', { _csrf: await csrfOf(cleo), postback: postbackOf[A]! }).then((r) => r.status), 404);
      });

      it('an operator gets 403 on the affiliate\'s pages; a manager\'s ?as= is read-only (POST 403) and audited', async () => {
        const olga = await signIn('olga');
        for (const path of ['/console/affiliate', '/console/affiliate/players', '/console/affiliate/statements', '/console/affiliate/postbacks', '/console/affiliate?as=ana', '/console/affiliates']) {
          assert.equal((await get(olga, path)).status, 403, path);
        }
        const max = await signIn('max');
        const before = Number(((await t.store.knex('console_audit').where({ action: 'view as', target: 'bob' }).count({ n: '*' })) as { n: unknown }[])[0]!.n);
        const seen = await get(max, '/console/affiliate/players?as=bob');
        assert.equal(seen.status, 200);
        assert.ok(ids(B).some((id) => seen.body.includes(id)) && !ids(A).some((id) => new RegExp(`\\b${id}\\b`).test(seen.body)), 'bob\'s players only');
        assert.equal((await get(max, '/console/affiliate/players?as=bob&format=csv')).status, 200);
        assert.equal((await get(max, '/console/affiliate?as=nobody')).status, 404);
        const after = Number(((await t.store.knex('console_audit').where({ action: 'view as', target: 'bob' }).count({ n: '*' })) as { n: unknown }[])[0]!.n);
        assert.equal(after, before + 2, 'each page opened as bob is in the audit log');
        const csrf = await csrfOf(max, '/console/partners');
        for (const [action, fields] of [['remove', { postback: postbackOf[B]!, as: 'bob' }], ['test', { postback: postbackOf[B]!, as: 'bob' }], ['add', { as: 'bob', events: 'ftd', method: 'GET', url: 'https://93.184.215.14/y' }], ['remove', { postback: postbackOf[B]! }]] as const) {
          const res = await post(max, `/console/affiliate/postbacks/${action}`, { _csrf: csrf, ...fields });
          assert.equal(res.status, 403, `${action} ${JSON.stringify(fields)}`);
        }
        assert.ok(await t.store.knex('postbacks').where('id', postbackOf[B]!).whereNull('removed_at').first('id'), 'not removed');
        // The manager's own pause of the Postbacks page.
        assert.equal((await post(max, '/console/postbacks/pause', { _csrf: csrf, postback: postbackOf[B]! })).status, 303);
        const bob = await signIn('bob');
        assert.match((await get(bob, '/console/affiliate/postbacks')).body, /paused by the platform since/);
        assert.equal((await post(max, '/console/postbacks/resume', { _csrf: csrf, postback: postbackOf[B]! })).status, 303);
      });
    });
  });
}

describe('a RevShare line on the statement', () => {
  it('says how it was reached: revenue, carry in, each band, carry out', () => {
    const basis = { revenue: 'ngr', revenue_usd: '1500', carry_in_usd: '-200', commissionable_usd: '1300', carry_out_usd: '0', mode: 'tiered', bands: [
      { from_usd: '0', rate: '0.25', on_usd: '1000', amount_usd: '250' }, { from_usd: '1000', rate: '0.3', on_usd: '300', amount_usd: '90' }] };
    // By hand: 25% of the first 1,000 (250) and 30% of the 300 above it (90): 340.
    assert.equal(revshareDetail(basis), 'NGR 1500.00 + carry -200.00 = 1300.00 commissionable (tiered: 25% of 1000.00 (band from 0.00) = 250.00; 30% of 300.00 (band from 1000.00) = 90.00)');
    assert.equal(revshareDetail({ ...basis, revenue_usd: '-50', carry_in_usd: '0', commissionable_usd: '-50', carry_out_usd: '-50', bands: [] }), 'NGR -50.00 = -50.00 commissionable (tiered); carried to next month -50.00');
    assert.equal(revshareDetail({ why: '3 customer-days wait for FX rates' }), '3 customer-days wait for FX rates');
  });
});
