/** The Prometheus text endpoint and the health check of a running worker. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noRedaction } from '../../src/log.js';
import { openStore } from '../../src/store/store.js';
import { startMetricsServer } from '../../src/worker/http.js';
import { MetricsRegistry } from '../../src/metrics.js';
import { startWorker } from '../../src/worker/worker.js';
import type { PartnerDefinition } from '../../src/config/definition.js';
import { FakeTimers, flushIo } from './support/fake-timers.js';
import { FakeWorld } from './support/fake-world.js';
import { captureLogger } from './support/log-capture.js';

describe('worker metrics', () => {
  it('renders counters, gauges and histograms in the text exposition format, with the default process metrics', async () => {
    const r = new MetricsRegistry();
    r.counter('x_total', 'Things.', ['partner', 'stream']).inc({ partner: 'a"b', stream: 'customers' }, 2);
    r.gauge('y', 'Level.').set({}, 1.5);
    r.histogram('d_seconds', 'Durations.', ['s'], [1, 5]).observe({ s: 'c' }, 2);
    const text = await r.render();
    const samples = parseExposition(text);
    for (const [series, value] of [
      ['x_total{partner="a\\"b",stream="customers"}', 2], ['y', 1.5],
      ['d_seconds_bucket{le="1",s="c"}', 0], ['d_seconds_bucket{le="5",s="c"}', 1], ['d_seconds_bucket{le="+Inf",s="c"}', 1], ['d_seconds_sum{s="c"}', 2], ['d_seconds_count{s="c"}', 1],
    ] as const) assert.equal(samples.get(series), value, `${series} in\n${text}`);
    for (const help of ['# HELP x_total Things.', '# TYPE x_total counter', '# TYPE y gauge', '# TYPE d_seconds histogram']) assert.ok(text.includes(`${help}\n`), help);
    // Process metrics of prom-client's default set.
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      assert.ok(text.includes(`\n# TYPE ${name} `), `missing ${name}`);
    }
  });

  it('a worker serves rows loaded and rejected, run durations, lag per stream, 429s and retries on /metrics; /healthz', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'partner-sync-metrics-'));
    const timers = new FakeTimers('2026-11-22T10:00:10Z');
    const store = await openStore({ url: `sqlite:${join(dir, 's.sqlite')}`, clock: timers.clock });
    const world = new FakeWorld(timers);
    const def = { partner: 'casino', variant: 'igaming', file: 'casino.yaml', source: { type: 'rest' }, affiliates: { map: {}, unmapped: 'keep' }, secrets: [],
      streams: { customers: { entity: 'customers', incremental: { mode: 'cursor' }, schedule: '*/5 * * * *' } } } as unknown as PartnerDefinition;
    await store.knex('sync_state').insert({ partner_id: 'casino', stream: 'customers', state: JSON.stringify({ watermark: '2026-11-22T09:50:00.000Z' }), updated_at: store.now() });
    const ports = world.ports();
    const run = ports.run;
    ports.run = async (job, at) => {
      const r = await run(job, at);
      return { ...r, counts: { ...r.counts, pulled: 10, loaded: 8, rejected: 2, retries: 3, throttled: 1 }, pageRewalks: 2, durationMs: 1500 };
    };
    const worker = await startWorker({ store, definitions: [def], logger: captureLogger().logger, redact: noRedaction, timers, ports, freshnessIntervalMs: 60_000 });
    const server = await startMetricsServer({ port: 0, host: '127.0.0.1', render: () => worker.metrics.registry.render(), health: () => worker.health() });
    try {
      await timers.advanceTo('2026-11-22T10:00:10Z', async () => { await flushIo(); await worker.scheduler.idle(); });
      await worker.monitor.check();
      const response = await fetch(`${server.url}/metrics`);
      assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      const text = await response.text();
      const samples = parseExposition(text);
      const labels = 'partner="casino",stream="customers"';
      for (const line of [
        `partner_sync_runs_total{${labels},status="succeeded"} 1`,
        `partner_sync_rows_loaded_total{${labels}} 8`,
        `partner_sync_rows_rejected_total{${labels}} 2`,
        `partner_sync_http_429_total{${labels}} 1`,
        `partner_sync_http_retries_total{${labels}} 3`,
        `partner_sync_page_rewalks_total{${labels}} 2`,
        `partner_sync_run_duration_seconds_bucket{${labels},le="5"} 1`,
        `partner_sync_run_duration_seconds_count{${labels}} 1`,
        // The store's watermark (09:50) is 610 s behind 10:00:10: a breach of the 5-minute target.
        `partner_sync_freshness_lag_seconds{${labels}} 610`,
        `partner_sync_freshness_breach{${labels}} 1`,
        'partner_sync_worker_up 1',
      ]) {
        const [series, value] = parseSample(line);
        assert.equal(samples.get(series), value, `missing ${line} in\n${text}`);
      }
      assert.ok(samples.has('process_resident_memory_bytes'), 'default process metrics');
      const health = await fetch(`${server.url}/healthz`);
      assert.equal(health.status, 200);
      assert.equal(((await health.json()) as { status: string }).status, 'ok');
      assert.equal((await fetch(`${server.url}/other`)).status, 404);
      await worker.stop(1_000);
      assert.equal((await fetch(`${server.url}/healthz`)).status, 503);
    } finally {
      await server.close();
      await worker.stop(0);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** `name{b="2",a="1"} 3` as [`name{a="1",b="2"}`, 3]: label order is not meaningful in the format. */
function parseSample(line: string): [string, number] {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
  if (!m) throw new Error(`not a sample line: ${line}`);
  const labels = (m[2] ?? '').match(/[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"/g) ?? [];
  const series = labels.length === 0 ? (m[1] as string) : `${m[1] as string}{${[...labels].sort().join(',')}}`;
  return [series, m[3] === '+Inf' ? Infinity : Number(m[3])];
}

function parseExposition(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) if (line !== '' && !line.startsWith('#')) samples.set(...parseSample(line));
  return samples;
}
