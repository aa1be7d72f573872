/**
 * Walking the pages of one stream over one window: page/per_page, cursor (spec §2.5
 * `meta.next_cursor`) or offset/limit. The ways ETL tools lose or loop on rows are closed here:
 *
 * - A short page never ends the walk (partners cap page sizes below what we ask, and a page can be
 *   short mid-way); only an empty page or an absent/empty next cursor does. An empty page that
 *   still carries a next cursor ends nothing: the partner says more follows, so taking it as the end
 *   would store a day with part of its rows, or move a watermark past pages never read. It is
 *   retried like a malformed body, then fails the stream.
 * - Offsets advance by the records received, not by the page size we asked for, so a partner that
 *   returns fewer rows than asked does not make us skip the rest.
 * - A next cursor seen before, or a page identical to the previous one (a partner ignoring the
 *   page parameter), aborts with a SourceError instead of looping; a hard page cap is the last guard.
 * - Page-number and offset walks are watched for records shifting between pages (page-shift.ts):
 *   a walk that shifted is read again from its first page, yielding only records not already
 *   yielded unchanged, until a walk comes back clean or the same as the one before; after
 *   MAX_WALKS the walk ends with PageWalkUnstable, so the window's state does not move.
 */
import { createHash } from 'node:crypto';
import type { RestStream } from '../../src/config/definition.js';
import { jsonIssuesOf } from '../../src/kernel/strict-json.js';
import type { Logger } from '../../src/log.js';
import { PageWalkUnstable, PositionRefused, SourceError, type PositionedPage, type SourceStats } from '../source.js';
import type { AcceptBody, ApiResponse } from './client.js';
import { DEFAULT_TOTAL_PATH, identifyFor, MAX_WALKS, WalkWatch, type Identity } from './page-shift.js';
import { RetryableFailure } from './retry.js';

/** Spec §4 / §8: per_page maximum. */
export const MAX_PAGE_SIZE = 500;
/** No window of any stream has this many pages; reaching it means the partner's pagination is broken. */
export const MAX_PAGES = 1_000_000;
export const DEFAULT_RECORDS_PATH = 'data';
export const DEFAULT_CURSOR_PATH = 'meta.next_cursor';

/** `accept` checks the parsed body within the request's retries (see AcceptBody). */
export type FetchPage = (params: URLSearchParams, accept?: AcceptBody) => Promise<ApiResponse>;

export interface PaginateOptions {
  logger: Logger;
  /** Overridable for tests of the last guard. */
  maxPages?: number;
  /** Walks of one page/offset window before it is given up as unstable (default MAX_WALKS). */
  maxWalks?: number;
  /** `pageRewalks` is counted here. */
  stats?: SourceStats;
}

/** The records of each non-empty page, in order. */
export async function* paginate(stream: RestStream, params: Record<string, string>, fetchPage: FetchPage, options: PaginateOptions): AsyncGenerator<unknown[]> {
  for await (const page of paginateFrom(stream, params, fetchPage, options)) if (page.records.length > 0) yield page.records;
}

/**
 * Where a walk stands after a page, as text to store: the next page number, offset or page
 * token. Passed back as `after`, the walk continues there.
 */
type WalkPosition = { page: number } | { offset: number } | { cursor: string };

function parsePosition(text: string, type: RestStream['pagination']['type'], what: string): WalkPosition {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const v = value as Record<string, unknown> | undefined;
  if (type === 'page' && typeof v?.page === 'number' && Number.isInteger(v.page) && v.page >= 0) return { page: v.page };
  if (type === 'offset' && typeof v?.offset === 'number' && Number.isInteger(v.offset) && v.offset >= 0) return { offset: v.offset };
  if (type === 'cursor' && typeof v?.cursor === 'string' && v.cursor !== '') return { cursor: v.cursor };
  throw new PositionRefused(`${what}: the stored read position ${JSON.stringify(text.slice(0, 80))} is not one of ${type} pagination`);
}

/**
 * The pages of a window with the position after each, starting after `options.after` when given.
 * Page and offset windows are read again from their first page while their records shift (see
 * the header); a re-walk's pages hold only records not yielded unchanged before (possibly none,
 * for the position), and a resumed window's re-walk starts at its first page too.
 */
export async function* paginateFrom(stream: RestStream, params: Record<string, string>, fetchPage: FetchPage, options: PaginateOptions & { after?: string }): AsyncGenerator<PositionedPage> {
  const pagination = stream.pagination;
  const perPage = pagination.per_page;
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > MAX_PAGE_SIZE) {
    throw new SourceError(`stream ${stream.path}: per_page must be an integer from 1 to ${MAX_PAGE_SIZE} (spec §4), got ${String(perPage)}`);
  }
  const start = options.after === undefined ? undefined : parsePosition(options.after, pagination.type, `stream ${stream.path}`);
  if (pagination.type === 'cursor') {
    yield* walk(stream, params, fetchPage, options, start, undefined);
    return;
  }
  const maxWalks = Math.max(1, options.maxWalks ?? MAX_WALKS);
  // key → version of what earlier walks handed over: a re-walk hands over only the rest.
  let handed: Map<string, string> | undefined;
  const identify = identifyFor(stream, valueAt);
  let previous: string | undefined;
  let from = start;
  for (let walkNumber = 1; ; walkNumber += 1) {
    const watch = new WalkWatch(identify, (body) => valueAt(body, DEFAULT_TOTAL_PATH));
    for await (const page of walk(stream, params, fetchPage, options, from, watch)) {
      const fresh = handed === undefined ? page.records : page.records.filter((_, i) => handed?.get((page.identities[i] as Identity).key) !== (page.identities[i] as Identity).version);
      yield { records: fresh, ...(page.next !== undefined ? { next: page.next } : {}) };
    }
    if (handed === undefined) handed = watch.seen;
    else for (const [key, version] of watch.seen) handed.set(key, version);
    const shift = watch.shift();
    const fingerprint = watch.fingerprint();
    // A clean walk, or the same answer twice (the partner's paging repeats records by habit).
    if (shift === undefined || (!watch.totalChanged && fingerprint === previous)) {
      if (walkNumber > 1) options.logger.info(`stream ${stream.path}: the page walk came back stable on walk ${walkNumber}`, { walks: walkNumber });
      return;
    }
    if (walkNumber >= maxWalks) {
      throw new PageWalkUnstable(
        `stream ${stream.path}: the partner's records kept shifting between pages over ${walkNumber} walks of the window (last: ${shift}); ` +
          'what was read is loaded, but the window is not complete: its start and watermark stay where it began and the next run reads it again',
      );
    }
    if (options.stats) options.stats.pageRewalks = (options.stats.pageRewalks ?? 0) + 1;
    options.logger.warn(`stream ${stream.path}: records shifted between pages during the walk (${shift}); reading the window again from its first page (walk ${walkNumber + 1} of at most ${maxWalks})`, { walk: walkNumber + 1 });
    previous = fingerprint;
    from = undefined;
  }
}

type WalkedPage = PositionedPage & { identities: Identity[] };

/** One walk of the pages from `start` (or the first page); `watch` sees every page, the closing empty one included. */
async function* walk(stream: RestStream, params: Record<string, string>, fetchPage: FetchPage, options: PaginateOptions, start: WalkPosition | undefined, watch: WalkWatch | undefined): AsyncGenerator<WalkedPage> {
  const pagination = stream.pagination;
  const perPage = pagination.per_page;
  const recordsPath = stream.records_path ?? DEFAULT_RECORDS_PATH;
  const maxPages = options.maxPages ?? MAX_PAGES;
  const base = { ...stream.params, ...params };

  let previousPage: string | undefined;
  let cursor: string | undefined;
  const seenCursors = new Set<string>();
  let offset = 0;
  let firstIndex = 0;
  if (start !== undefined) {
    if ('page' in start) firstIndex = start.page;
    else if ('offset' in start) offset = start.offset;
    else cursor = start.cursor;
  }

  for (let index = firstIndex; ; index += 1) {
    if (index - firstIndex >= maxPages) {
      throw new SourceError(`stream ${stream.path}: more than ${maxPages} pages in one window; stopping (last guard against endless pagination)`);
    }
    const query = new URLSearchParams(base);
    switch (pagination.type) {
      case 'page':
        query.set(pagination.page_param, String(pagination.first_page + index));
        query.set(pagination.per_page_param, String(perPage));
        break;
      case 'cursor':
        query.set(pagination.per_page_param, String(perPage));
        if (cursor !== undefined) query.set(pagination.cursor_param, cursor);
        break;
      case 'offset':
        query.set(pagination.offset_param, String(offset));
        query.set(pagination.limit_param, String(perPage));
        break;
    }

    const cursorPath = pagination.type === 'cursor' ? pagination.cursor_path || DEFAULT_CURSOR_PATH : undefined;
    const { body, what } = await fetchPage(query, cursorPath === undefined ? undefined : (page, about) => {
      const problem = emptyPageWithCursor(page, recordsPath, cursorPath, about);
      if (problem) throw new RetryableFailure(problem);
    });
    const records = recordsAt(body, recordsPath, what);
    refuseEnvelopeIssues(body, recordsPath, cursorPath, what);
    const next = cursorPath === undefined ? undefined : cursorAt(body, cursorPath, what);
    const fingerprint = createHash('sha256').update(JSON.stringify(records)).digest('base64');
    const label = pagination.type === 'page' ? `page ${pagination.first_page + index}` : `offset ${offset}`;
    const identities = watch?.page(body, records, fingerprint, label) ?? [];

    if (records.length === 0) {
      // A fetch that did not check the body: the same rule, without the retries.
      const problem = cursorPath === undefined ? undefined : emptyPageWithCursor(body, recordsPath, cursorPath, what);
      if (problem) throw problem;
      return;
    }

    if (fingerprint === previousPage) {
      // The same page again because records moved forward by a page: a shift, not endless paging.
      if (watch?.totalChanged) return;
      throw new SourceError(`${what}: the partner returned the same page twice (identical ${records.length} records): endless pagination. ${ignoredParameter(stream)}`);
    }
    previousPage = fingerprint;

    if (pagination.type === 'cursor' && next !== undefined) {
      if (seenCursors.has(next)) {
        throw new SourceError(`${what}: partner returned the same next_cursor twice: endless pagination (cursor ${JSON.stringify(next.length > 80 ? `${next.slice(0, 79)}…` : next)})`);
      }
      seenCursors.add(next);
    }

    const position: WalkPosition | undefined =
      pagination.type === 'page' ? { page: index + 1 }
      : pagination.type === 'offset' ? { offset: offset + records.length }
      : next === undefined ? undefined : { cursor: next };
    yield position === undefined ? { records, identities } : { records, identities, next: JSON.stringify(position) };

    if (pagination.type === 'cursor') {
      if (next === undefined) return;
      cursor = next;
    } else if (pagination.type === 'offset') {
      offset += records.length;
    }
  }
}

/**
 * What to set when the partner answers the same page again: it ignores the next-page parameter
 * sent, so the definition must name the partner's own (the definition key, with its path).
 */
function ignoredParameter(stream: RestStream): string {
  const p = stream.pagination;
  const at = `streams.${stream.entity}.pagination`;
  const sent = p.type === 'page' ? `${at}.page_param (${p.page_param})` : p.type === 'offset' ? `${at}.offset_param (${p.offset_param})` : `${at}.cursor_param (${p.cursor_param})`;
  return (
    `The partner ignores the next-page parameter sent, ${sent}: set it to the partner's own parameter, ` +
    `or for a partner that sends a next-page token set ${at}.type: cursor with cursor_param (the parameter taking the token, e.g. page_token) and cursor_path (where the body holds it, e.g. next_page_token); ` +
    '`partner-sync discover` tries the common names and says which one advances'
  );
}

/**
 * What the body's text hid outside its records (src/kernel/strict-json.ts). A record's own issues
 * travel with it to the mapping, which rejects that record alone; but a field given twice or bytes
 * that are not UTF-8 in the envelope (`data` or `next_cursor` twice) leave unknown which records or
 * which position the partner meant, and a next cursor that is a number of more than 15 digits is
 * not the one sent: the page fails.
 */
function refuseEnvelopeIssues(body: unknown, recordsPath: string, cursorPath: string | undefined, what: string): void {
  const issues = jsonIssuesOf(body);
  if (issues === undefined) return;
  const records = recordsPath === '' ? [] : recordsPath.split('.');
  const cursor = cursorPath?.split('.');
  for (const issue of issues) {
    const path = issue.path.map(String);
    const inRecord = path.length > records.length && records.every((key, i) => path[i] === key);
    if (inRecord) continue;
    const atCursor = cursor !== undefined && path.length === cursor.length && cursor.every((key, i) => path[i] === key);
    if (issue.rule === 'exact_number' && !atCursor) continue;
    throw new SourceError(`${what}: the response body's field ${path.join('.') || '(top level)'}: ${issue.message}; the page cannot be read as sent`);
  }
}

/** The error for an empty page that still carries a next cursor, or undefined. */
function emptyPageWithCursor(body: unknown, recordsPath: string, cursorPath: string, what: string): SourceError | undefined {
  const records = valueAt(body, recordsPath);
  if (!Array.isArray(records) || records.length > 0) return undefined;
  const next = cursorAt(body, cursorPath, what);
  if (next === undefined) return undefined;
  return new SourceError(
    `${what}: an empty page still carries a next cursor at "${cursorPath}" (${JSON.stringify(next.length > 80 ? `${next.slice(0, 79)}…` : next)}): ` +
      'the partner says more records follow but sent none; the window is not complete',
  );
}

/** The value at a dot path (`a.b.0.c`); the empty path is the value itself. */
export function valueAt(value: unknown, path: string): unknown {
  if (path === '') return value;
  let current = value;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function recordsAt(body: unknown, path: string, what: string): unknown[] {
  const records = valueAt(body, path);
  if (Array.isArray(records)) return records;
  const keys = body !== null && typeof body === 'object' && !Array.isArray(body) ? ` (body fields: ${Object.keys(body).slice(0, 20).join(', ') || 'none'})` : '';
  throw new SourceError(`${what}: no array of records at ${path === '' ? 'the top level' : `"${path}"`} of the response body: found ${kindOf(records)}${keys}`);
}

function cursorAt(body: unknown, path: string, what: string): string | undefined {
  const value = valueAt(body, path);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new SourceError(`${what}: the next cursor at "${path}" is ${kindOf(value)}, not a string`);
}

function kindOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
