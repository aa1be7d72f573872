/**
 * Delivering processes as users run them: `partner-sync serve` subprocesses with
 * POSTBACK_SECRET_KEY, against a real local receiver, on both stores. A process killed with
 * SIGKILL mid-delivery, then a new one: every event arrives, a duplicate only with the same event
 * id. Two processes on one store: every event arrives once. A delivering serve's /metrics and
 * log lines (the deliverer runs on a thread of its own on PostgreSQL) count and say what happened,
 * and with an OTLP endpoint its spans reach the collector when it stops.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { listEvents } from '../../src/postbacks/claims.js';
import { igCustomer } from '../commission/harness.js';
import { startReceiver, verifies, type Receiver } from '../support/receiver.js';
import { STORES } from '../support/stores.js';
import { otlpSpans } from '../support/traces.js';
import { postbackHarness, SECRET_KEY, type PostbackHarness } from './harness.js';

interface Served {
  child: ChildProcess;
  exited: Promise<number | null>;
  url: string;
  /** What the process has logged so far. */
  stderr: () => string;
}

const DELIVERY_ENV = {
  POSTBACK_SECRET_KEY: SECRET_KEY, POSTBACK_POLL_MS: '50', POSTBACK_TIMEOUT_MS: '1000', POSTBACK_BATCH: '2', POSTBACK_LEASE_MARGIN_MS: '500',
  POSTBACK_RETRY_BASE_MS: '100', POSTBACK_RETRY_MAX_MS: '200',
};

function serve(storeUrl: string, env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'partner-sync.js'), '--store', storeUrl, '--config', join(packageRoot(), 'config'), 'serve', '--port', '0'], {
    env: { ...process.env, LOG_FORMAT: 'json', LOG_LEVEL: 'warn', ...DELIVERY_ENV, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      const listening = /partner-sync serve: listening on (\S+)/.exec(stderr);
      if (listening) resolve({ child, exited, url: listening[1]!, stderr: () => stderr });
    });
    void exited.then((code) => reject(new Error(`serve exited ${code} before listening: ${stderr}`)));
  });
}

async function stopServe(s: Served): Promise<void> {
  if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
  await s.exited;
}

const customers = (n: number) => Array.from({ length: n }, (_, i) => igCustomer(`c${String(i + 1).padStart(3, '0')}`));

for (const backend of STORES) {
  describe(`postback delivering processes on ${backend.name}`, function () {
    this.timeout(90_000);
    let h: PostbackHarness;
    let rx: Receiver;
    const running: Served[] = [];
    beforeEach(async () => {
      h = await postbackHarness(backend);
      rx = await startReceiver();
    });
    afterEach(async () => {
      for (const s of running.splice(0)) await stopServe(s);
      await rx.close();
      await h.drop();
    });

    /** Every event of the store delivered, the receiver got each event id, and every duplicate carried the same event. */
    async function assertEveryEventArrived(n: number, secret: string): Promise<number> {
      const events = await listEvents(h.t.store.knex, { limit: 1000 });
      assert.equal(events.length, n);
      assert.deepEqual(events.filter((e) => e.state !== 'delivered').map((e) => [e.event_id, e.state, e.last_error]), []);
      const byId = new Map<string, Set<string>>();
      for (const r of rx.requests) {
        assert.ok(verifies(secret, r), 'every request is signed');
        const id = String(r.headers['idempotency-key']);
        const customer = new URL(r.url, rx.url).searchParams.get('c') ?? '';
        byId.set(id, (byId.get(id) ?? new Set()).add(customer));
      }
      assert.deepEqual([...byId.keys()].sort(), events.map((e) => e.event_id).sort(), 'every event id arrived');
      for (const e of events) assert.deepEqual([...byId.get(e.event_id)!], [e.customer_id], 'a duplicate is the same event');
      return rx.requests.length - byId.size;
    }

    it('SIGKILL of the delivering process mid-delivery, then a restart: every event arrives, duplicates only with the same event id', async () => {
      const { secret } = await h.define({ url: `${rx.url}/pb?c={customer_id}`, events: 'registration' });
      await h.load('customers', customers(20));
      rx.answer = () => ({ status: 200, delayMs: 150 });
      const first = await serve(h.t.url);
      running.push(first);
      await rx.waitFor(5, 30_000);
      first.child.kill('SIGKILL');
      await first.exited;
      const arrivedBefore = rx.requests.length;
      assert.ok(arrivedBefore < 20, `killed mid-delivery (${arrivedBefore} of 20 arrived)`);
      rx.answer = () => ({ status: 200 });
      running.push(await serve(h.t.url));
      // Leases of the killed process expire (a few seconds here), then everything is sent.
      const deadline = Date.now() + 45_000;
      while (Date.now() < deadline && (await listEvents(h.t.store.knex, { state: 'delivered', limit: 100 })).length < 20) await new Promise((r) => setTimeout(r, 200));
      await assertEveryEventArrived(20, secret);
    });

    it('two delivering processes on one store deliver every event once', async () => {
      const { secret } = await h.define({ url: `${rx.url}/a?c={customer_id}`, events: 'registration' });
      await h.define({ url: `${rx.url}/b?c={customer_id}`, events: 'registration', affiliate: 'aff-2' });
      await h.load('customers', [...customers(30), ...customers(30).map((c) => ({ ...c, customer_id: `b-${String(c.customer_id)}`, affiliate_id: 'aff-2' }))]);
      rx.answer = () => ({ status: 200, delayMs: 20 });
      running.push(await serve(h.t.url), await serve(h.t.url));
      await rx.waitFor(60, 60_000);
      await new Promise((r) => setTimeout(r, 500));
      const events = await listEvents(h.t.store.knex, { limit: 1000 });
      assert.equal(events.filter((e) => e.state === 'delivered').length, 60);
      const ids = rx.requests.map((r) => String(r.headers['idempotency-key']));
      assert.equal(ids.length, 60, 'no event delivered twice');
      assert.equal(new Set(ids).size, 60);
      for (const r of rx.requests.filter((x) => x.url.startsWith('/a'))) assert.ok(verifies(secret, r));
    });

    it('a delivering serve with an OTLP endpoint exports its postback.delivery spans when it stops (from the delivery thread on PostgreSQL)', async () => {
      const { postback } = await h.define({ url: `${rx.url}/pb?c={customer_id}&token=pb-token-77e1`, events: 'registration' });
      await h.load('customers', customers(3));
      const collector = await startReceiver();
      try {
        const s = await serve(h.t.url, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
        await rx.waitFor(3, 30_000);
        await stopServe(s);
        assert.equal(await s.exited, 0);
        const deliveries = collector.requests.flatMap((q) => otlpSpans(q.body)).filter((span) => span.name === 'postback.delivery');
        assert.deepEqual(deliveries.map((d) => [d.service, d.attributes['postback.id'], d.attributes['server.address'], d.attributes['http.response.status_code']]),
          Array.from({ length: 3 }, () => ['partner-sync', postback.id, '127.0.0.1', 200]));
        assert.ok(!collector.requests.some((q) => q.body.includes('pb-token-77e1')), 'the postback URL\'s token is in no span');
      } finally {
        await collector.close();
      }
    });

    it('a delivering serve counts deliveries and failed attempts on /metrics and logs each failed attempt', async () => {
      await h.define({ url: `${rx.url}/pb?c={customer_id}`, events: 'registration' });
      await h.load('customers', customers(6));
      // Each customer's first attempt fails (500), the retry is delivered.
      const tried = new Set<string>();
      rx.answer = (req) => {
        const c = new URL(req.url, rx.url).searchParams.get('c') ?? '';
        if (tried.has(c)) return { status: 200 };
        tried.add(c);
        return { status: 500 };
      };
      // The harness's store clock stands in the past: the retry window is counted from its events' time.
      const s = await serve(h.t.url, { POSTBACK_RETRY_WINDOW_MS: String(10 * 365 * 86_400_000) });
      running.push(s);
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && (await listEvents(h.t.store.knex, { state: 'delivered', limit: 100 })).length < 6) await new Promise((r) => setTimeout(r, 100));
      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      assert.match(metrics, /^partner_sync_postbacks_delivered_total\{event="registration"\} 6$/m);
      assert.match(metrics, /^partner_sync_postbacks_failed_attempts_total\{event="registration"\} 6$/m);
      assert.match(metrics, /^partner_sync_postbacks_delivery_seconds_count\{event="registration"\} 6$/m);
      const failures = s.stderr().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.event === 'postback_attempt' && l.level === 'warn');
      assert.equal(failures.length, 6);
      for (const f of failures) {
        assert.equal(f.status, 500);
        assert.equal(f.state, 'retrying');
        assert.match(String(f.message), /failed \(HTTP 500: tracker says no\); retry at /);
      }
    });
  });
}
