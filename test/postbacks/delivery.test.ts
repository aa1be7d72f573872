/**
 * Delivery against a real local HTTP receiver, on both stores: signed requests that verify with
 * the secret shown once; GET macros URL-encoded; a 500, a timeout, then recovery; dead after the
 * retry window and replayable with the same event id; events of one customer in order while a
 * slow tracker delays no other; redirects not followed; SSRF refusals when the URL is added and
 * when it is sent.
 */
import assert from 'node:assert/strict';
import { replay, listEvents } from '../../src/postbacks/claims.js';
import { addPostback } from '../../src/postbacks/definitions.js';
import { backoffMs, DEFAULT_DELIVERY } from '../../src/postbacks/deliverer.js';
import { igCustomer, tx } from '../commission/harness.js';
import { startReceiver, verifies, type Receiver } from '../support/receiver.js';
import { STORES } from '../support/stores.js';
import { postbackHarness, SECRET_KEY, type PostbackHarness } from './harness.js';

for (const backend of STORES) {
  describe(`postback delivery on ${backend.name}`, () => {
    let h: PostbackHarness;
    let rx: Receiver;
    beforeEach(async () => {
      h = await postbackHarness(backend);
      rx = await startReceiver();
    });
    afterEach(async () => {
      await rx.close();
      await h.drop();
    });

    it('sends a signed GET with URL-encoded macros and an Idempotency-Key that verifies with the secret shown once', async () => {
      const { secret } = await h.define({ url: `${rx.url}/pb?e={event}&click={click_id}&amt={amount}&cur={currency}&id={event_id}`, events: 'ftd' });
      await h.load('customers', [igCustomer('c1', { click_id: 'a b&c=d/é' })]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50, { currency: 'EUR' })]);
      const d = h.deliverer();
      await d.drain();
      assert.equal(await d.metrics.delivered.get({ event: 'ftd' }), 1);
      assert.equal(await d.metrics.lag.get(), 0);
      assert.equal(rx.requests.length, 1);
      const req = rx.requests[0]!;
      const query = new URL(req.url, rx.url).searchParams;
      assert.equal(query.get('e'), 'ftd');
      assert.equal(query.get('click'), 'a b&c=d/é');
      assert.equal(Number(query.get('amt')), 50);
      assert.equal(query.get('cur'), 'EUR');
      const [logged] = await listEvents(h.t.store.knex);
      assert.equal(req.headers['idempotency-key'], logged!.event_id);
      assert.equal(query.get('id'), logged!.event_id);
      assert.equal(logged!.state, 'delivered');
      assert.equal(logged!.last_status, 200);
      assert.ok(verifies(secret, req), 'the signature verifies with the secret');
      assert.ok(!verifies(secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A'), req), 'and with no other secret');
      // A body or URL changed on the way does not verify.
      assert.ok(!verifies(secret, { ...req, url: req.url.replace('amt=50', 'amt=500') }));
    });

    it('sends a signed POST with a JSON body', async () => {
      const { secret } = await h.define({ url: `${rx.url}/hook`, method: 'POST', events: 'registration' });
      await h.load('customers', [igCustomer('c1', { click_id: 'k1', campaign_id: 'camp' })]);
      await h.deliverer().drain();
      const req = rx.requests[0]!;
      assert.equal(req.method, 'POST');
      assert.equal(req.headers['content-type'], 'application/json');
      const body = JSON.parse(req.body) as Record<string, string>;
      assert.deepEqual({ event: body.event, customer_id: body.customer_id, click_id: body.click_id, campaign_id: body.campaign_id, affiliate_id: body.affiliate_id },
        { event: 'registration', customer_id: 'c1', click_id: 'k1', campaign_id: 'camp', affiliate_id: 'aff-1' });
      assert.equal(body.event_id, req.headers['idempotency-key']);
      assert.ok(verifies(secret, req));
      assert.ok(!verifies(secret, { ...req, body: req.body.replace('c1', 'c2') }));
    });

    it('retries a 500 and a timeout with backoff, then delivers when the tracker recovers, in order per customer', async () => {
      await h.define({ url: `${rx.url}/pb?e={event}&t={transaction_id}`, events: 'deposit' });
      await h.load('customers', [igCustomer('c1')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50), tx('t2', 'c1', 'deposit', 60, { transaction_date: '2026-10-03T12:00:00Z' })]);
      let calls = 0;
      rx.answer = () => {
        calls += 1;
        if (calls === 1) return { status: 500 };
        if (calls === 2) return { status: 200, delayMs: 700 }; // past the 300 ms deadline
        return { status: 200 };
      };
      const d = h.deliverer({ timeoutMs: 300 });
      await d.drain(); // the first attempt: 500
      let events = await listEvents(h.t.store.knex);
      assert.deepEqual(events.map((e) => [e.kind, e.state, e.attempts, e.last_status]), [['deposit', 'pending', 0, null], ['deposit', 'retrying', 1, 500]]);
      assert.match(events[1]!.last_error ?? '', /^HTTP 500: tracker says no/);
      // Its retry is due after the backoff (50 ms base here): the clock moves on.
      h.clock.set('2026-11-22T10:00:01.000Z');
      await d.drain(); // timed out
      events = await listEvents(h.t.store.knex);
      assert.deepEqual(events.map((e) => [e.state, e.attempts]), [['pending', 0], ['retrying', 2]]);
      assert.equal(events[1]!.last_error, 'no answer within 300 ms');
      h.clock.set('2026-11-22T10:00:02.000Z');
      await d.drain();
      events = await listEvents(h.t.store.knex);
      assert.deepEqual(events.map((e) => [e.state, e.attempts]), [['delivered', 1], ['delivered', 3]]);
      // t1 arrived three times (same event id each time), and t2 only after t1 was delivered.
      await new Promise((r) => setTimeout(r, 800)); // the timed-out answer lands at the receiver
      const order = rx.requests.map((r) => new URL(r.url, rx.url).searchParams.get('t'));
      assert.deepEqual(order.sort(), ['t1', 't1', 't1', 't2']);
      const t2 = rx.requests.find((r) => r.url.includes('t=t2'))!;
      const lastT1 = Math.max(...rx.requests.filter((r) => r.url.includes('t=t1')).map((r) => r.at));
      assert.ok(t2.at >= lastT1 - 1, 't2 is sent only after t1 is settled');
      assert.equal(new Set(rx.requests.filter((r) => r.url.includes('t=t1')).map((r) => r.headers['idempotency-key'])).size, 1);
    });

    it('ends an event dead after the retry window, and replays it with the same event id', async () => {
      await h.define({ url: `${rx.url}/pb`, events: 'registration' });
      await h.load('customers', [igCustomer('c1')]);
      rx.answer = () => ({ status: 503 });
      const d = h.deliverer({ retryWindowMs: 60_000 });
      await d.drain();
      assert.equal(await d.metrics.lag.get(), 0, 'the lag gauge reads the outbox: nothing waited yet');
      h.clock.set('2026-11-22T10:00:30.000Z');
      await d.drain();
      h.clock.set('2026-11-22T10:01:00.000Z');
      await d.drain();
      let [e] = await listEvents(h.t.store.knex);
      assert.deepEqual([e!.state, e!.attempts, e!.last_status], ['dead', 3, 503]);
      assert.deepEqual([await d.metrics.failed.get({ event: 'registration' }), await d.metrics.dead.get({ event: 'registration' })], [3, 1]);
      h.clock.set('2026-11-22T11:00:00.000Z');
      await d.drain();
      assert.equal(rx.requests.length, 3, 'a dead event is not sent again by itself');
      rx.answer = () => ({ status: 204 });
      assert.equal(await replay(h.t.store, { dead: true }), 1);
      await d.drain();
      [e] = await listEvents(h.t.store.knex);
      assert.deepEqual([e!.state, e!.attempts, e!.last_status], ['delivered', 4, 204]);
      assert.equal(new Set(rx.requests.map((r) => r.headers['idempotency-key'])).size, 1);
    });

    it('does not follow a redirect, and a 4xx other than 408/429 is dead at once', async () => {
      await h.define({ url: `${rx.url}/pb?c={customer_id}`, events: 'registration' });
      await h.load('customers', [igCustomer('c1'), igCustomer('c2')]);
      rx.answer = (req) => (req.url.includes('c1') ? { status: 302, headers: { location: `${rx.url}/elsewhere` } } : { status: 404 });
      await h.deliverer().drain();
      const events = await listEvents(h.t.store.knex);
      assert.deepEqual(events.map((e) => [e.customer_id, e.state, e.last_status, e.last_error]), [
        ['c2', 'dead', 404, 'HTTP 404: tracker says no'],
        ['c1', 'dead', 302, `HTTP 302: redirect to ${rx.url}/elsewhere not followed`],
      ]);
      assert.equal(rx.requests.filter((r) => r.url.startsWith('/elsewhere')).length, 0);
    });

    it('a slow tracker delays no other: each postback has its own lane', async () => {
      const slow = await startReceiver();
      try {
        slow.answer = () => ({ status: 200, delayMs: 1500 });
        await h.define({ url: `${slow.url}/slow`, events: 'registration' });
        await h.define({ url: `${rx.url}/fast`, events: 'registration' });
        await h.load('customers', [igCustomer('c1'), igCustomer('c2'), igCustomer('c3')]);
        const d = h.deliverer({ timeoutMs: 5000 });
        const started = Date.now();
        d.start();
        await rx.waitFor(3, 5000);
        const fastDone = Date.now() - started;
        await slow.waitFor(3, 10_000);
        await d.stop();
        assert.ok(fastDone < 1500, `the fast tracker got its 3 events in ${fastDone} ms, not after the slow one`);
      } finally {
        await slow.close();
      }
    });

    it('keeps each postback to its --rate: 16 events at 10/s take at least 1.4 s, and no second sees more than 11', async () => {
      await h.define({ url: `${rx.url}/pb?c={customer_id}`, events: 'registration', ratePerSecond: 10 });
      await h.load('customers', Array.from({ length: 16 }, (_, i) => igCustomer(`r${String(i).padStart(2, '0')}`)));
      const d = h.deliverer({ batch: 50 });
      d.start();
      await rx.waitFor(16, 10_000);
      await d.stop();
      const at = rx.requests.map((r) => r.at).sort((a, b) => a - b);
      // One request may go at once (the bucket holds a tenth of a second's worth, at least one); each next one 100 ms later.
      assert.ok(at[15]! - at[0]! >= 1400, `16 requests spread over ${at[15]! - at[0]!} ms`);
      for (let i = 0; i < at.length; i++) assert.ok(at.filter((t) => t >= at[i]! && t < at[i]! + 1000).length <= 11, 'at most rate + burst requests in a second');
    });

    it('refuses private destinations when a URL is added and when it is sent, unless allowed', async () => {
      for (const url of ['http://127.0.0.1:9/x', 'http://localhost:9/x', 'http://10.1.2.3/x', 'http://169.254.169.254/latest/meta-data', 'http://[::1]:9/x', 'http://192.168.1.1/x', 'http://[::ffff:127.0.0.1]/x']) {
        await assert.rejects(addPostback(h.t.store, { affiliate: 'aff-1', events: 'ftd', url }, SECRET_KEY), /^PostbackDefinitionError: url: .* (private, loopback, link-local or reserved address); give --allow-private only for a tracker inside your own network$/, url);
      }
      await assert.rejects(addPostback(h.t.store, { affiliate: 'aff-1', events: 'ftd', url: 'ftp://example.com/x' }, SECRET_KEY), { message: 'url: must be http:// or https://, got ftp:' });
      await assert.rejects(addPostback(h.t.store, { affiliate: 'aff-1', events: 'ftd', url: 'https://example.com/x?e={email}' }, SECRET_KEY), { message: 'url: macro {email} is personal data: it is sent only with --include-personal' });
      await assert.rejects(addPostback(h.t.store, { affiliate: 'aff-1', events: 'ftd', url: 'https://example.com/x?e={nope}' }, SECRET_KEY), /^PostbackDefinitionError: url: unknown macro \{nope\}/);
      await assert.rejects(addPostback(h.t.store, { affiliate: 'aff-1', events: 'ftd,signup', url: 'https://example.com/x' }, SECRET_KEY), /^PostbackDefinitionError: events: unknown event "signup"/);
      // Allowed when added, then no longer (as a name that starts resolving to a private address): refused when sent, nothing sent.
      const { postback } = await h.define({ url: `http://localhost:${rx.port}/pb`, events: 'registration' });
      await h.t.store.knex('postbacks').where('id', postback.id).update({ allow_private: 0 });
      await h.load('customers', [igCustomer('c1')]);
      await h.deliverer().drain();
      const [e] = await listEvents(h.t.store.knex);
      assert.equal(e!.state, 'dead');
      assert.match(e!.last_error ?? '', /^refused destination localhost: .* is a private, loopback, link-local or reserved address \(the postback does not allow private destinations\)$/);
      assert.equal(rx.requests.length, 0);
    });
  });
}

describe('postback retry schedule', () => {
  it('backs off exponentially with jitter, capped, and keeps retrying for the whole 24-hour window', () => {
    const o = DEFAULT_DELIVERY;
    assert.equal(backoffMs(o, 1, () => 1), 10_000);
    assert.equal(backoffMs(o, 1, () => 0), 5_000);
    assert.equal(backoffMs(o, 4, () => 1), 80_000);
    assert.equal(backoffMs(o, 30, () => 1), 3_600_000);
    // Even with the shortest jitter every time, the attempts in 24 hours are bounded and the window is covered.
    let t = 0;
    let attempts = 0;
    while (t < o.retryWindowMs) t += backoffMs(o, ++attempts, () => 0);
    assert.ok(attempts >= 30 && attempts < 60, `${attempts} attempts in the window`);
  });
});
