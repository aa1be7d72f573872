/**
 * The worker's series, by name (partner and stream labels on each), in the shared metrics
 * registry of the service (src/metrics.ts: prom-client, with the default process metrics).
 */
import { MetricsRegistry } from '../metrics.js';

const STREAM = ['partner', 'stream'] as const;

export function workerMetrics(registry = new MetricsRegistry()) {
  return {
    registry,
    runs: registry.counter('partner_sync_runs_total', 'Runs of a (partner, stream) by result (succeeded, failed, partial).', [...STREAM, 'status']),
    rowsPulled: registry.counter('partner_sync_rows_pulled_total', 'Records received from the partner.', STREAM),
    rowsLoaded: registry.counter('partner_sync_rows_loaded_total', 'Records loaded into the store (including released waiting records).', STREAM),
    rowsRejected: registry.counter('partner_sync_rows_rejected_total', 'Records rejected by validation (kept in rejects).', STREAM),
    rowsWaiting: registry.counter('partner_sync_rows_waiting_total', 'Valid records parked until their customer arrives.', STREAM),
    rowsStale: registry.counter('partner_sync_rows_stale_total', 'Valid records not applied: the store held a newer version of their key.', STREAM),
    throttled: registry.counter('partner_sync_http_429_total', 'Partner answers 429 Too Many Requests.', STREAM),
    retries: registry.counter('partner_sync_http_retries_total', 'Partner requests retried (5xx, timeouts, 429, malformed bodies).', STREAM),
    pageRewalks: registry.counter('partner_sync_page_rewalks_total', 'Page-number or offset walks read again because the partner\'s records shifted between pages during the walk.', STREAM),
    duration: registry.histogram('partner_sync_run_duration_seconds', 'Duration of runs.', STREAM, [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600]),
    skipped: registry.counter('partner_sync_ticks_skipped_total', 'Scheduled ticks not run, by reason (overlap: the previous run still runs; locked: another worker runs it; done: another worker already ran this tick).', [...STREAM, 'reason']),
    lastSuccess: registry.gauge('partner_sync_last_success_timestamp_seconds', 'When the last successful run of the stream finished (Unix time).', STREAM),
    lag: registry.gauge('partner_sync_freshness_lag_seconds', 'How far the stream is behind: now - watermark for customers and transactions; time past 06:00 UTC without the previous day for activity.', STREAM),
    breach: registry.gauge('partner_sync_freshness_breach', '1 when the stream breaches its freshness target (spec §1), else 0.', STREAM),
    running: registry.gauge('partner_sync_runs_in_progress', 'Runs in progress in this worker.'),
    up: registry.gauge('partner_sync_worker_up', '1 while the worker schedules runs, 0 while it stops.'),
  };
}

export type WorkerMetrics = ReturnType<typeof workerMetrics>;
