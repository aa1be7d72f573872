/**
 * The FX feed (jobs/fx-feed.ts, docs/commissions.md, The FX feed) against a real local HTTP
 * server serving the ECB's eurofxref-daily.xml and a JSON `{base, date, rates}` feed, on every
 * store: the rates as USD per unit (by hand: 1 GBP = 1.0550 / 0.8412 USD), a held CPA released by
 * the rate's arrival, a Friday publication read on Saturday carried to the weekend and Monday's
 * filling Sunday, a malformed answer and an HTTP error writing nothing, retries on 503; the
 * worker's daily read alerting once when the feed fails and once when it answers again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../support/cli.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchFxFeed, type FxFeed } from '../../jobs/fx-feed.js';
import { FeedError, parseEcb, parseJsonFeed, usdRates } from '../../src/commission/fx-feed.js';
import { money } from '../../src/kernel/money.js';
import { silentLogger } from '../../src/log.js';
import type { Loader } from '../../src/pipeline/load.js';
import { localLocks } from '../../src/store/stream-locks.js';
import { webhookAlerter, type AlertEvent } from '../../src/worker/alert.js';
import { startFxFeedSchedule } from '../../src/worker/fx-feed-schedule.js';
import { FakeTimers } from '../worker/support/fake-timers.js';
import { captureLogger } from '../worker/support/log-capture.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CPA_FROM_20, plansFrom, plansYaml } from '../support/plans.js';
import { customer, deposit, raw } from '../support/records.js';
import { startReceiver } from '../support/receiver.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

const PLANS = plansFrom(plansYaml(CPA_FROM_20));

const ecb = (day: string, rates: Record<string, string>) => `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<gesmes:Sender>
		<gesmes:name>European Central Bank</gesmes:name>
	</gesmes:Sender>
	<Cube>
		<Cube time='${day}'>
${Object.entries(rates).map(([c, r]) => `			<Cube currency='${c}' rate='${r}'/>`).join('\n')}
		</Cube>
	</Cube>
</gesmes:Envelope>
`;

/** A feed server whose answers the test sets: status and body per request. */
async function feedServer(): Promise<{ url: string; answer: { status: number; body: string }; requests: number; close(): Promise<void> }> {
  const state = { url: '', answer: { status: 200, body: '' }, requests: 0, close: async () => undefined as void };
  const server: Server = createServer((_req, res) => {
    state.requests += 1;
    res.writeHead(state.answer.status, { 'content-type': 'text/xml' }).end(state.answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stats/eurofxref/eurofxref-daily.xml`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}

describe('FX feed formats', () => {
  it('reads the ECB daily XML and a JSON feed as USD per unit; refuses what is cut short or has no USD', () => {
    const p = parseEcb(ecb('2026-11-27', { USD: '1.0550', JPY: '158.32', GBP: '0.8412' }));
    assert.equal(p.date, '2026-11-27');
    // By hand: 1 EUR = 1.0550 USD; 1 GBP = 1.0550 / 0.8412 = 1.25416072277... USD; 1 JPY = 1.0550 / 158.32 = 0.006663719050025... USD.
    assert.deepEqual(usdRates(p).map((r) => [r.currency, r.rate.toFixed()]), [['EUR', '1.055'], ['GBP', '1.25416072278'], ['JPY', '0.00666371905003']]);
    assert.deepEqual(usdRates(parseJsonFeed('{"base":"USD","date":"2026-11-27","rates":{"EUR":0.947867,"SEK":10.5}}')).map((r) => [r.currency, r.rate.toFixed()]), [['EUR', '1.05500033233'], ['SEK', '0.0952380952381']]);
    assert.throws(() => parseEcb(ecb('2026-11-27', { USD: '1.0550' }).slice(0, 300)), FeedError);
    assert.throws(() => usdRates(parseEcb(ecb('2026-11-27', { GBP: '0.8412' }))), /hold no USD rate/);
    assert.throws(() => parseJsonFeed('{"base":"EUR","date":"27/11/2026","rates":{"USD":1.05}}'), /no `date`/);
    assert.throws(() => parseJsonFeed('{"base":"EUR","date":"2026-11-27","rates":{"USD":-1}}'), /not a positive number/);
  });
});

for (const backend of STORES) {
  describe(`the FX feed (${backend.name})`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let loader: Loader;
    let server: Awaited<ReturnType<typeof feedServer>>;
    const clock = fixedClock('2026-11-28T17:00:00.000Z');
    beforeEach(async () => {
      clock.set('2026-11-28T17:00:00.000Z');
      t = await backend.create(clock);
      loader = loaderWithEveryJob(t.store, { plans: PLANS });
      server = await feedServer();
      // A first deposit of 18 GBP on Friday 2026-11-27 without amount_usd: its CPA (from 20 USD) waits for the GBP rate.
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId: 'c', records: raw([customer('c1', { signup_date: '2026-11-27T09:00:00Z' })]) });
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'transactions', runId: 't', records: raw([deposit('d1', 'c1', { currency: 'GBP', amount_currency: 18, transaction_date: '2026-11-27T10:00:00Z' })]) });
    });
    afterEach(async () => {
      await server.close();
      await t.drop();
    });
    const feed = (extra: Partial<FxFeed> = {}): FxFeed => ({ format: 'ecb', url: server.url, retries: 0, retryDelayMs: 0, ...extra });
    const cpa = async () => ((await t.store.knex('commission_ledger').where('line_key', 'cpa_ftd|cpa|casino|c1').select('amount_usd')) as { amount_usd: unknown }[]).map((l) => money(String(l.amount_usd)).toFixed(2));
    const held = async () => Number(((await t.store.knex('commission_holds').count({ n: '*' }).first()) as { n: unknown }).n);
    const rates = async () => ((await t.store.knex('fx_rates').orderBy(['date', 'currency']).select('date', 'currency', 'rate', 'source')) as { date: unknown; currency: string; rate: unknown; source: string }[])
      .map((r) => [String(r.date instanceof Date ? r.date.toISOString() : r.date).slice(0, 10), r.currency, money(String(r.rate)).toFixed(), r.source]);

    it("Friday's rates read on Saturday release the held CPA and carry to Saturday; Monday's fill Sunday", async () => {
      assert.equal(await held(), 1);
      assert.deepEqual(await cpa(), []);
      server.answer = { status: 200, body: ecb('2026-11-27', { USD: '1.0550', GBP: '0.8412' }) };
      const r = await fetchFxFeed(t.store, PLANS, feed(), silentLogger());
      // 18 GBP x 1.25416072278 = 22.57 USD: past the 20 USD baseline, the CPA of 100 is booked.
      assert.deepEqual([r.publication, r.released, r.lines], ['2026-11-27', 1, 1]);
      assert.deepEqual(await cpa(), ['100.00']);
      assert.equal(await held(), 0);
      assert.deepEqual(await rates(), [
        ['2026-11-27', 'EUR', '1.055', 'feed:ecb:2026-11-27'], ['2026-11-27', 'GBP', '1.25416072278', 'feed:ecb:2026-11-27'],
        ['2026-11-28', 'EUR', '1.055', 'feed:ecb:2026-11-27 carried'], ['2026-11-28', 'GBP', '1.25416072278', 'feed:ecb:2026-11-27 carried'],
      ]);
      clock.set('2026-11-30T17:00:00.000Z');
      server.answer = { status: 200, body: ecb('2026-11-30', { USD: '1.0600', GBP: '0.8400' }) };
      const monday = await fetchFxFeed(t.store, PLANS, feed(), silentLogger());
      assert.deepEqual(monday.days.map((d) => [d.date, d.rates, d.carriedFrom ?? null]), [['2026-11-29', 2, '2026-11-27'], ['2026-11-30', 2, null]]);
      assert.deepEqual((await rates()).filter((x) => x[0] === '2026-11-29').map((x) => [x[1], x[2], x[3]]), [['EUR', '1.055', 'feed:ecb:2026-11-27 carried'], ['GBP', '1.25416072278', 'feed:ecb:2026-11-27 carried']]);
      assert.deepEqual(await cpa(), ['100.00'], 'nothing moves twice');
    });

    it('a malformed answer, an HTTP error and a feed dated after today write nothing; a 503 is retried', async () => {
      server.answer = { status: 200, body: ecb('2026-11-27', { USD: '1.0550', GBP: '0.8412' }).slice(0, 250) };
      await assert.rejects(fetchFxFeed(t.store, PLANS, feed(), silentLogger()), FeedError);
      server.answer = { status: 404, body: 'not found' };
      await assert.rejects(fetchFxFeed(t.store, PLANS, feed({ retries: 2 }), silentLogger()), /answered HTTP 404/);
      assert.equal(server.requests, 2, 'a 404 is not retried');
      server.answer = { status: 200, body: JSON.stringify({ base: 'EUR', date: '2026-11-29', rates: { USD: 1.05 } }) };
      await assert.rejects(fetchFxFeed(t.store, PLANS, feed({ format: 'json' }), silentLogger()), /dated 2026-11-29, after today \(2026-11-28 UTC\)/);
      assert.deepEqual(await rates(), []);
      assert.equal(await held(), 1);
      let calls = 0;
      const flaky: typeof fetch = async (input, init) => (++calls < 3 ? new Response('busy', { status: 503 }) : fetch(input, init));
      server.answer = { status: 200, body: JSON.stringify({ base: 'EUR', date: '2026-11-27', rates: { USD: 1.055, GBP: 0.8412 } }) };
      const r = await fetchFxFeed(t.store, PLANS, feed({ format: 'json', retries: 3 }), silentLogger(), { fetch: flaky, sleep: async () => undefined });
      assert.equal(r.attempts, 3);
      assert.deepEqual(await cpa(), ['100.00']);
    });

    it('partner-sync fx fetch: the rates and what they released; exit 1 when the feed fails, 2 with no feed configured', async () => {
      const config = mkdtempSync(join(tmpdir(), 'partner-sync-fx-'));
      try {
        writeFileSync(join(config, 'commissions.yaml'), plansYaml(CPA_FROM_20));
        const cli = (...args: string[]) => runCli(['--store', t.url, '--config', config, 'fx', 'fetch', ...args], { clock });
        const none = await cli();
        assert.equal(none.code, 2);
        assert.match(none.stderr, /fx fetch: no feed: give --url and --format, or write .*fx-feed\.yaml/);
        server.answer = { status: 200, body: ecb('2026-11-27', { USD: '1.0550', GBP: '0.8412' }) };
        writeFileSync(join(config, 'fx-feed.yaml'), `format: ecb\nurl: ${server.url}\nat: "16:30"\nretries: 0\n`);
        const ok = await cli('--json');
        assert.equal(ok.code, 0, ok.stderr);
        const body = JSON.parse(ok.stdout) as { publication: string; days: { date: string; rates: number; carried_from?: string }[]; commissions: { released: number } };
        assert.deepEqual([body.publication, body.days, body.commissions.released], ['2026-11-27', [{ date: '2026-11-27', rates: 2 }, { date: '2026-11-28', rates: 2, carried_from: '2026-11-27' }], 1]);
        assert.deepEqual(await cpa(), ['100.00']);
        server.answer = { status: 500, body: 'down' };
        const failed = await cli();
        assert.equal(failed.code, 1);
        assert.match(failed.stderr, /fx fetch: the feed could not be read after 1 attempt\(s\): the feed answered HTTP 500; no rate was written/);
        writeFileSync(join(config, 'fx-feed.yaml'), 'format: csv\nurl: http://127.0.0.1:9/x\n');
        const bad = await cli();
        assert.equal(bad.code, 2);
        assert.match(bad.stderr, /format: ecb .* or json/);
      } finally {
        rmSync(config, { recursive: true, force: true });
      }
    });

    it("the worker's daily read alerts once when the feed fails and once when it answers again, releasing the CPA then", async () => {
      const receiver = await startReceiver();
      const timers = new FakeTimers('2026-11-28T16:00:00Z');
      clock.set('2026-11-28T16:00:00.000Z');
      const { logger, lines } = captureLogger();
      server.answer = { status: 503, body: 'down' };
      const schedule = startFxFeedSchedule({
        store: t.store, timers, logger, locks: localLocks(), plans: () => PLANS, alerter: webhookAlerter(`${receiver.url}/hook`, { logger }),
        feed: { format: 'ecb', url: server.url, at: '16:30', retries: 1, retryDelayMs: 60_000 },
      });
      // Each timer's work (a real HTTP read) is given a moment; a retry's sleep is a timer of its own.
      const moment = () => new Promise<void>((resolve) => setTimeout(resolve, 300));
      const day = async (to: string) => {
        await timers.advanceTo(to, moment);
        await schedule.settled();
      };
      try {
        await day('2026-11-28T16:40:00Z');
        assert.equal(server.requests, 2, 'one retry a minute later');
        clock.set('2026-11-29T16:00:00.000Z');
        await day('2026-11-29T16:40:00Z');
        assert.equal(lines.filter((l) => l.event === 'fx_feed_failed').length, 2);
        server.answer = { status: 200, body: ecb('2026-11-27', { USD: '1.0550', GBP: '0.8412' }) };
        clock.set('2026-11-30T16:00:00.000Z');
        await day('2026-11-30T16:40:00Z');
      } finally {
        await schedule.stop();
        await receiver.close();
      }
      const events = receiver.requests.map((r) => JSON.parse(r.body) as AlertEvent);
      assert.deepEqual(events.map((e) => e.event), ['fx_feed_failed', 'fx_feed_recovered'], 'one message when it starts, one when it ends');
      assert.match(events[0]?.detail ?? '', /the FX feed \(ecb\) failed: the feed could not be read after 2 attempt\(s\): the feed answered HTTP 503; no rate was written/);
      assert.deepEqual(await cpa(), ['100.00']);
    });
  });
}
