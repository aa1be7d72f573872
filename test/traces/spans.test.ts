/**
 * Traces (src/trace.ts, docs/worker.md#traces): the span tree of a pull of the sandbox partner
 * (`run` roots, `window` children, `batch` grandchildren whose records add up to the store's
 * rows), a failing run's ERROR, a push's `push` span and the `push.commit` linked to it, postback
 * deliveries with their HTTP status and no token of the URL in any span, on every store; with no
 * endpoint configured nothing is set up and nothing recorded; with one, spans reach its
 * /v1/traces, from a test and from a CLI command as it ends.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { runPartner } from '../../jobs/run-partner.js';
import type { PartnerDefinition, RestSource, RestStream } from '../../src/config/definition.js';
import { createRedactor } from '../../src/config/redact.js';
import { addDays, daysBetween } from '../../src/kernel/dates.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { entityTable } from '../../src/store/tables.js';
import { inSpan, setupTracing, tracesEndpoint } from '../../src/trace.js';
import type { Entity } from '../../src/types.js';
import { igCustomer } from '../commission/harness.js';
import { postbackHarness, type PostbackHarness } from '../postbacks/harness.js';
import { startApi, type StartedApi } from '../support/api.js';
import { runCli } from '../support/cli.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { customer } from '../support/records.js';
import { SANDBOX_SECRET, exampleDefinition } from '../support/sandbox.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';
import { otlpSpans, recordSpansEach } from '../support/traces.js';

const NOW = '2026-11-22T10:00:00.000Z';
const sum = (spans: readonly ReadableSpan[], key: string): number => spans.reduce((n, s) => n + Number(s.attributes[key] ?? 0), 0);

for (const backend of STORES) {
  describe(`traces of a pull on ${backend.name}`, function () {
    this.timeout(60_000);
    const traces = recordSpansEach();
    let t: TestStore;
    let sandbox: Sandbox;
    let def: PartnerDefinition;
    let cleanup: () => void;
    const clock = fixedClock(NOW);

    beforeEach(async () => {
      clock.set(NOW);
      t = await backend.create(clock);
      sandbox = await startSandbox({ port: 0, seed: 7, customers: 30, clock, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      ({ def, cleanup } = await exampleDefinition('igaming', sandbox.url));
      for (const entity of ['customers', 'transactions', 'activity'] as const) {
        const stream = def.streams[entity] as RestStream;
        stream.incremental.start = `${sandbox.data.from}T00:00:00Z`;
        stream.pagination.per_page = 20;
      }
    });
    afterEach(async () => {
      await sandbox.close();
      cleanup();
      await t.drop();
    });

    const run = (only?: Entity) => runPartner({ loader: loaderWithEveryJob(t.store), clock: t.store.clock, logger: silentLogger(), redact: createRedactor(def.secrets) },
      def, { kind: 'run', scheduledFor: clock() }, only);
    const rows = async (entity: Entity): Promise<number> => Number(((await t.store.knex(entityTable('igaming', entity).name).count({ n: '*' })) as { n: number }[])[0]?.n);

    it('a stream\'s run is one root `run` span, its windows are its children, and their batches\' records add up to the rows stored', async () => {
      const results = await run();
      assert.deepEqual(results.map((r) => [r.stream, r.status]), [['customers', 'succeeded'], ['transactions', 'succeeded'], ['activity', 'succeeded']]);
      const runs = traces.named('run');
      assert.equal(runs.length, 3);
      const days = daysBetween(`${sandbox.data.from}T00:00:00Z`.slice(0, 10), addDays(NOW.slice(0, 10), -1));
      for (const result of results) {
        const span = runs.find((s) => s.attributes['run.id'] === result.runId);
        assert.ok(span, `a run span for ${result.stream}`);
        assert.equal(span.parentSpanContext, undefined, 'a run is a trace of its own');
        assert.deepEqual(
          { partner: span.attributes.partner, stream: span.attributes.stream, kind: span.attributes['run.kind'], status: span.attributes['run.status'], loaded: span.attributes['records.loaded'] },
          { partner: def.partner, stream: result.stream, kind: 'run', status: 'succeeded', loaded: result.counts.loaded },
        );
        const windows = traces.childrenOf(span, 'window');
        assert.equal(windows.length, result.stream === 'activity' ? days.length : 1, `${result.stream}: windows`);
        if (result.stream === 'activity') assert.deepEqual(windows.map((w) => w.attributes['window.from']), days);
        else assert.deepEqual(windows.map((w) => [w.attributes['window.kind'], w.attributes['window.to']]), [['cursor', NOW]]);
        const batches = windows.flatMap((w) => traces.childrenOf(w, 'batch'));
        // Pages of 20: several batches a cursor window; a day without activity has none.
        assert.ok(result.stream === 'activity' ? batches.length > 0 : batches.length > 1, `${result.stream}: ${batches.length} batches`);
        assert.ok(batches.every((b) => b.attributes.stream === result.stream && b.attributes['run.id'] === result.runId));
        assert.equal(sum(batches, 'records.loaded'), await rows(result.stream), `${result.stream}: the batches' loaded records are the rows stored`);
        assert.equal(sum(windows, 'records.loaded'), result.counts.loaded);
      }
      // Every batch is some window's; the jobs evaluated after the first (bulk) runs say which job and partner.
      assert.ok(traces.named('batch').every((b) => traces.parentOf(b)?.name === 'window'));
      const evaluations = traces.named('job.evaluate');
      assert.ok(evaluations.length > 0 && evaluations.every((e) => e.attributes.partner === def.partner && typeof e.attributes['job.name'] === 'string'));
      assert.ok(traces.all().every((s) => s.status.code !== SpanStatusCode.ERROR));
      assert.ok(!traces.attributeTexts().some((text) => text.includes(SANDBOX_SECRET)), 'no secret in any span');
    });

    it('a failing run\'s span is ERROR with its exception recorded, as is the window it failed in', async () => {
      sandbox.faults.errorRate = 1;
      (def.source as RestSource).retries = { max: 0, min_delay_ms: 1, max_delay_ms: 1, max_retry_after_ms: 10 };
      const [result] = await run('customers');
      assert.equal(result?.status, 'failed');
      const [span, ...more] = traces.named('run');
      assert.ok(span && more.length === 0);
      assert.equal(span.attributes['run.status'], 'failed');
      // The run's error as `status` shows it, the URL in it without its query string.
      const message = result.error?.replace(/\?[^\s:]*/, '?…');
      assert.match(message ?? '', /^GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/igaming\/customers\?…: HTTP 503/);
      assert.deepEqual(span.status, { code: SpanStatusCode.ERROR, message });
      const exceptions = span.events.filter((e) => e.name === 'exception');
      assert.equal(exceptions.length, 1);
      assert.equal(exceptions[0]?.attributes?.['exception.message'], message);
      const [window] = traces.childrenOf(span, 'window');
      assert.ok(window);
      assert.equal(window.status.code, SpanStatusCode.ERROR);
      assert.ok(window.events.some((e) => e.name === 'exception'));
      assert.ok(!traces.attributeTexts().some((text) => text.includes('per_page=')), 'no query string in any span');
    });
  });

  describe(`traces of a push on ${backend.name}`, function () {
    this.timeout(30_000);
    const traces = recordSpansEach();
    let t: TestStore;
    let api: StartedApi;
    beforeEach(async () => {
      t = await backend.create();
      api = await startApi(t.store, { loader: loaderWithEveryJob(t.store) });
    });
    afterEach(async () => {
      await api.close();
      await t.drop();
    });

    it('a pushed request is a `push` span with its status; its commit a `push.commit` trace linked to it, holding the batch', async () => {
      const token = await api.token(await api.addClient('pusher', 'igaming'));
      const push = (body: unknown) => fetch(`${api.url}/api/v1/igaming/customers`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const ok = await push(customer('c1'));
      assert.equal(ok.status, 200);
      const answer = (await ok.json()) as { request_id: string };
      assert.equal((await push({ customer_id: 'c2' })).status, 422);
      // The evaluations behind the commit end with the server.
      await api.close();
      const pushes = traces.named('push');
      assert.deepEqual(pushes.map((s) => [s.attributes.partner, s.attributes.stream, s.attributes['push.bulk'], s.attributes['push.records'], s.attributes['http.response.status_code']]),
        [['pusher', 'customers', false, 1, 200], ['pusher', 'customers', false, 1, 422]]);
      assert.equal(pushes[0]?.attributes['push.request_id'], answer.request_id);
      const [commit, ...more] = traces.named('push.commit');
      assert.ok(commit && more.length === 0, 'the invalid request commits nothing');
      assert.equal(commit.parentSpanContext, undefined);
      assert.deepEqual(commit.links.map((l) => l.context.spanId), [pushes[0]?.spanContext().spanId]);
      assert.deepEqual(traces.childrenOf(commit, 'batch').map((b) => [b.attributes['batch.size'], b.attributes['records.loaded']]), [[1, 1]]);
      const behind = traces.named('job.evaluate');
      assert.ok(behind.length > 0 && behind.every((e) => e.attributes['run.policy'] === 'behind' && e.spanContext().traceId !== commit.spanContext().traceId));
    });
  });

  describe(`traces of postback deliveries on ${backend.name}`, function () {
    this.timeout(30_000);
    const traces = recordSpansEach();
    let h: PostbackHarness;
    let rx: Receiver;
    beforeEach(async () => {
      h = await postbackHarness(backend, NOW);
      rx = await startReceiver();
    });
    afterEach(async () => {
      await rx.close();
      await h.drop();
    });

    it('each delivery is a `postback.delivery` span with the HTTP status and the host; the URL\'s token is in no span', async () => {
      const TOKEN = 'tracker-token-5d1e9a77c3';
      const { postback } = await h.define({ url: `${rx.url}/pb?e={event}&token=${TOKEN}&c={customer_id}`, events: 'registration' });
      rx.answer = () => ({ status: 503 });
      await h.load('customers', [igCustomer('c1')]);
      await h.deliverer().drain();
      rx.answer = () => ({ status: 200 });
      h.clock.set('2026-11-22T11:00:00.000Z');
      await h.deliverer().drain();
      assert.equal(rx.requests.length, 2);
      assert.ok(rx.requests.every((r) => r.url.includes(TOKEN)), 'the tracker got the token');
      const deliveries = traces.named('postback.delivery');
      assert.deepEqual(deliveries.map((s) => [s.attributes['postback.id'], s.attributes['postback.event'], s.attributes['server.address'], s.attributes['http.response.status_code'], s.attributes['postback.delivered']]),
        [[postback.id, 'registration', '127.0.0.1', 503, false], [postback.id, 'registration', '127.0.0.1', 200, true]]);
      assert.deepEqual(deliveries.map((s) => s.status), [{ code: SpanStatusCode.ERROR, message: 'HTTP 503' }, { code: SpanStatusCode.UNSET }]);
      assert.ok(traces.named('batch').length > 0, 'the load was traced too');
      const texts = traces.attributeTexts();
      assert.ok(!texts.some((text) => text.includes(TOKEN) || text.includes('/pb')), `no URL in any span: ${texts.filter((x) => x.includes('pb')).join(', ')}`);
    });
  });

  describe(`traces of a command on ${backend.name}`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let rx: Receiver;
    let dir: string;
    beforeEach(async () => {
      t = await backend.create();
      rx = await startReceiver();
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-traces-'));
    });
    afterEach(async () => {
      await rx.close();
      await t.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('partner-sync import exports its spans over OTLP/HTTP as it ends, with the headers of OTEL_EXPORTER_OTLP_HEADERS, which it never prints', async () => {
      const file = join(dir, 'customers.ndjson');
      writeFileSync(file, ['c1', 'c2', 'c3'].map((id) => JSON.stringify(customer(id))).join('\n'));
      const header = 'collector-token-81c4b2';
      const r = await runCli(['import', 'p1', '--variant', 'igaming', '--entity', 'customers', '--json', file], {
        clock: fixedClock(NOW),
        env: { STORE_URL: t.url, OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${header}`, OTEL_SERVICE_NAME: 'partner-sync-test' },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(!`${r.stdout}${r.stderr}`.includes(header));
      assert.ok(rx.requests.length > 0 && rx.requests.every((q) => q.method === 'POST' && q.url === '/v1/traces' && q.headers.authorization === `Bearer ${header}`));
      const spans = rx.requests.flatMap((q) => otlpSpans(q.body));
      const [runSpan] = spans.filter((s) => s.name === 'run');
      assert.deepEqual(runSpan && [runSpan.service, runSpan.attributes.partner, runSpan.attributes.stream, runSpan.attributes['run.kind'], runSpan.attributes['records.loaded']], ['partner-sync-test', 'p1', 'customers', 'import', 3]);
      const batches = spans.filter((s) => s.name === 'batch');
      assert.ok(batches.length > 0 && batches.every((b) => b.parentSpanId === runSpan?.spanId));
    });
  });
}

describe('traces off, and set up from the environment', () => {
  it('without an OTLP endpoint nothing is set up, and spans are no-ops that record nothing', async () => {
    assert.equal(setupTracing({}), undefined);
    assert.equal(setupTracing({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' }), undefined);
    assert.equal(setupTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }), undefined);
    assert.equal(setupTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' }), undefined);
    const seen: boolean[] = [];
    const value = await inSpan('run', { partner: 'p' }, async (outer) => {
      seen.push(outer.isRecording());
      return inSpan('window', {}, async (inner) => {
        seen.push(inner.isRecording(), trace.getActiveSpan()?.isRecording() ?? false);
        return 42;
      });
    });
    assert.equal(value, 42);
    assert.deepEqual(seen, [false, false, false]);
    await assert.rejects(inSpan('batch', {}, async () => { throw new Error('boom'); }), /boom/);
  });

  it('the traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces; a bad one is named, its value not repeated', () => {
    assert.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }), 'http://127.0.0.1:4318/v1/traces');
    assert.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example/otlp/' }), 'https://collector.example/otlp/v1/traces');
    assert.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom' }), 'http://b:4318/custom');
    assert.throws(() => tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318?token=s3cr3t' }), (e: Error) => e.message === 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL');
  });

  it('with an endpoint, spans nest across awaits and reach its /v1/traces, with the service name, when tracing is shut down', async () => {
    const rx = await startReceiver();
    try {
      const stop = setupTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_SERVICE_NAME: 'traces-test' });
      assert.ok(stop);
      await inSpan('run', { partner: 'p1' }, async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        await inSpan('window', { 'window.index': 1 }, async () => undefined);
      });
      await stop();
      const spans = rx.requests.flatMap((q) => otlpSpans(q.body));
      const run = spans.find((s) => s.name === 'run');
      const window = spans.find((s) => s.name === 'window');
      assert.deepEqual([run?.service, run?.attributes.partner, window?.attributes['window.index']], ['traces-test', 'p1', 1]);
      assert.equal(window?.parentSpanId, run?.spanId);
      // Shut down: spans are no-ops again.
      await inSpan('run', {}, async (span) => assert.equal(span.isRecording(), false));
    } finally {
      await rx.close();
    }
  });
});
