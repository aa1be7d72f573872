/**
 * Alerts (docs/worker.md, Alerts) against local receivers: a real HTTP server for the generic
 * webhook and the Slack-compatible one, a real SMTP server (smtp-server) for e-mail. Every kind
 * starts and ends with one message per channel, naming partner, stream, what to run next and the
 * console page; repeats are rate limited, flapping held back; rules route by kind and partner; a
 * planted secret, a token in a URL and an e-mail address reach no message. Then the conditions
 * the worker reads from the store, on every store: each one made for real, seen by the freshness
 * monitor's check, and ended by the fix a user would make.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { parse as parseYaml } from 'yaml';
import { ALERT_KINDS, parseAlertConfig, type AlertConfig } from '../../src/alerts/config.js';
import type { AlertMessage } from '../../src/alerts/message.js';
import { AlertRouter } from '../../src/alerts/router.js';
import { createRedactor } from '../../src/config/redact.js';
import { importRates } from '../../jobs/commission.js';
import { resumeJobs } from '../../jobs/load-hooks.js';
import { money } from '../../src/kernel/money.js';
import { silentLogger } from '../../src/log.js';
import { addPostback, removePostback } from '../../src/postbacks/definitions.js';
import { replay } from '../../src/postbacks/claims.js';
import { decideHold, holdDeletes } from '../../src/store/delete-holds.js';
import { finishRun, startRun, emptyCounts } from '../../src/store/runs.js';
import { localLocks } from '../../src/store/stream-locks.js';
import { storeConditions } from '../../src/worker/alert-conditions.js';
import { FreshnessMonitor } from '../../src/worker/freshness-monitor.js';
import { StoreOutage } from '../../src/worker/store-outage.js';
import { runCli } from '../support/cli.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CPA_FROM_20, plansFrom, plansYaml } from '../support/plans.js';
import { customer, deposit, raw } from '../support/records.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';
import { FakeTimers } from '../worker/support/fake-timers.js';

const SECRET = 'partner-api-key-7f3a9c21e5';
const SMTP_PASSWORD = 'smtp-pass-4b8d2e6f1a';
const SLACK_TOKEN_PATH = '/services/T0001/B0002/slacktokenabcdef123456';
const PLANS = plansFrom(plansYaml(CPA_FROM_20));

interface Mail { to: string[]; subject: string; body: string }

/** An SMTP server on 127.0.0.1 that keeps each mail's recipients, subject and decoded text. */
async function startSmtp(): Promise<{ port: number; mails: Mail[]; logins: string[]; close(): Promise<void> }> {
  const mails: Mail[] = [];
  const logins: string[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth(auth, _session, cb) {
      logins.push(`${auth.username}:${auth.password ?? ''}`);
      cb(null, { user: auth.username });
    },
    onData(stream, session, cb) {
      let data = '';
      stream.on('data', (c: Buffer) => (data += c.toString('utf8')));
      stream.on('end', () => {
        const [head = '', ...rest] = data.split(/\r?\n\r?\n/);
        const subject = /^Subject: (.*(?:\r?\n[ \t].*)*)/im.exec(head)?.[1]?.replace(/\r?\n[ \t]/g, ' ') ?? '';
        // Quoted-printable: soft breaks out, =XX as bytes.
        const body = Buffer.from(rest.join('\n\n').replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8');
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), subject, body });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return { port, mails, logins, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const yaml = (extra = ''): string => `
console_url: https://sync.example.com/
repeat_minutes: 60
flap_minutes: 15
channels:
  ops-hook: { type: webhook, url_env: OPS_HOOK_URL }
  team-slack: { type: slack, url_env: TEAM_SLACK_URL }
  oncall-mail: { type: email, smtp_url_env: ONCALL_SMTP_URL, from: partner-sync@example.com, to: [oncall@example.com, ops@example.com] }
${extra || `rules:
  - when: all
    channels: [ops-hook, team-slack, oncall-mail]`}
`;

function configOf(text: string, env: NodeJS.ProcessEnv): AlertConfig {
  const { config, errors } = parseAlertConfig((parseYaml(text)), 'config/alerts.yaml', env);
  assert.deepEqual(errors, []);
  return config as AlertConfig;
}

describe('alerts through every channel', function () {
  this.timeout(60_000);
  let hook: Receiver;
  let slack: Receiver;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let env: NodeJS.ProcessEnv;
  beforeEach(async () => {
    hook = await startReceiver();
    slack = await startReceiver();
    smtp = await startSmtp();
    env = {
      OPS_HOOK_URL: `${hook.url}/alerts?token=hooktoken998877`,
      TEAM_SLACK_URL: `${slack.url}${SLACK_TOKEN_PATH}`,
      ONCALL_SMTP_URL: `smtp://alerts:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`,
    };
  });
  afterEach(async () => {
    await hook.close();
    await slack.close();
    await smtp.close();
  });
  const routerOf = (config: AlertConfig) => new AlertRouter({ config, logger: silentLogger(), redact: createRedactor([SECRET, ...Object.values(env) as string[]]) });
  const bodies = (r: Receiver) => r.requests.map((q) => JSON.parse(q.body) as Record<string, unknown>);

  it('each kind starts and ends with one message per channel: partner, stream, the next step, the console page; no secret, token or e-mail address in any', async () => {
    const router = routerOf(configOf(yaml(), env));
    const t0 = new Date('2026-11-28T10:00:00Z');
    const leak = `GET https://api.partner.test/v1/transactions?api_key=${SECRET}&email=jane.doe@example.org answered 401 (key ${SECRET})`;
    for (const kind of ALERT_KINDS) await router.raise({ kind, partner: 'casino-x', stream: 'transactions', detail: `${kind} now: ${leak}` }, t0);
    for (const kind of ALERT_KINDS) await router.clear({ kind, partner: 'casino-x', stream: 'transactions' }, new Date(t0.getTime() + 60_000));
    router.close();
    const n = ALERT_KINDS.length * 2;
    assert.equal(hook.requests.length, n);
    assert.equal(slack.requests.length, n);
    assert.equal(smtp.mails.length, n);
    assert.ok(hook.requests.every((r) => r.url === '/alerts?token=hooktoken998877'));
    assert.ok(smtp.logins.length > 0 && smtp.logins.every((l) => l === `alerts:${SMTP_PASSWORD}`), 'the SMTP URL\'s user and password log in');

    const messages = bodies(hook) as unknown as AlertMessage[];
    for (const kind of ALERT_KINDS) {
      const [start, end] = messages.filter((m) => m.kind === kind);
      assert.equal(start?.status, 'started');
      assert.equal(start?.event, kind);
      assert.equal(end?.status, 'ended');
      assert.equal(end?.since, t0.toISOString());
      assert.equal(start?.partner, 'casino-x');
      assert.equal(start?.stream, 'transactions');
      assert.match(start?.title ?? '', /^ALERT .*: casino-x\/transactions$/);
      assert.match(end?.title ?? '', /^RESOLVED /);
      assert.match(start?.next ?? '', /partner-sync /);
      assert.match(start?.console_url ?? '', /^https:\/\/sync\.example\.com\/console(\/|$)/);
    }
    assert.equal(messages.find((m) => m.kind === 'freshness_breach' && m.status === 'ended')?.event, 'freshness_recovered');
    assert.equal(messages.find((m) => m.kind === 'run_failed')?.next, 'partner-sync status --partner casino-x (the error), then partner-sync run casino-x --stream transactions');
    assert.equal(messages.find((m) => m.kind === 'postbacks_dead')?.console_url, 'https://sync.example.com/console/postbacks');

    // Slack: a notification text and blocks (header, the detail, the fields, the next step and the link).
    const s = bodies(slack)[0] as { text: string; blocks: { type: string; text?: { text: string }; elements?: { text: string }[] }[] };
    assert.match(s.text, /^partner-sync ALERT runs failing: casino-x\/transactions: /);
    assert.deepEqual(s.blocks.map((b) => b.type), ['header', 'section', 'section', 'context']);
    assert.match(s.blocks[3]?.elements?.[0]?.text ?? '', /\*Next:\* partner-sync status --partner casino-x .* <https:\/\/sync\.example\.com\/console\/runs\|open the console>$/);
    // E-mail: to both recipients, the title as the subject, the next step and the link in the text.
    const mail = smtp.mails.find((m) => m.subject.includes('runs failing'));
    assert.deepEqual(mail?.to, ['oncall@example.com', 'ops@example.com']);
    assert.equal(mail?.subject, '[partner-sync] ALERT runs failing: casino-x/transactions');
    assert.match(mail?.body ?? '', /Next: partner-sync status --partner casino-x/);
    assert.match(mail?.body ?? '', /Console: https:\/\/sync\.example\.com\/console\/runs/);

    const everything = [...hook.requests.map((r) => r.body), ...slack.requests.map((r) => r.body), ...smtp.mails.map((m) => `${m.subject}\n${m.body}`)].join('\n');
    for (const secret of [SECRET, 'jane.doe@example.org', SMTP_PASSWORD, 'hooktoken998877', 'slacktokenabcdef123456']) assert.ok(!everything.includes(secret), `no message carries ${secret}`);
    assert.match(everything, /https:\/\/api\.partner\.test\/v1\/transactions\?…/, 'the URL stays, without its query');
  });

  it('an ongoing condition is sent again every repeat_minutes, no more; a flapping one is held back and sent once it holds', async () => {
    const router = routerOf(configOf(yaml('rules: [{ when: [run_failed, freshness_breach], channels: ops-hook }]'), env));
    const at = (min: number) => new Date(Date.parse('2026-11-28T10:00:00Z') + min * 60_000);
    const c = { kind: 'run_failed' as const, partner: 'p1', stream: 'customers', detail: '3 runs failed' };
    await router.raise(c, at(0));
    await router.raise({ ...c, detail: 'still 3 runs failed' }, at(5));
    await router.tick(at(30));
    assert.equal(hook.requests.length, 1, 'one start; the same condition raised again and a tick before the hour send nothing');
    await router.tick(at(60));
    await router.tick(at(90));
    await router.tick(at(120));
    assert.deepEqual(bodies(hook).map((b) => b.status), ['started', 'ongoing', 'ongoing']);
    assert.equal(bodies(hook)[1]?.detail, 'still 3 runs failed');
    assert.match(String(bodies(hook)[1]?.title), /^STILL runs failing: p1\/customers$/);

    await router.clear(c, at(130));
    assert.deepEqual(bodies(hook).map((b) => b.status), ['started', 'ongoing', 'ongoing', 'ended']);
    // Flapping: a freshness breach that ends and starts again every minute.
    const f = { kind: 'freshness_breach' as const, partner: 'p1', stream: 'transactions', detail: 'lag 6 min' };
    hook.requests.length = 0;
    await router.raise(f, at(200));
    await router.clear(f, at(201));
    await router.raise(f, at(202));
    await router.clear(f, at(203));
    await router.raise(f, at(204));
    await router.tick(at(210));
    assert.deepEqual(bodies(hook).map((b) => b.status), ['started', 'ended'], 'the starts within 15 minutes of the last one are held back');
    await router.tick(at(219));
    assert.deepEqual(bodies(hook).map((b) => b.status), ['started', 'ended', 'started'], 'sent once it has held 15 minutes');
    assert.match(String(bodies(hook)[2]?.detail), /started 2 more time\(s\) since the last message: flapping/);
    router.close();
  });

  it('rules route by kind and by partner; a kind no rule names goes nowhere', async () => {
    const router = routerOf(configOf(yaml(`rules:
  - when: run_failed
    partners: [casino-x]
    channels: [team-slack]
  - when: [freshness_breach, store_outage]
    channels: ops-hook`), env));
    const at = new Date('2026-11-28T10:00:00Z');
    await router.raise({ kind: 'run_failed', partner: 'casino-y', stream: 'customers', detail: 'x' }, at);
    await router.raise({ kind: 'run_failed', partner: 'casino-x', stream: 'customers', detail: 'x' }, at);
    await router.raise({ kind: 'freshness_breach', partner: 'casino-y', stream: 'customers', detail: 'x' }, at);
    await router.raise({ kind: 'store_outage', partner: '-', stream: '-', detail: 'the store does not answer' }, at);
    await router.raise({ kind: 'postbacks_dead', partner: 'casino-x', stream: '-', detail: 'x' }, at);
    router.close();
    assert.deepEqual(bodies(slack).map((b) => String(b.text).split(': ').slice(0, 2).join(': ')), ['partner-sync ALERT runs failing: casino-x/customers']);
    assert.deepEqual(bodies(hook).map((b) => `${String(b.kind)} ${String(b.partner)}`), ['freshness_breach casino-y', 'store_outage -']);
    assert.equal(bodies(hook)[1]?.title, 'ALERT store not answering');
    assert.equal(smtp.mails.length, 0);
  });

  it('a store outage starts one alert and its end another', async () => {
    const router = routerOf(configOf(yaml('rules: [{ when: store_outage, channels: ops-hook }]'), env));
    const timers = new FakeTimers('2026-11-28T10:00:00Z');
    let down = true;
    const outage = new StoreOutage({
      timers, logger: silentLogger(), initialMs: 1_000, maxMs: 1_000, alerter: router,
      ping: async () => { if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432'); },
      recovered: () => undefined, track: () => undefined,
    });
    const job = { key: 'p1/customers', partner: 'p1', stream: 'customers' } as Parameters<StoreOutage['failed']>[0];
    const slot = { at: timers.now().getTime(), scheduledFor: timers.now(), reason: 'schedule' } as unknown as Parameters<StoreOutage['failed']>[1];
    outage.failed(job, slot, new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    outage.failed(job, slot, new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    await hook.waitFor(1);
    await timers.advance(3_000, () => new Promise((r) => setTimeout(r, 20)));
    down = false;
    await timers.advance(2_000, () => new Promise((r) => setTimeout(r, 20)));
    await hook.waitFor(2);
    outage.stop();
    router.close();
    assert.deepEqual(bodies(hook).map((b) => `${String(b.event)} ${String(b.status)}`), ['store_outage started', 'store_outage_ended ended']);
    assert.match(String(bodies(hook)[0]?.detail), /the store does not answer \(connect ECONNREFUSED/);
  });

  it('config/alerts.yaml: every error names the file, the path and the reason; a channel whose variable is unset fails `check` and the worker start', async () => {
    const bad = parseAlertConfig(parseYaml(`
channels:
  a: { type: webhook, url_env: MISSING_HOOK_URL }
  b: { type: slack, url_env: lower_case }
  c: { type: email, smtp_url_env: OPS_HOOK_URL, from: nobody, to: [] }
  d: { type: pager, url_env: X }
rules:
  - when: [run_failed, nonsense]
    channels: [a]
  - when: all
    channels: [zzz]
thresholds: { run_failures: 0 }
repeat_minutes: -5
`), 'config/alerts.yaml', { OPS_HOOK_URL: 'http://alerts.example.com/x' });
    assert.deepEqual(bad.errors, [
      'config/alerts.yaml: channels.a.url_env: MISSING_HOOK_URL is not set (nor a readable file named by MISSING_HOOK_URL_FILE)',
      'config/alerts.yaml: channels.b.url_env: the name of the environment variable holding the URL (it carries a secret: never in this file), got "lower_case"',
      'config/alerts.yaml: channels.c.smtp_url_env: OPS_HOOK_URL must be smtp://host:port (STARTTLS required except to this machine) or smtps://host:465',
      'config/alerts.yaml: channels.d.type: webhook (generic JSON), slack (a Slack-compatible incoming webhook) or email (SMTP), got "pager"',
      'config/alerts.yaml: rules[0].when: unknown kind "nonsense"; kinds: run_failed, run_held, postbacks_dead, unevaluated, freshness_breach, reconcile_difference, fx_rate_missing, fx_feed_failed, store_outage, deletes_held',
      'config/alerts.yaml: rules[1].channels: no channel named "zzz" under channels',
      'config/alerts.yaml: thresholds.run_failures: a whole number 1..100, got 0',
      'config/alerts.yaml: repeat_minutes: minutes, 0 or more, got -5',
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'alerts-cli-'));
    try {
      writeFileSync(join(dir, 'alerts.yaml'), yaml());
      const store = `sqlite:${join(dir, 'store.sqlite')}`;
      const check = await runCli(['--config', dir, '--store', store, 'check'], { env: { OPS_HOOK_URL: env.OPS_HOOK_URL as string } });
      assert.equal(check.code, 2);
      assert.match(check.stdout, new RegExp(`FAIL ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/alerts.yaml: channels.team-slack.url_env: TEAM_SLACK_URL is not set`));
      const worker = await runCli(['--config', dir, '--store', store, 'worker'], { env: { OPS_HOOK_URL: env.OPS_HOOK_URL as string } });
      assert.equal(worker.code, 2);
      assert.match(worker.stderr, /channels\.oncall-mail\.smtp_url_env: ONCALL_SMTP_URL is not set/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('partner-sync alerts test CHANNEL: delivered (exit 0) through each channel; a channel that does not answer exits 1 with the reason and not its address; an unknown one 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alerts-cli-'));
    try {
      writeFileSync(join(dir, 'alerts.yaml'), yaml());
      const cli = (args: string[], more: NodeJS.ProcessEnv = {}) => runCli(['--config', dir, ...args], { env: { ...env, ...more } as Record<string, string> });
      for (const channel of ['ops-hook', 'team-slack', 'oncall-mail']) {
        const r = await cli(['alerts', 'test', channel, '--json']);
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual(JSON.parse(r.stdout), { channel, type: channel === 'ops-hook' ? 'webhook' : channel === 'team-slack' ? 'slack' : 'email', delivered: true, at: (JSON.parse(r.stdout) as { at: string }).at });
      }
      assert.equal(bodies(hook)[0]?.status, 'test');
      assert.match(String(bodies(slack)[0]?.text), /^partner-sync TEST /);
      assert.equal(smtp.mails[0]?.subject, '[partner-sync] TEST partner-sync alerts: oncall-mail');

      const closed = await startReceiver();
      const deadUrl = `${closed.url}/hook?token=deadtoken5544`;
      await closed.close();
      const dead = await cli(['alerts', 'test', 'ops-hook'], { OPS_HOOK_URL: deadUrl });
      assert.equal(dead.code, 1);
      assert.match(dead.stderr, /^partner-sync: alerts test: ops-hook \(webhook\) failed: cannot reach it: ECONNREFUSED/);
      assert.ok(!dead.stderr.includes('deadtoken5544') && !dead.stderr.includes(closed.url));
      hook.answer = () => ({ status: 500 });
      const failing = await cli(['alerts', 'test', 'ops-hook']);
      assert.equal(failing.code, 1);
      assert.match(failing.stderr, /failed: answered 500/);
      const unknown = await cli(['alerts', 'test', 'pager']);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /no channel named "pager"; channels: ops-hook, team-slack, oncall-mail/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

for (const backend of STORES) {
  describe(`the alert conditions the worker reads from the store (${backend.name})`, function () {
    this.timeout(90_000);
    let t: TestStore;
    let hook: Receiver;
    const clock = fixedClock('2026-11-28T19:00:00.000Z');
    beforeEach(async () => {
      clock.set('2026-11-28T19:00:00.000Z');
      t = await backend.create(clock);
      hook = await startReceiver();
    });
    afterEach(async () => {
      await hook.close();
      await t.drop();
    });

    it('each condition made for real starts at the monitor check, and ends when fixed as a user would', async () => {
      const { store } = t;
      const loader = loaderWithEveryJob(store, { plans: PLANS });
      const config = configOf(yaml('rules: [{ when: all, channels: ops-hook }]'), { OPS_HOOK_URL: `${hook.url}/a`, TEAM_SLACK_URL: `${hook.url}/s`, ONCALL_SMTP_URL: 'smtp://127.0.0.1:9' });
      const router = new AlertRouter({ config, logger: silentLogger(), redact: createRedactor([SECRET]) });
      const timers = new FakeTimers(clock().toISOString());
      const streams = [{ partner: 'casino', stream: 'transactions' }, { partner: 'casino', stream: 'customers' }];
      const monitor = new FreshnessMonitor({
        timers, logger: silentLogger(), locks: localLocks(), alerter: router,
        streams: () => [], readStates: async () => new Map(),
        conditions: (now) => storeConditions(store.knex, { streams, thresholds: config.thresholds, now, redact: createRedactor([SECRET]) }),
      });

      // run_failed and run_held: three failed runs of casino/transactions, the latest stopped by the reject-rate guard, its error quoting the partner's key.
      const errors = [`GET https://api.partner.test/v1/transactions?api_key=${SECRET} answered 503`, 'answered 503', `transactions 2026-11-28: 40 of 50 records rejected (80%), more than max_reject_ratio 0.5: the window is stopped (read from https://api.partner.test/v1/transactions?api_key=${SECRET}&page=2, key ${SECRET})`];
      for (const [i, error] of errors.entries()) {
        const id = await startRun(store.knex, { partner: 'casino', stream: 'transactions', kind: 'run' }, `2026-11-28T1${i}:00:00.000Z`);
        await finishRun(store.knex, id, { status: 'failed', counts: emptyCounts(), error, durationMs: 10 }, `2026-11-28T1${i}:00:05.000Z`);
      }
      // fx_rate_missing: an 18 GBP first deposit of 2026-11-27 without amount_usd; its CPA waits for the GBP rate (due by 18:00 UTC).
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId: 'c', records: raw([customer('c1', { signup_date: '2026-11-27T09:00:00Z' }), customer('c2', { signup_date: '2026-11-27T09:00:00Z', affiliate_id: 'aff-2' })]) });
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'transactions', runId: 't', records: raw([deposit('d1', 'c1', { currency: 'GBP', amount_currency: 18, transaction_date: '2026-11-27T10:00:00Z' })]) });
      // postbacks_dead: a registration event to aff-2's tracker whose retries are spent.
      const { postback } = await addPostback(store, { affiliate: 'aff-2', events: 'registration', url: 'http://127.0.0.1:9/pb', allowPrivate: true }, 'postback-secret-key-0123456789');
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId: 'c3', records: raw([customer('c3', { affiliate_id: 'aff-2' })]) });
      await store.knex('postback_events').where('postback_id', postback.id).update({ state: 'dead', attempts: 12, last_attempt_at: '2026-11-28T18:00:00.000Z', last_error: 'ECONNREFUSED' });
      // A removed postback's unsent events are dead by the removal: no alert of theirs.
      const { postback: gone } = await addPostback(store, { affiliate: 'aff-2', events: 'registration', url: 'http://127.0.0.1:9/old', allowPrivate: true }, 'postback-secret-key-0123456789');
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId: 'c4', records: raw([customer('c4', { affiliate_id: 'aff-2' })]) });
      await removePostback(store, gone.id);
      // unevaluated: a committed customer whose commission evaluation a crash left pending 40 minutes ago.
      await store.knex('commission_pending').insert({ partner_id: 'casino', variant: 'igaming', kind: 'customer', value: 'c2', created_at: '2026-11-28T18:20:00.000Z' });
      // deletes_held: 30 customer deletes the mass-delete guard held.
      const holdId = await store.transaction((trx) => holdDeletes(trx, { partner: 'casino', variant: 'igaming', entity: 'customers', learnedVia: 'deleted_list', scope: 'run-x', runId: 'run-x', reason: '30 of 40 customers (75%), more than max_share 0.05', ids: Array.from({ length: 30 }, (_, i) => `gone-${i}`), now: '2026-11-28T18:30:00.000Z' }));

      // Started: within the freshness grace of its first 5 minutes, which holds back freshness only.
      monitor.start();
      await monitor.check();
      const started = (hook.requests.map((r) => JSON.parse(r.body)) as AlertMessage[]).filter((m) => m.status === 'started');
      assert.deepEqual(started.map((m) => `${m.kind} ${m.partner}/${m.stream}`).sort(), [
        'deletes_held casino/customers',
        'fx_rate_missing casino/-',
        'postbacks_dead casino/-',
        'run_failed casino/transactions',
        'run_held casino/transactions',
        'unevaluated casino/-',
      ]);
      const detail = (kind: string) => started.find((m) => m.kind === kind)?.detail ?? '';
      assert.match(detail('run_failed'), /^the last 3 run\(s\) failed, the latest at 2026-11-28T12:00:05\.000000Z: transactions 2026-11-28: 40 of 50 records rejected/);
      assert.match(detail('fx_rate_missing'), /^1 commission entry held waiting for 1 FX rate\(s\) past 18:00 UTC of their day: GBP 2026-11-27$/);
      assert.match(detail('postbacks_dead'), /^1 postback event\(s\) dead/);
      assert.match(detail('unevaluated'), /^loaded but not evaluated for 40 min \(more than 30\): 0 customer\(s\) for the fraud rules, 1 commission scope entries/);
      assert.match(detail('deletes_held'), new RegExp(`^30 customers delete\\(s\\) held in hold\\(s\\) ${holdId}:`));
      assert.match(detail('run_held'), /read from https:\/\/api\.partner\.test\/v1\/transactions\?… key \*\*\*\)$/);
      assert.ok(!hook.requests.some((r) => r.body.includes(SECRET)));
      await monitor.check();
      assert.equal(hook.requests.length, 6, 'a second check with nothing changed sends nothing');

      // The fixes: a run that succeeds, the dead events replayed, the pending evaluation resumed, the GBP rate imported, the hold decided.
      const ok = await startRun(store.knex, { partner: 'casino', stream: 'transactions', kind: 'run' }, '2026-11-28T19:01:00.000Z');
      await finishRun(store.knex, ok, { status: 'succeeded', counts: emptyCounts(), durationMs: 10 }, '2026-11-28T19:01:05.000Z');
      assert.equal(await replay(store, { dead: true }), 1);
      await resumeJobs(store, { plans: PLANS, logger: silentLogger() });
      await importRates(store, PLANS, [{ currency: 'GBP', date: '2026-11-27', rate: money('1.25') }], 'test', silentLogger());
      await store.transaction((trx) => decideHold(trx, holdId, { state: 'discarded', by: 'test', now: '2026-11-28T19:02:00.000Z' }));
      await monitor.check();
      const ended = (hook.requests.slice(6).map((r) => JSON.parse(r.body)) as AlertMessage[]);
      assert.deepEqual(ended.map((m) => `${m.status} ${m.kind}`).sort(), ['ended deletes_held', 'ended fx_rate_missing', 'ended postbacks_dead', 'ended run_failed', 'ended run_held', 'ended unevaluated']);
      // The CPA the rate released: 18 GBP x 1.25 = 22.50 USD, a first deposit of at least 20.
      const cpa = (await store.knex('commission_ledger').where('line_key', 'cpa_ftd|cpa|casino|c1').select('amount_usd')) as { amount_usd: unknown }[];
      assert.equal(cpa.length, 1);
      await monitor.stop();
      router.close();
    });
  });
}
