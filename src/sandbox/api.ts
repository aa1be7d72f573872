/**
 * The partner's list endpoints, /api/v1/{variant}/{customers|transactions|activity}: filters,
 * sort order, pagination and the spec's list envelope (§2.5). Authentication, rate limiting and
 * fault injection happen before a request gets here (server.ts).
 *
 * | Endpoint       | Filters (query)                                              | Sorted by                      |
 * |----------------|--------------------------------------------------------------|--------------------------------|
 * | customers      | modified_since ≤ last_modified_date < modified_until         | last_modified_date, customer_id |
 * | transactions   | updated_since ≤ updated_at < updated_until;                  | updated_at, transaction_id     |
 * |                | from ≤ transaction_date < to                                 |                                |
 * | activity       | date=YYYY-MM-DD (required): the rows of that UTC day         | customer_id, game_type or instrument, currency |
 *
 * Date-time filters are RFC 3339 date-times (any precision, Z or an offset) compared with the
 * records' values at full precision. Bad values are 422 naming the parameter.
 */
import type { Entity, Variant } from '../types.js';
import { isEntity, isVariant } from '../types.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { SandboxData, SortedEntry } from './data.js';
import type { SandboxFaults } from './faults.js';
import { errorReply, invalidParameter, jsonReply, methodNotAllowed, notFound, type Reply } from './http.js';
import { parseDay, queryInstantKey } from './instant.js';
import { DEFAULT_PER_PAGE, parsePaging, partitionPoint, takePage, type PagePosition } from './pagination.js';

export const API_PREFIX = '/api/v1/';

type FilterKind = 'instant' | 'date';

interface FilterParam {
  name: string;
  kind: FilterKind;
  required?: boolean;
}

/** Parsed filter values: sortable instant keys, or the date as given. */
type Filters = ReadonlyMap<string, string>;

interface ListEndpoint {
  filters: readonly FilterParam[];
  select(data: SandboxData, variant: Variant, filters: Filters): readonly SortedEntry[];
}

/** The entries whose first key element lies in [since, until). */
function keyRange<E extends SortedEntry>(entries: readonly E[], since: string | undefined, until: string | undefined): readonly E[] {
  const lo = since === undefined ? 0 : partitionPoint(entries, (e) => (e.key[0] as string) >= since);
  const hi = until === undefined ? entries.length : partitionPoint(entries, (e) => (e.key[0] as string) >= until);
  return lo === 0 && hi === entries.length ? entries : entries.slice(lo, Math.max(lo, hi));
}

const ENDPOINTS: Record<Entity, ListEndpoint> = {
  customers: {
    filters: [{ name: 'modified_since', kind: 'instant' }, { name: 'modified_until', kind: 'instant' }],
    select: (data, variant, f) => keyRange(data.customerEntries(variant), f.get('modified_since'), f.get('modified_until')),
  },
  transactions: {
    filters: [
      { name: 'updated_since', kind: 'instant' },
      { name: 'updated_until', kind: 'instant' },
      { name: 'from', kind: 'instant' },
      { name: 'to', kind: 'instant' },
    ],
    select(data, variant, f) {
      const byUpdate = keyRange(data.transactionEntries(variant), f.get('updated_since'), f.get('updated_until'));
      const from = f.get('from');
      const to = f.get('to');
      if (from === undefined && to === undefined) return byUpdate;
      return byUpdate.filter(
        (e) => e.dateKey !== undefined && (from === undefined || e.dateKey >= from) && (to === undefined || e.dateKey < to),
      );
    },
  },
  activity: {
    filters: [{ name: 'date', kind: 'date', required: true }],
    select: (data, variant, f) => data.activityEntries(variant, f.get('date') as string),
  },
};

export interface ApiContext {
  data: SandboxData;
  faults: SandboxFaults;
}

/** Answers an authenticated request whose path starts with /api/v1/. */
export function handleApi(ctx: ApiContext, method: string, path: string, query: URLSearchParams): Reply {
  const parts = path.slice(API_PREFIX.length).split('/');
  const [variant, entity] = parts;
  if (parts.length === 3 && parts[2] === 'deleted' && isVariant(variant) && (entity === 'customers' || entity === 'transactions')) {
    if (method !== 'GET') return methodNotAllowed(method, ['GET']);
    return deletedIds(ctx, variant, entity, query);
  }
  if (parts.length !== 2 || !isVariant(variant) || !isEntity(entity)) return notFound(path);
  if (method !== 'GET') return methodNotAllowed(method, ['GET']);
  return list(ctx, variant, entity, query);
}

/**
 * GET /api/v1/{variant}/{customers|transactions}/deleted?deleted_since=ISO: the records the
 * partner hard-deleted since then, `{ data: [{ <id field>, deleted_at }], meta }`, one page.
 */
function deletedIds(ctx: ApiContext, variant: Variant, entity: 'customers' | 'transactions', query: URLSearchParams): Reply {
  const since = query.get('deleted_since');
  if (since === null || Number.isNaN(Date.parse(since))) return invalidParameter('deleted_since', 'deleted_since is required (an ISO 8601 date-time)');
  const idField = entity === 'customers' ? 'customer_id' : 'transaction_id';
  const data = ctx.data.deletedSince(variant, entity, since).map((d) => ({ [idField]: d.id, deleted_at: d.deleted_at }));
  return jsonReply(200, { data, meta: { total: data.length, next_cursor: null } });
}

function list(ctx: ApiContext, variant: Variant, entity: Entity, query: URLSearchParams): Reply {
  const endpoint = ENDPOINTS[entity];
  const scope = `${variant}/${entity}`;
  const paging = parsePaging(query);
  if ('status' in paging) return paging;

  let raw: Record<string, string> = {};
  let perPage: number;
  let position: PagePosition;
  if (paging.cursor !== undefined) {
    const state = decodeCursor(paging.cursor);
    if (state === undefined) return errorReply(400, 'invalid_cursor', 'cursor is not one this API issued (pass meta.next_cursor back unchanged)');
    if (state.scope !== scope) return errorReply(400, 'invalid_cursor', `cursor belongs to ${state.scope}, not ${scope}`);
    // The filters travel in the cursor; a client that sends them again must send the same ones.
    for (const { name } of endpoint.filters) {
      const given = query.get(name);
      if (given !== null && given !== state.filters[name]) {
        return errorReply(400, 'invalid_cursor', `cursor was issued for ${name}=${state.filters[name] ?? '(none)'}, the request has ${name}=${given}`);
      }
    }
    raw = state.filters;
    perPage = paging.perPage ?? state.perPage;
    position = { kind: 'after', page: state.page, after: state.after };
  } else {
    for (const { name } of endpoint.filters) {
      const values = query.getAll(name);
      if (values.length > 1) return invalidParameter(name, `${name} is given more than once`);
      if (values[0] !== undefined) raw[name] = values[0];
    }
    perPage = paging.perPage ?? DEFAULT_PER_PAGE;
    position = { kind: 'offset', page: paging.page ?? 1 };
  }

  const filters = new Map<string, string>();
  for (const param of endpoint.filters) {
    const value = raw[param.name];
    if (value === undefined) {
      if (param.required === true) return invalidParameter(param.name, `${param.name} is required (YYYY-MM-DD, a UTC day)`);
      continue;
    }
    const parsed = parseFilter(param, value);
    if (typeof parsed !== 'string') return parsed;
    filters.set(param.name, parsed);
  }

  // An outage that answers as if the partner had nothing.
  const entries = ctx.faults.emptyPages ? [] : endpoint.select(ctx.data, variant, filters);
  const slice = takePage(entries, position, perPage, ctx.faults.duplicateAcrossPages);
  const nextCursor = () => encodeCursor({ scope, filters: raw, perPage, page: position.page + 1, after: slice.lastKey === null ? null : [...slice.lastKey] });
  let next = slice.hasNext ? nextCursor() : undefined;
  // An endless-pagination partner: the cursor never moves on.
  if (ctx.faults.repeatCursor) next = paging.cursor ?? next ?? nextCursor();

  const meta: { total: number; page: number; per_page: number; next_cursor?: string } = { total: entries.length, page: position.page, per_page: perPage };
  if (next !== undefined) meta.next_cursor = next;
  return { status: 200, body: { data: slice.records, meta }, page: true };
}

function parseFilter(param: FilterParam, value: string): string | Reply {
  if (param.kind === 'date') {
    return parseDay(value) === undefined ? invalidParameter(param.name, `${param.name} must be a date YYYY-MM-DD, got ${JSON.stringify(value)}`) : value;
  }
  const key = queryInstantKey(value);
  return key ?? invalidParameter(param.name, `${param.name} must be an ISO 8601 date-time with a time zone (e.g. 2026-11-02T10:00:00.123456Z), got ${JSON.stringify(value)}`);
}
