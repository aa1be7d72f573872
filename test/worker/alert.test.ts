/** The alert webhook: a breach and its recovery POSTed once each, by the one reporting worker. */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookAlerter, webhookUrlFromEnv, type AlertEvent } from '../../src/worker/alert.js';
import { FreshnessMonitor, type StreamState } from '../../src/worker/freshness-monitor.js';
import { localLocks } from '../../src/worker/locks.js';
import { FakeTimers } from './support/fake-timers.js';
import { captureLogger } from './support/log-capture.js';

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
});
