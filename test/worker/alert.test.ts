/** The alert webhook: a breach and its recovery POSTed once each, by the one reporting worker. */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookAlerter, webhookUrlFromEnv, type AlertEvent } from '../../src/worker/alert.js';
import { FreshnessMonitor, type StreamState } from '../../src/worker/freshness-monitor.js';
import { localLocks } from '../../src/store/stream-locks.js';
import { mergeDefinitions } from '../../src/worker/reload.js';
import { loadDefinitions } from '../../src/config/load-definitions.js';
import { packageRoot } from '../../src/paths.js';
import { FakeTimers } from './support/fake-timers.js';
import { captureLogger } from './support/log-capture.js';
import { takeUnalerted } from '../../src/store/delete-holds.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { startReceiver } from '../support/receiver.js';
import { customer, raw } from '../support/records.js';
import { fixedClock, STORES } from '../support/stores.js';

describe('freshness alert webhook', () => {
  it('POSTs the breach and the recovery as JSON; only the worker holding the monitor lock reports', async () => {
    const received: AlertEvent[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push(JSON.parse(body) as AlertEvent);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/secret-token-123`;
    try {
      assert.equal(webhookUrlFromEnv({ ALERT_WEBHOOK_URL: url }), url);
      assert.throws(() => webhookUrlFromEnv({ ALERT_WEBHOOK_URL: 'http://alerts.example.com/x' }), /must be https/);
      // Plain http to any loopback address, as partner URLs allow: 127.0.0.0/8 and ::1.
      for (const local of ['http://127.0.0.2:9/hook', 'http://[::1]:9/hook', 'http://localhost:9/hook']) assert.equal(webhookUrlFromEnv({ ALERT_WEBHOOK_URL: local }), local);
      assert.throws(() => webhookUrlFromEnv({ ALERT_WEBHOOK_URL: 'http://127.0.0.1.example.com/x' }), /must be https/);
      const timers = new FakeTimers('2026-11-22T10:00:00Z');
      const states = new Map<string, StreamState>([['casino/customers', { watermark: '2026-11-22T09:59:00.000Z' }]]);
      const locks = localLocks();
      const { logger, lines } = captureLogger();
      const make = () => new FreshnessMonitor({
        timers, logger, locks, graceMs: 0, alerter: webhookAlerter(url, { logger }),
        streams: () => [{ partner: 'casino', stream: 'customers' }], readStates: async () => new Map(states),
      });
      const [a, b] = [make(), make()];
      a.start();
      b.start();
      await a.check();
      await b.check();
      await timers.advanceTo('2026-11-22T10:07:00Z', async () => { await a.settled(); await b.settled(); });
      states.set('casino/customers', { watermark: '2026-11-22T10:07:00.000Z' });
      await a.check();
      await b.check();
      await a.stop();
      await b.stop();
      assert.deepEqual(received.map((e) => [e.event, e.partner, e.stream, e.state]), [
        ['freshness_breach', 'casino', 'customers', 'behind'],
        ['freshness_recovered', 'casino', 'customers', 'ok'],
      ]);
      assert.equal(received[0]?.at, '2026-11-22T10:04:30.000Z');
      assert.equal(lines.filter((l) => l.event === 'freshness_breach').length, 1);
    } finally {
      server.close();
    }
  });

  it('alerts on the streams of a definition file that cannot load (stopped: file, path, reason) unless a kept definition still pulls them', async () => {
    const received: AlertEvent[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push(JSON.parse(body) as AlertEvent);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(join(tmpdir(), 'partner-sync-alert-invalid-'));
    try {
      mkdirSync(join(dir, 'partners'));
      const file = join(dir, 'partners', 'sandbox-casino.yaml');
      copyFileSync(join(packageRoot(), 'config', 'partners', 'sandbox-casino.yaml'), file);
      const line = readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes('client_secret: ${SANDBOX_CLIENT_SECRET}')) + 1;
      const valid = await loadDefinitions(join(dir, 'partners'), { SANDBOX_CLIENT_SECRET: 'sandbox-secret' });
      assert.equal(valid.definitions.length, 1);
      // The worker started without the variable: the file exists, nothing of it is pulled.
      const broken = await loadDefinitions(join(dir, 'partners'), {});
      assert.deepEqual(broken.definitions, []);
      assert.deepEqual(broken.invalid.map((i) => [i.partner, i.streams]), [['sandbox-casino', ['customers', 'transactions', 'activity']]]);
      // A reload that breaks the file keeps the running definition: its streams are pulled, not stopped.
      assert.deepEqual(mergeDefinitions(valid.definitions, broken).invalid, []);
      assert.deepEqual(mergeDefinitions([], broken).invalid.map((i) => i.partner), ['sandbox-casino']);

      const timers = new FakeTimers('2026-11-22T10:00:00Z');
      const fresh = { watermark: '2026-11-22T09:59:00.000Z' };
      const states = new Map<string, StreamState>([['sandbox-casino/customers', fresh], ['sandbox-casino/transactions', fresh], ['sandbox-casino/activity', { last_day: '2026-11-21' }], ['other/customers', fresh]]);
      const { logger, lines } = captureLogger();
      let invalid = broken.invalid;
      let configured: { partner: string; stream: 'customers' | 'transactions' | 'activity' }[] = [{ partner: 'other', stream: 'customers' }];
      const monitor = new FreshnessMonitor({
        timers, logger, locks: localLocks(), graceMs: 0, alerter: webhookAlerter(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, { logger }),
        streams: () => configured, invalid: () => invalid, readStates: async () => new Map(states),
      });
      monitor.start();
      const assessed = await monitor.check();
      const why = `stopped: definition invalid, not pulled: ${file}: source.auth.client_secret (line ${line}): environment variable SANDBOX_CLIENT_SECRET is not set`;
      assert.deepEqual(assessed.map((a) => [a.partner, a.stream, a.freshness.state, a.breach]), [
        ['other', 'customers', 'ok', false],
        ['sandbox-casino', 'customers', 'stopped', true], ['sandbox-casino', 'transactions', 'stopped', true], ['sandbox-casino', 'activity', 'stopped', true],
      ]);
      assert.deepEqual(received.map((e) => [e.event, e.partner, e.stream, e.state, e.detail]), ['customers', 'transactions', 'activity'].map((s) => ['freshness_breach', 'sandbox-casino', s, 'stopped', why]));
      assert.equal(lines.filter((l) => l.event === 'freshness_breach' && l.level === 'error').length, 3);
      // The file fixed (a reload with the variable set): the streams recover.
      invalid = [];
      configured = [...configured, ...(['customers', 'transactions', 'activity'] as const).map((stream) => ({ partner: 'sandbox-casino', stream }))];
      await monitor.check();
      await monitor.stop();
      assert.deepEqual(received.slice(3).map((e) => [e.event, e.stream, e.state]), [['freshness_recovered', 'customers', 'ok'], ['freshness_recovered', 'transactions', 'ok'], ['freshness_recovered', 'activity', 'ok']]);
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('held deletes alert', () => {
  for (const backend of STORES) {
    it(`POSTs one deletes_held alert per hold of the mass-delete guard, once, naming what to run (${backend.name})`, async () => {
      const t = await backend.create(fixedClock('2026-11-22T10:00:00.000Z'));
      const receiver = await startReceiver();
      try {
        const loader = loaderWithEveryJob(t.store);
        await loader.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId: 'r1', records: raw(Array.from({ length: 30 }, (_, i) => customer(`c${i}`))) });
        const held = await loader.remove({ partner: 'casino', variant: 'igaming', entity: 'customers', ids: Array.from({ length: 25 }, (_, i) => `c${i}`), learnedVia: 'soft_delete', runId: 'run-1' });
        const timers = new FakeTimers('2026-11-22T10:00:00Z');
        const { logger, lines } = captureLogger();
        const monitor = new FreshnessMonitor({
          timers, logger, locks: localLocks(), graceMs: 0, alerter: webhookAlerter(`${receiver.url}/hook`, { logger }),
          streams: () => [], readStates: async () => new Map(), newDeleteHolds: () => takeUnalerted(t.store.knex, t.store.now()),
        });
        await monitor.check();
        await monitor.check();
        await monitor.stop();
        assert.equal(receiver.requests.length, 1, 'one alert, not one per check');
        const event = JSON.parse(receiver.requests[0]!.body) as AlertEvent & { text: string };
        assert.deepEqual([event.event, event.partner, event.stream, event.state], ['deletes_held', 'casino', 'customers', 'held']);
        assert.match(event.detail, new RegExp(`hold ${held.held!.holdId}: 25 customers deletes \\(soft_delete\\) held, would delete 25 of the partner's 30 customers.*partner-sync deletes apply ${held.held!.holdId}`));
        assert.match(event.text, /DELETES HELD/);
        assert.equal(lines.filter((l) => l.event === 'deletes_held').length, 1);
      } finally {
        await receiver.close();
        await t.drop();
      }
    });
  }
});
