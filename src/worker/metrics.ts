/**
 * The worker's metrics in the Prometheus text exposition format (version 0.0.4): counters,
 * gauges and histograms with labels, rendered on each scrape. Small on purpose: the worker needs
 * a dozen series, not a client library.
 */
export type Labels = Record<string, string>;

type Kind = 'counter' | 'gauge' | 'histogram';

interface Series {
  labels: Labels;
  value: number;
  /** Histograms: cumulative bucket counts, sum. */
  buckets?: number[];
  sum?: number;
}

interface Family {
  name: string;
  help: string;
  kind: Kind;
  bounds?: number[];
  series: Map<string, Series>;
}

const labelKey = (labels: Labels): string => JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

const escapeLabel = (value: string): string => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const escapeHelp = (value: string): string => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function formatLabels(labels: Labels, extra?: [string, string]): string {
  const entries = Object.entries(labels);
  if (extra) entries.push(extra);
  return entries.length === 0 ? '' : `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

export class MetricsRegistry {
  private readonly families = new Map<string, Family>();

  private family(name: string, help: string, kind: Kind, bounds?: number[]): Family {
    let f = this.families.get(name);
    if (!f) this.families.set(name, (f = { name, help, kind, bounds, series: new Map() }));
    else if (f.kind !== kind) throw new Error(`metric ${name} is a ${f.kind}, not a ${kind}`);
    return f;
  }

  private series(f: Family, labels: Labels): Series {
    const key = labelKey(labels);
    let s = f.series.get(key);
    if (!s) {
      s = { labels: { ...labels }, value: 0 };
      if (f.kind === 'histogram') {
        s.buckets = (f.bounds ?? []).map(() => 0);
        s.sum = 0;
      }
      f.series.set(key, s);
    }
    return s;
  }

  counter(name: string, help: string) {
    const f = this.family(name, help, 'counter');
    return {
      inc: (labels: Labels = {}, by = 1): void => {
        if (by < 0) throw new Error(`counter ${name} cannot go down`);
        this.series(f, labels).value += by;
      },
      get: (labels: Labels = {}): number => f.series.get(labelKey(labels))?.value ?? 0,
    };
  }

  gauge(name: string, help: string) {
    const f = this.family(name, help, 'gauge');
    return {
      set: (labels: Labels, value: number): void => {
        this.series(f, labels).value = value;
      },
      remove: (labels: Labels): void => {
        f.series.delete(labelKey(labels));
      },
      get: (labels: Labels = {}): number | undefined => f.series.get(labelKey(labels))?.value,
    };
  }

  /** A histogram with these upper bounds (seconds, ascending); +Inf is added. */
  histogram(name: string, help: string, bounds: number[]) {
    const f = this.family(name, help, 'histogram', [...bounds].sort((a, b) => a - b));
    return {
      observe: (labels: Labels, value: number): void => {
        const s = this.series(f, labels);
        s.value += 1;
        s.sum = (s.sum ?? 0) + value;
        (f.bounds ?? []).forEach((b, i) => {
          if (value <= b && s.buckets) s.buckets[i] = (s.buckets[i] ?? 0) + 1;
        });
      },
      count: (labels: Labels = {}): number => f.series.get(labelKey(labels))?.value ?? 0,
    };
  }

  /** The text exposition of every metric. */
  render(): string {
    const lines: string[] = [];
    for (const f of this.families.values()) {
      lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.kind}`);
      for (const s of f.series.values()) {
        if (f.kind !== 'histogram') {
          lines.push(`${f.name}${formatLabels(s.labels)} ${formatNumber(s.value)}`);
          continue;
        }
        (f.bounds ?? []).forEach((b, i) => lines.push(`${f.name}_bucket${formatLabels(s.labels, ['le', formatNumber(b)])} ${s.buckets?.[i] ?? 0}`));
        lines.push(`${f.name}_bucket${formatLabels(s.labels, ['le', '+Inf'])} ${s.value}`);
        lines.push(`${f.name}_sum${formatLabels(s.labels)} ${formatNumber(s.sum ?? 0)}`);
        lines.push(`${f.name}_count${formatLabels(s.labels)} ${s.value}`);
      }
    }
    return lines.join('\n') + '\n';
  }
}

/** The worker's series, by name (partner and stream labels on each). */
export function workerMetrics(registry = new MetricsRegistry()) {
  return {
    registry,
    runs: registry.counter('partner_sync_runs_total', 'Runs of a (partner, stream) by result (succeeded, failed, partial).'),
    rowsPulled: registry.counter('partner_sync_rows_pulled_total', 'Records received from the partner.'),
    rowsLoaded: registry.counter('partner_sync_rows_loaded_total', 'Records loaded into the store (including released waiting records).'),
    rowsRejected: registry.counter('partner_sync_rows_rejected_total', 'Records rejected by validation (kept in rejects).'),
    rowsWaiting: registry.counter('partner_sync_rows_waiting_total', 'Valid records parked until their customer arrives.'),
    rowsStale: registry.counter('partner_sync_rows_stale_total', 'Valid records not applied: the store held a newer version of their key.'),
    throttled: registry.counter('partner_sync_http_429_total', 'Partner answers 429 Too Many Requests.'),
    retries: registry.counter('partner_sync_http_retries_total', 'Partner requests retried (5xx, timeouts, 429, malformed bodies).'),
    duration: registry.histogram('partner_sync_run_duration_seconds', 'Duration of runs.', [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600]),
    skipped: registry.counter('partner_sync_ticks_skipped_total', 'Scheduled ticks not run, by reason (overlap: the previous run still runs; locked: another worker runs it; done: another worker already ran this tick).'),
    lastSuccess: registry.gauge('partner_sync_last_success_timestamp_seconds', 'When the last successful run of the stream finished (Unix time).'),
    lag: registry.gauge('partner_sync_freshness_lag_seconds', 'How far the stream is behind: now - watermark for customers and transactions; time past 06:00 UTC without the previous day for activity.'),
    breach: registry.gauge('partner_sync_freshness_breach', '1 when the stream breaches its freshness target (spec §1), else 0.'),
    running: registry.gauge('partner_sync_runs_in_progress', 'Runs in progress in this worker.'),
    up: registry.gauge('partner_sync_worker_up', '1 while the worker schedules runs, 0 while it stops.'),
  };
}

export type WorkerMetrics = ReturnType<typeof workerMetrics>;
