import nock from 'nock';
import { Writable } from 'node:stream';
import type { Pagination, RestSource, RestStream } from '../../src/config/definition.js';
import { createLogger, noRedaction, silentLogger, type Logger, type Redact } from '../../src/log.js';
import type { RestSourceClient, RestSourceDeps } from '../../connectors/rest/source.js';

export const BASE = 'https://partner.example';
export const PATH = '/api/v1/igaming/customers';
export const START = Date.parse('2026-03-01T00:00:00Z');

export function restSource(overrides: Partial<RestSource> = {}): RestSource {
  return {
    type: 'rest',
    base_url: BASE,
    auth: { type: 'bearer', token: 'static-bearer-token' },
    requests_per_minute: 1000,
    timeout_ms: 2000,
    retries: { max: 3, min_delay_ms: 100, max_delay_ms: 2000, max_retry_after_ms: 120_000 },
    run_budget_ms: 3_600_000,
    ...overrides,
  };
}

export const pagePaging = (per_page = 2): Pagination => ({ type: 'page', per_page, page_param: 'page', per_page_param: 'per_page', first_page: 1 });
export const cursorPaging = (per_page = 2): Pagination => ({ type: 'cursor', per_page, per_page_param: 'per_page', cursor_param: 'cursor', cursor_path: 'meta.next_cursor' });
export const offsetPaging = (per_page = 2): Pagination => ({ type: 'offset', per_page, offset_param: 'offset', limit_param: 'limit' });

export function restStream(pagination: Pagination = pagePaging(), overrides: Partial<RestStream> = {}): RestStream {
  return {
    entity: 'customers',
    path: PATH,
    records_path: 'data',
    params: {},
    pagination,
    incremental: { mode: 'cursor', cursor_field: 'last_modified_date', from_param: 'modified_since', lookback_ms: 0, start: '2026-01-01T00:00:00Z' },
    mapping: { fields: {}, passthrough: true },
    schedule: '*/5 * * * *',
    ...overrides,
  };
}

/** A clock that moves only when something sleeps (or a test advances it); every sleep is recorded. */
export interface FakeTime {
  clock: () => Date;
  sleep: (ms: number) => Promise<void>;
  sleeps: number[];
  advance(ms: number): void;
  now(): number;
}

export function fakeTime(start = START): FakeTime {
  let now = start;
  const sleeps: number[] = [];
  return {
    clock: () => new Date(now),
    sleep: (ms) => {
      sleeps.push(ms);
      now += ms;
      return Promise.resolve();
    },
    sleeps,
    advance: (ms) => {
      now += ms;
    },
    now: () => now,
  };
}

export function testDeps(time: FakeTime, extra: Partial<RestSourceDeps> = {}): RestSourceDeps {
  return { clock: time.clock, sleep: time.sleep, logger: silentLogger(), redact: noRedaction, random: () => 0.5, ...extra };
}

export async function collect(source: RestSourceClient, stream: RestStream, params: Record<string, string> = {}): Promise<unknown[][]> {
  const pages: unknown[][] = [];
  for await (const page of source.query(stream, params)) pages.push(page);
  return pages;
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`rejected with a non-error: ${String(error)}`);
  }
  throw new Error('expected a rejection, but it resolved');
}

export const records = (...ids: string[]): { customer_id: string }[] => ids.map((customer_id) => ({ customer_id }));

/** A JSON-lines logger at debug level whose output is kept. */
export function capturedLogger(redact: Redact): { logger: Logger; lines: () => string[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger({ stream, json: true, redact, level: 'debug' }), lines: () => chunks.join('').split('\n').filter(Boolean) };
}

/** nock for one suite: no real network, nothing left behind. */
export function useNock(): void {
  before(() => nock.disableNetConnect());
  afterEach(() => {
    nock.abortPendingRequests();
    nock.cleanAll();
  });
  after(() => nock.enableNetConnect());
}
