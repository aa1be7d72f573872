/**
 * The deliverer on a thread of its own (PostgreSQL stores). Delivering is many small HTTP
 * exchanges and store statements; on the event loop that answers pushes, each of them delays the
 * next round trip of a load transaction, and a group commit waits on some thirty of those (at the
 * push benchmark's load, a deliverer on the same event loop doubled a load transaction's time:
 * bench/README.md, Push). The thread runs the same Deliverer on its own store connections; its
 * log lines and metrics come back here, so they go through this process's logger (redaction,
 * format, level) and its /metrics. A thread that dies is started again after a pause; its leases
 * expire, so nothing it held is lost.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log.js';
import type { DeliveryMetrics, DeliveryOptions } from './deliverer.js';

/** What the thread is started with. */
export interface ThreadData {
  /** The store's connection string (PostgreSQL). */
  url: string;
  secretKey: string;
  options: DeliveryOptions;
  /** Whether debug lines are wanted (one per delivered event: not sent over otherwise). */
  debug: boolean;
}

type Level = 'debug' | 'info' | 'warn' | 'error';
export type ThreadMessage =
  | { kind: 'log'; level: Level; message: string; meta?: Record<string, unknown> }
  | { kind: 'metric'; series: 'delivered' | 'failed' | 'dead' | 'latency' | 'pending' | 'lag'; labels: Record<string, string>; value: number }
  | { kind: 'started' }
  | { kind: 'stopped' }
  | { kind: 'failed'; message: string };

/** Applies a thread's metric to this process's series. */
function applyMetric(metrics: DeliveryMetrics | undefined, m: Extract<ThreadMessage, { kind: 'metric' }>): void {
  if (!metrics) return;
  if (m.series === 'latency') metrics.latency.observe(m.labels, m.value);
  else if (m.series === 'pending' || m.series === 'lag') metrics[m.series].set(m.labels, m.value);
  else metrics[m.series].inc(m.labels, m.value);
}

const RESTART_MS = 5000;

export interface Delivery {
  /** Stops delivering and waits for the attempts in flight. */
  stop(): Promise<void>;
}

/** Starts the deliverer thread; resolves once it delivers, rejects when it cannot start (the store unreachable, say). */
export async function startDeliveryThread(data: ThreadData, logger: Logger, metrics?: DeliveryMetrics): Promise<Delivery> {
  let stopping = false;
  let current: Worker;
  let alive = false;
  let restart: NodeJS.Timeout | undefined;
  const spawn = (): Promise<void> => new Promise<void>((resolve, reject) => {
    const worker = new Worker(new URL('./delivery-thread-main.js', import.meta.url), { workerData: data });
    current = worker;
    alive = true;
    let started = false;
    worker.on('message', (m: ThreadMessage) => {
      if (m.kind === 'log') logger.log(m.level, m.message, m.meta ?? {});
      else if (m.kind === 'metric') applyMetric(metrics, m);
      else if (m.kind === 'started') { started = true; resolve(); }
      else if (m.kind === 'failed') reject(new Error(m.message));
    });
    worker.on('error', (error) => {
      if (!started) reject(error);
      else logger.error(`postbacks: the delivery thread failed: ${error.message}`, { event: 'postbacks_thread_failed' });
    });
    worker.on('exit', (code) => {
      alive = false;
      if (stopping || !started) return;
      logger.error(`postbacks: the delivery thread exited (${code}); starting it again in ${RESTART_MS / 1000} s`, { event: 'postbacks_thread_exited', code });
      restart = setTimeout(() => {
        spawn().catch((error: unknown) => logger.error(`postbacks: the delivery thread did not start again: ${(error as Error).message}`, { event: 'postbacks_thread_failed' }));
      }, RESTART_MS);
    });
  });
  await spawn();
  return {
    async stop() {
      stopping = true;
      if (restart) clearTimeout(restart);
      const worker = current;
      if (!alive) return;
      const done = new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.on('message', (m: ThreadMessage) => { if (m.kind === 'stopped') void worker.terminate(); });
      });
      worker.postMessage('stop');
      await done;
    },
  };
}
