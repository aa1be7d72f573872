/**
 * What the HTTP benchmarks share: a server started in a child process on a free loopback port
 * (ready when its health route answers), its peak RSS, and the answers a load generator counted
 * (statuses, and the accepted / loaded / waiting figures of 200 answers).
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export async function waitFor(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not answer ${url} within 30 s:\n${output()}`);
}

/** Peak resident set of a live process (Linux /proc VmHWM), in MB. */
export function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

export interface Server {
  url: string;
  child: ChildProcess;
  stop(): Promise<number>;
}

export async function startChild(args: string[], port: number, health: string): Promise<Server> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  child.stderr?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(url + health, child, () => out);
  return {
    url,
    child,
    async stop() {
      const rss = peakRssMb(child.pid as number);
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
      if (child.exitCode !== 0 && child.signalCode === null) process.stderr.write(`server exit ${child.exitCode}:\n${out}\n`);
      return rss;
    },
  };
}

export interface Counts {
  accepted: number;
  loaded: number;
  waiting: number;
  statuses: Map<number, number>;
}
export const newCounts = (): Counts => ({ accepted: 0, loaded: 0, waiting: 0, statuses: new Map() });
export function count(c: Counts, status: number, body: string): void {
  c.statuses.set(status, (c.statuses.get(status) ?? 0) + 1);
  if (status !== 200) return;
  try {
    const b = JSON.parse(body) as { accepted?: number; loaded?: number; waiting?: number };
    c.accepted += b.accepted ?? 0;
    c.loaded += b.loaded ?? 0;
    c.waiting += b.waiting ?? 0;
  } catch {
    // a non-JSON 200 (the bare route answers JSON too)
  }
}
export const statusText = (c: Counts) => [...c.statuses].map(([s, n]) => `${s}: ${n}`).join(', ');

export interface Transactions {
  count: number;
  requests: number;
  seconds: number;
}
export const emptyTransactions = (): Transactions => ({ count: 0, requests: 0, seconds: 0 });

/** The server's group-commit figures from /metrics, per entity (partner_sync_push_transaction_*). */
export async function pushTransactions(url: string): Promise<Record<'customers' | 'transactions', Transactions>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (series: string, entity: string) => Number(new RegExp(`^${series}\\{entity="${entity}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  const of = (entity: string): Transactions => ({
    count: value('partner_sync_push_transaction_requests_count', entity),
    requests: value('partner_sync_push_transaction_requests_sum', entity),
    seconds: value('partner_sync_push_transaction_seconds_sum', entity),
  });
  return { customers: of('customers'), transactions: of('transactions') };
}

export function describeTransactions(now: Transactions, before: Transactions): string {
  const n = now.count - before.count;
  if (n <= 0) return 'server: no push transactions';
  return `server: ${n} load transactions, ${((now.requests - before.requests) / n).toFixed(1)} requests each on average, ${(((now.seconds - before.seconds) / n) * 1000).toFixed(1)} ms each on average (BEGIN to answers)`;
}
