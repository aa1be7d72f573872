/**
 * Pagination of the sandbox's list endpoints (spec §4): `page` (1-based) and `per_page` (default
 * 50, max 500), or an opaque `cursor` (keyset: the position after the last record served).
 */
import type { SpecRecord } from '../types.js';
import { compareKeys, type SortedEntry } from './data.js';
import { errorReply, invalidParameter, type Reply } from './http.js';

export const DEFAULT_PER_PAGE = 50;
export const MAX_PER_PAGE = 500;

export interface PagingParams {
  page?: number;
  perPage?: number;
  cursor?: string;
}

/** Where a page starts: the page-th page of the list, or after a sort key (null: the start). */
export type PagePosition = { kind: 'offset'; page: number } | { kind: 'after'; page: number; after: readonly string[] | null };

export interface PageSlice {
  records: Readonly<SpecRecord>[];
  hasNext: boolean;
  /** Sort key of the last record of the page (the next page's keyset position). */
  lastKey: readonly string[] | null;
}

/** The paging parameters of a query, or the error reply for bad ones (422; 400 for page with cursor). */
export function parsePaging(query: URLSearchParams): PagingParams | Reply {
  for (const name of ['page', 'per_page', 'cursor']) {
    if (query.getAll(name).length > 1) return invalidParameter(name, `${name} is given more than once`);
  }
  const params: PagingParams = {};
  const page = query.get('page');
  if (page !== null) {
    if (!/^\d+$/.test(page) || Number(page) < 1 || !Number.isSafeInteger(Number(page))) {
      return invalidParameter('page', `page must be an integer ≥ 1, got ${JSON.stringify(page)}`);
    }
    params.page = Number(page);
  }
  const perPage = query.get('per_page');
  if (perPage !== null) {
    if (!/^\d+$/.test(perPage) || Number(perPage) < 1) {
      return invalidParameter('per_page', `per_page must be an integer from 1 to ${MAX_PER_PAGE}, got ${JSON.stringify(perPage)}`);
    }
    if (Number(perPage) > MAX_PER_PAGE) {
      return invalidParameter('per_page', `per_page must be at most ${MAX_PER_PAGE} (spec §4), got ${perPage}`);
    }
    params.perPage = Number(perPage);
  }
  const cursor = query.get('cursor');
  // An empty cursor (`cursor=` on the first request) means no cursor.
  if (cursor !== null && cursor !== '') {
    if (params.page !== undefined) return errorReply(400, 'invalid_request', 'use either page or cursor, not both');
    params.cursor = cursor;
  }
  return params;
}

/** The first index whose entry satisfies `pred`, for a predicate false then true along the list. */
export function partitionPoint<T>(items: readonly T[], pred: (item: T) => boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pred(items[mid] as T)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * One page of a sorted list. With `duplicateAcrossPages` (a fault) every page after the first
 * starts with the last record of the page before it: offset pages advance by per_page − 1, cursor
 * pages start at the cursor's record instead of after it.
 */
export function takePage(entries: readonly SortedEntry[], position: PagePosition, perPage: number, duplicateAcrossPages: boolean): PageSlice {
  const overlap = duplicateAcrossPages && perPage > 1 ? 1 : 0;
  let start: number;
  if (position.kind === 'offset') {
    start = (position.page - 1) * (perPage - overlap);
  } else if (position.after === null) {
    start = 0;
  } else {
    const after = position.after;
    start = partitionPoint(entries, (e) => compareKeys(e.key, after) > 0);
    if (overlap > 0 && start > 0) start -= 1;
  }
  start = Math.min(start, entries.length);
  const end = Math.min(start + perPage, entries.length);
  const page = entries.slice(start, end);
  const last = page.at(-1);
  return {
    records: page.map((e) => e.record),
    hasNext: end < entries.length,
    lastKey: last !== undefined ? last.key : position.kind === 'after' ? position.after : null,
  };
}
