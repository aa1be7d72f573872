/** Shared helpers of the sandbox tests: a hand-moved clock, a started sandbox, token and GET calls. */
import assert from 'node:assert/strict';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';

export const NOW = '2026-12-01T10:00:00.000Z';

export interface ManualClock {
  (): Date;
  advance(ms: number): void;
  set(iso: string): void;
}

export function manualClock(start: string = NOW): ManualClock {
  let now = Date.parse(start);
  const clock = (() => new Date(now)) as ManualClock;
  clock.advance = (ms) => void (now += ms);
  clock.set = (iso) => void (now = Date.parse(iso));
  return clock;
}

export const CLIENT = { client_id: 'test-client', client_secret: 'test-secret' };

/** A sandbox on a free port with a manual clock and the test client; small by default. */
export async function sandboxFor(options: SandboxOptions = {}): Promise<Sandbox & { clock: ManualClock }> {
  const clock = options.clock === undefined ? manualClock() : (options.clock as ManualClock);
  const sandbox = await startSandbox({ customers: 40, seed: 11, clients: [CLIENT], ...options, clock });
  return Object.assign(sandbox, { clock });
}

export function form(fields: Record<string, string>): RequestInit {
  return { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() };
}

export async function token(sandbox: Sandbox, client = CLIENT): Promise<string> {
  const res = await fetch(`${sandbox.url}/oauth/token`, form({ grant_type: 'client_credentials', ...client }));
  assert.equal(res.status, 200, await res.clone().text());
  const body = (await res.json()) as { access_token: string };
  return body.access_token;
}

export interface Envelope {
  data: Record<string, unknown>[];
  meta: { total: number; page: number; per_page: number; next_cursor?: string };
}

export async function get(sandbox: Sandbox, accessToken: string, path: string, query: Record<string, string | number> = {}): Promise<Response> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return fetch(`${sandbox.url}${path}${qs === '' ? '' : `?${qs}`}`, { headers: { Authorization: `Bearer ${accessToken}` } });
}

export async function getPage(sandbox: Sandbox, accessToken: string, path: string, query: Record<string, string | number> = {}): Promise<Envelope> {
  const res = await get(sandbox, accessToken, path, query);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text) as Envelope;
}

/** Follows next_cursor from the first page to the end; returns every record served, in order. */
export async function walkCursor(sandbox: Sandbox, accessToken: string, path: string, query: Record<string, string | number> = {}, maxPages = 1000): Promise<{ records: Record<string, unknown>[]; pages: number }> {
  const records: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  for (let pages = 1; pages <= maxPages; pages++) {
    const page = await getPage(sandbox, accessToken, path, cursor === undefined ? query : { ...query, cursor });
    records.push(...page.data);
    cursor = page.meta.next_cursor;
    if (cursor === undefined) return { records, pages };
  }
  throw new Error(`more than ${maxPages} pages`);
}

/** Requests page 1, 2, ... until a page has no next_cursor. */
export async function walkPages(sandbox: Sandbox, accessToken: string, path: string, query: Record<string, string | number> = {}): Promise<{ records: Record<string, unknown>[]; pages: number }> {
  const records: Record<string, unknown>[] = [];
  for (let page = 1; ; page++) {
    const body = await getPage(sandbox, accessToken, path, { ...query, page });
    records.push(...body.data);
    if (body.meta.next_cursor === undefined) return { records, pages: page };
    if (page > 1000) throw new Error('more than 1000 pages');
  }
}

export async function errorOf(res: Response): Promise<{ status: number; error: string; description: string; parameter?: string }> {
  const body = (await res.json()) as { error: string; error_description: string; parameter?: string };
  assert.equal(typeof body.error, 'string');
  assert.equal(typeof body.error_description, 'string');
  return { status: res.status, error: body.error, description: body.error_description, ...(body.parameter !== undefined ? { parameter: body.parameter } : {}) };
}
