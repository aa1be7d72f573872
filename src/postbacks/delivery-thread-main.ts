/**
 * The delivery thread's entry (./delivery-thread.ts starts it): the Deliverer on its own store
 * connections, its log lines and metrics posted to the starting thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Logger } from '../log.js';
import { openStore } from '../store/store.js';
import { setupTracing } from '../trace.js';
import { Deliverer, type DeliveryMetrics } from './deliverer.js';
import type { ThreadData, ThreadMessage } from './delivery-thread.js';

const port = parentPort;
if (!port) throw new Error('delivery-thread-main runs as a worker thread');
const data = workerData as ThreadData;
const post = (m: ThreadMessage): void => port.postMessage(m);

const line = (level: 'debug' | 'info' | 'warn' | 'error') => (message: string, meta?: Record<string, unknown>): void => {
  if (level !== 'debug' || data.debug) post({ kind: 'log', level, message, meta });
};
const logger = { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') } as unknown as Logger;

const counter = (series: 'delivered' | 'failed' | 'dead') => ({ inc: (labels: Record<string, string> = {}, by = 1) => post({ kind: 'metric', series, labels, value: by }) });
const gauge = (series: 'pending' | 'lag') => ({ set: (labels: Record<string, string>, value: number) => post({ kind: 'metric', series, labels, value }) });
const metrics = {
  delivered: counter('delivered'), failed: counter('failed'), dead: counter('dead'), pending: gauge('pending'), lag: gauge('lag'),
  latency: { observe: (labels: Record<string, string>, value: number) => post({ kind: 'metric', series: 'latency', labels, value }) },
} as unknown as DeliveryMetrics;

// The thread's spans (postback.delivery) go out from its own provider, set up as the process's is.
let stopTracing: (() => Promise<void>) | undefined;
try {
  stopTracing = setupTracing(process.env);
  const store = await openStore({ url: data.url });
  const deliverer = new Deliverer({ store, logger, secretKey: data.secretKey, options: data.options, metrics });
  deliverer.start();
  port.on('message', (m: unknown) => {
    if (m !== 'stop') return;
    void deliverer.stop().then(() => store.close()).finally(() => stopTracing?.()).finally(() => post({ kind: 'stopped' }));
  });
  post({ kind: 'started' });
} catch (error) {
  post({ kind: 'failed', message: (error as Error).message });
}
