/**
 * One HTTP attempt of one event. Node's own http/https client, for three reasons: it never
 * follows a redirect (a 3xx is an answer, reported with its Location), it takes a `lookup` per
 * request, so the SSRF guard judges the address actually connected to (./destination.ts), and
 * it lets one deadline cover connect, send and the answer. The request carries the event id as
 * `Idempotency-Key` and an HMAC-SHA256 signature over the timestamp and the signed content
 * (docs/postbacks.md, Verifying a postback).
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { PostbackDefinition } from './definitions.js';
import { blockedAddressReason, guardedLookup } from './destination.js';
import { fillTemplate, messageOf } from './events.js';
import { signature } from './secret.js';
import { inSpan, SpanStatusCode } from '../trace.js';

export const SIGNATURE_HEADER = 'x-partner-sync-signature';
export const TIMESTAMP_HEADER = 'x-partner-sync-timestamp';

export interface OutgoingEvent {
  eventId: string;
  kind: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

export interface AttemptResult {
  delivered: boolean;
  status: number | null;
  /** Why it failed: the status and the start of the answer, a timeout, a refused destination. */
  error: string | null;
  /** Worth trying again (a network fault, a timeout, 408, 429, 5xx); else the event is dead at once. */
  retry: boolean;
  ms: number;
}

/** The request an event makes: URL, body, and what the signature covers. */
export function requestOf(def: PostbackDefinition, event: OutgoingEvent): { url: URL; body: string; signed: string } {
  const message = messageOf(event.kind, event.eventId, event.occurredAt, event.data);
  const url = new URL(fillTemplate(def.url, message));
  if (def.method === 'GET') return { url, body: '', signed: url.pathname + url.search };
  const body = JSON.stringify(message);
  return { url, body, signed: body };
}

const ANSWER_BYTES = 512;

/** Keep-alive connections of one postback (a lane): the guarded lookup judged each when it was opened. */
export function laneAgents(def: PostbackDefinition): { http: http.Agent; https: https.Agent } {
  const lookup = guardedLookup(def.allowPrivate) as never;
  return { http: new http.Agent({ keepAlive: true, lookup } as http.AgentOptions), https: new https.Agent({ keepAlive: true, lookup } as https.AgentOptions) };
}

/**
 * One attempt in a `postback.delivery` span (src/trace.ts): the postback, the event, the tracker's
 * host (never its URL: a postback URL may carry a token) and the HTTP status; ERROR when not delivered.
 */
export function sendEvent(def: PostbackDefinition, secret: string, event: OutgoingEvent, timeoutMs: number, nowSeconds: () => number, agents?: { http: http.Agent; https: https.Agent }): Promise<AttemptResult> {
  const about = { 'postback.id': def.id, 'postback.event': event.kind, 'postback.event_id': event.eventId, 'http.request.method': def.method };
  return inSpan('postback.delivery', about, async (span) => {
    const result = await attempt(def, secret, event, timeoutMs, nowSeconds, agents, (host) => span.setAttribute('server.address', host));
    span.setAttributes({ 'postback.delivered': result.delivered, 'postback.retry': result.retry, ...(result.status === null ? {} : { 'http.response.status_code': result.status }) });
    // Not the error's text: it may quote the tracker's answer or a redirect's Location.
    if (!result.delivered) span.setStatus({ code: SpanStatusCode.ERROR, message: result.status === null ? 'no HTTP answer' : `HTTP ${result.status}` });
    return result;
  });
}

function attempt(def: PostbackDefinition, secret: string, event: OutgoingEvent, timeoutMs: number, nowSeconds: () => number, agents: { http: http.Agent; https: https.Agent } | undefined, onHost: (host: string) => void): Promise<AttemptResult> {
  const started = performance.now();
  const done = (r: Omit<AttemptResult, 'ms'>): AttemptResult => ({ ...r, ms: Math.round(performance.now() - started) });
  let request: { url: URL; body: string; signed: string };
  try {
    request = requestOf(def, event);
  } catch (error) {
    return Promise.resolve(done({ delivered: false, status: null, error: `cannot build the request: ${(error as Error).message}`, retry: false }));
  }
  const { url, body, signed } = request;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  onHost(host);
  // An IP literal is connected to without a lookup: judged here.
  const literal = isIP(host) ? blockedAddressReason(host) : undefined;
  if (literal && !def.allowPrivate) return Promise.resolve(done({ delivered: false, status: null, error: `refused destination ${host}: ${literal} (the postback does not allow private destinations)`, retry: false }));
  const timestamp = nowSeconds();
  const headers: Record<string, string> = {
    'user-agent': 'partner-sync-postbacks/1',
    'idempotency-key': event.eventId,
    'x-partner-sync-event': event.kind,
    'x-partner-sync-event-id': event.eventId,
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: signature(secret, timestamp, signed),
  };
  if (def.method === 'POST') {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  const client = url.protocol === 'https:' ? https : http;
  const agent = agents ? (url.protocol === 'https:' ? agents.https : agents.http) : false;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: Omit<AttemptResult, 'ms'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // A delivered answer leaves its connection to the agent for the next event; anything else closes it.
      if (!r.delivered || !agents) req.destroy();
      resolve(done(r));
    };
    const req = client.request(url, { method: def.method, headers, lookup: guardedLookup(def.allowPrivate) as never, agent }, (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size < ANSWER_BYTES) chunks.push(chunk);
        size += chunk.length;
      });
      res.on('error', () => undefined);
      res.on('end', () => {
        const answer = Buffer.concat(chunks).toString('utf8').slice(0, ANSWER_BYTES).replace(/\s+/g, ' ').trim();
        if (status >= 200 && status < 300) return finish({ delivered: true, status, error: null, retry: false });
        if (status >= 300 && status < 400) {
          return finish({ delivered: false, status, error: `HTTP ${status}: redirect to ${res.headers.location ?? '(no Location)'} not followed`, retry: false });
        }
        const retry = status === 408 || status === 429 || status >= 500;
        finish({ delivered: false, status, error: `HTTP ${status}${answer ? `: ${answer}` : ''}`, retry });
      });
    });
    const timer = setTimeout(() => finish({ delivered: false, status: null, error: `no answer within ${timeoutMs} ms`, retry: true }), timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      const refused = error.code === 'EDESTBLOCKED';
      finish({ delivered: false, status: null, error: refused ? error.message : `${def.method} ${url.origin}${url.pathname}: ${error.code ?? ''} ${error.message}`.trim(), retry: !refused });
    });
    req.end(body);
  });
}
