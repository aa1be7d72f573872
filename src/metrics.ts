/**
 * Metrics of every long-running face of the service (the worker, the HTTP API), through
 * prom-client, exposed in the Prometheus text format. A `MetricsRegistry` holds one face's series;
 * its exposition adds the process's default metrics (CPU, memory, event loop lag, GC, handles),
 * which are collected once per process into their own registry and shared by every exposition.
 */
import client from 'prom-client';

export type Labels = Record<string, string>;

let processRegistry: client.Registry | undefined;

/** The default process metrics (prom-client `collectDefaultMetrics`), collected once per process. */
export function processMetrics(): client.Registry {
  if (!processRegistry) {
    processRegistry = new client.Registry();
    client.collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

const sameLabels = (a: Partial<Record<string, string | number>>, b: Labels): boolean => {
  const keys = Object.keys(a).filter((k) => k !== 'le');
  return keys.length === Object.keys(b).length && keys.every((k) => String(a[k]) === b[k]);
};

/** A face's series: counters, gauges, histograms, each with its label names declared up front. */
export class MetricsRegistry {
  readonly registry = new client.Registry();

  constructor(private readonly withProcessMetrics = true) {}

  counter(name: string, help: string, labelNames: readonly string[] = []) {
    const c = new client.Counter({ name, help, labelNames, registers: [this.registry] });
    return {
      inc: (labels: Labels = {}, by = 1): void => {
        c.inc(labels, by);
      },
      /** The current value of a series (0 when it has none yet). */
      get: async (labels: Labels = {}): Promise<number> => (await c.get()).values.find((v) => sameLabels(v.labels, labels))?.value ?? 0,
    };
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []) {
    const g = new client.Gauge({ name, help, labelNames, registers: [this.registry] });
    return {
      set: (labels: Labels, value: number): void => {
        g.set(labels, value);
      },
      remove: (labels: Labels): void => {
        g.remove(labels);
      },
      get: async (labels: Labels = {}): Promise<number | undefined> => (await g.get()).values.find((v) => sameLabels(v.labels, labels))?.value,
    };
  }

  /** A histogram with these upper bounds (seconds); +Inf is added. */
  histogram(name: string, help: string, labelNames: readonly string[], buckets: number[]) {
    const h = new client.Histogram({ name, help, labelNames, buckets, registers: [this.registry] });
    return {
      observe: (labels: Labels, value: number): void => {
        h.observe(labels, value);
      },
      /** Starts a timer; calling the result observes the seconds since, with the labels given then. */
      startTimer: (): ((labels: Labels) => void) => {
        const start = process.hrtime.bigint();
        return (labels) => h.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
      },
      count: async (labels: Labels = {}): Promise<number> =>
        (await h.get()).values.find((v) => v.metricName === `${name}_count` && sameLabels(v.labels, labels))?.value ?? 0,
    };
  }

  /** The Content-Type of `render()`. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The text exposition of this face's series and, unless turned off, the process metrics. */
  async render(): Promise<string> {
    if (!this.withProcessMetrics) return this.registry.metrics();
    return client.Registry.merge([processMetrics(), this.registry]).metrics();
  }
}
