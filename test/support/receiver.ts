/**
 * A tracker for postback tests: a real HTTP server on 127.0.0.1 that records every request
 * (method, URL, headers, body, arrival time) and answers as the test says: a status, a delay,
 * or whatever a function decides per request.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Answer = { status: number; delayMs?: number; headers?: Record<string, string> };

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** How the next requests are answered (default 200). */
  answer: (req: Received) => Answer;
  /** Resolves once `n` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const waiters: { n: number; resolve: () => void }[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const receiver: Receiver = {
    url: '', port: 0, requests: [], answer: () => ({ status: 200 }),
    waitFor(n, timeoutMs = 15_000) {
      if (receiver.requests.length >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${receiver.requests.length} of ${n} postbacks arrived within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ n, resolve: () => { clearTimeout(timer); resolve(); } });
      });
    },
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const answer = receiver.answer(got);
      const reply = (): void => {
        // Counted when answered: a test that waits for n requests then sees their outcome settle soon after.
        receiver.requests.push(got);
        res.writeHead(answer.status, answer.headers ?? {}).end(answer.status >= 400 ? 'tracker says no' : 'ok');
        for (const w of [...waiters]) if (receiver.requests.length >= w.n) { waiters.splice(waiters.indexOf(w), 1); w.resolve(); }
      };
      if (answer.delayMs) setTimeout(reply, answer.delayMs);
      else reply();
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}

/** What a receiver does to trust a postback (docs/postbacks.md): recompute the signature, compare in constant time. */
export function verifies(secret: string, req: Received): boolean {
  const timestamp = String(req.headers['x-partner-sync-timestamp'] ?? '');
  const given = String(req.headers['x-partner-sync-signature'] ?? '');
  const signed = req.method === 'GET' ? req.url : req.body;
  const expected = 'v1=' + createHmac('sha256', secret).update(`${timestamp}.${signed}`).digest('hex');
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

