/**
 * How a partner's list endpoint pages, found by asking it rather than by guessing: partners name
 * their next-page parameter in their own way (`page_token`, `after`, `offset`, `page`...), and
 * an endpoint that ignores the parameter we send answers the first page again, which a backfill
 * only finds out as "the same page twice". So each common name is tried and kept only when it
 * advances: the page it brings holds other records than the first (or, for page sizes, fewer).
 * Every request carries the endpoint's base parameters (the user's own query, an activity day),
 * the probes too, since a partner requiring one refuses any page without it.
 */
import { SourceError } from '../../connectors/source.js';
import type { PaginationSeen } from './discovery.js';

export type GetJson = (params: Record<string, string>) => Promise<unknown>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function at(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split('.')) {
    if (!isObject(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** Where the records of a list body are: `data` (the spec's envelope), another array key, or the body itself. */
export function recordsOf(body: unknown): { path: string; records: unknown[] } | undefined {
  if (Array.isArray(body)) return { path: '', records: body };
  if (!isObject(body)) return undefined;
  if (Array.isArray(body.data)) return { path: 'data', records: body.data };
  for (const [key, value] of Object.entries(body)) if (Array.isArray(value)) return { path: key, records: value };
  return undefined;
}

/** Where partners put the next page's token (the spec's first). */
export const TOKEN_PATHS = [
  'meta.next_cursor', 'meta.nextCursor', 'next_cursor', 'nextCursor', 'next_page_token', 'nextPageToken', 'meta.next_page_token',
  'next_token', 'nextToken', 'pagination.next_cursor', 'pagination.next_page_token', 'paging.cursors.after', 'cursor.next',
  'continuation_token', 'continuationToken', 'continuation', 'meta.cursor', 'links.next', 'paging.next', 'next',
];
/** Query parameters that carry a next-page token. */
export const TOKEN_PARAMS = ['cursor', 'page_token', 'pageToken', 'next', 'after', 'starting_after', 'continuation', 'continuation_token', 'token', 'next_page_token', 'nextPageToken', 'next_cursor', 'page'];
/** Query parameters of a page size. */
export const SIZE_PARAMS = ['per_page', 'limit', 'page_size', 'pageSize', 'size', 'count', 'max_results', 'maxResults', 'perPage'];
/** Query parameters of a page number. */
export const PAGE_PARAMS = ['page', 'p', 'page_number', 'pageNumber'];
/** Query parameters of an offset (records skipped). */
export const OFFSET_PARAMS = ['offset', 'skip', 'start', 'startIndex'];

/** The token's parameter as its field names it: next_page_token → page_token, nextCursor → cursor. */
function namedByPath(path: string): string[] {
  const leaf = path.split('.').pop() ?? '';
  const out: string[] = [];
  const snake = /^next_(.+)$/.exec(leaf)?.[1];
  if (snake) out.push(snake);
  const camel = /^next([A-Z].*)$/.exec(leaf)?.[1];
  if (camel) out.push(camel.charAt(0).toLowerCase() + camel.slice(1));
  return out;
}

const text = (records: readonly unknown[]): string => JSON.stringify(records);

/** A next-page token in the body: its path and value (a URL is a next link, not a token). */
function tokenOf(body: unknown): { path: string; value: string } | undefined {
  for (const path of TOKEN_PATHS) {
    const value = at(body, path);
    if ((typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value))) return { path, value: String(value) };
  }
  return undefined;
}

const isLink = (value: string): boolean => /^(https?:\/\/|\/)/i.test(value);

/** The body of a probe, or undefined when the partner refused it (a 4xx: not this parameter). */
export async function probeBody(get: GetJson, params: Record<string, string>): Promise<unknown> {
  try {
    return await get(params);
  } catch (error) {
    if (error instanceof SourceError && error.status !== undefined && error.status >= 400 && error.status < 500 && error.status !== 401 && error.status !== 429) return undefined;
    throw error;
  }
}

/** The records of a probe, or undefined when the partner refused it. */
async function probe(get: GetJson, params: Record<string, string>): Promise<unknown[] | undefined> {
  const body = await probeBody(get, params);
  return body === undefined ? undefined : (recordsOf(body)?.records ?? []);
}

export interface PagingFound {
  pagination: PaginationSeen;
  notes: string[];
}

/**
 * How the endpoint pages, from its first page (`first`, read with `base`) and probes: a token in
 * the body and the parameter that takes it, else a page size parameter and a page number or
 * offset parameter that advances.
 */
export async function findPaging(get: GetJson, base: Record<string, string>, first: unknown): Promise<PagingFound> {
  const records = recordsOf(first)?.records ?? [];
  const notes: string[] = [];
  const tried: string[] = [];

  // The page size: the parameter that makes a page of 1 out of a page of several.
  let size: string | undefined;
  let small: unknown;
  if (records.length >= 2) {
    for (const name of SIZE_PARAMS) {
      const body = await probeBody(get, { ...base, [name]: '1' });
      if (recordsOf(body)?.records.length === 1) {
        size = name;
        small = body;
        break;
      }
    }
    if (size === undefined) tried.push(`page size: none of ${SIZE_PARAMS.join(', ')} gave a page of 1 record`);
  }

  // A token on the first page, or (every record fitting on it) on a page of 1 record.
  let token = tokenOf(first);
  let from: { records: unknown[]; params: Record<string, string> } = { records, params: base };
  if (token === undefined && size !== undefined) {
    token = tokenOf(small);
    if (token !== undefined) {
      from = { records: recordsOf(small)?.records ?? [], params: { ...base, [size]: '1' } };
      notes.push(`pagination seen by asking for pages of 1 record (${records.length} records fit on the first page)`);
    }
  }
  if (token !== undefined && !isLink(token.value)) {
    const candidates = [...new Set([...namedByPath(token.path), ...TOKEN_PARAMS])];
    for (const name of candidates) {
      const got = await probe(get, { ...from.params, [name]: token.value });
      if (got !== undefined && got.length > 0 && text(got) !== text(from.records)) {
        return {
          pagination: { type: 'cursor', cursor_path: token.path, cursor_param: name, ...(size ? { per_page_param: size } : {}), evidence: `the token at ${token.path} sent as ${name} brings the next records${size ? `; ${size} sets the page size` : ''}` },
          notes,
        };
      }
    }
    return { pagination: { type: 'none', tried: [...tried, `a next-page token at ${token.path}, but none of ${candidates.join(', ')} brought other records than the first page`] }, notes };
  }
  if (token !== undefined) notes.push(`a next-page link at ${token.path} (${token.value.slice(0, 80)}): the connector sends a token parameter, it does not follow links; the link's parameters are tried below`);

  if (records.length < 2) return { pagination: { type: 'none', tried }, notes };
  // With pages of 1 record, page 2 and offset 1 are the first page's second record.
  const one = size === undefined ? {} : { [size]: '1' };
  const second = text(size === undefined ? [] : [records[1]]);
  const third = text(size === undefined ? [] : [records[2]]);
  const firstPage = size === undefined ? text(records) : text([records[0]]);
  const fromLink = token === undefined ? [] : [...new URL(token.value, 'http://link.invalid').searchParams.keys()];
  for (const name of [...new Set([...fromLink.filter((n) => OFFSET_PARAMS.includes(n)), ...OFFSET_PARAMS])]) {
    const value = size === undefined ? String(records.length) : '1';
    const got = await probe(get, { ...base, ...one, [name]: value });
    if (got === undefined || got.length === 0 || text(got) === firstPage) continue;
    if (size !== undefined && text(got) !== second) continue;
    return { pagination: { type: 'offset', offset_param: name, ...(size ? { limit_param: size } : {}), evidence: `${name}=${value} brings the next record${size ? `s; ${size} sets the page size` : 's'}` }, notes };
  }
  tried.push(`offset: none of ${OFFSET_PARAMS.join(', ')} brought other records than the first page`);
  for (const name of [...new Set([...fromLink.filter((n) => PAGE_PARAMS.includes(n)), ...PAGE_PARAMS])]) {
    const got = await probe(get, { ...base, ...one, [name]: '2' });
    if (got === undefined || got.length === 0 || text(got) === firstPage) continue;
    // Page 2 of pages of 1 is the second record when pages count from 1, the third from 0.
    const firstPageNumber = size !== undefined && text(got) === third && records.length >= 3 ? 0 : 1;
    if (size !== undefined && text(got) !== second && firstPageNumber === 1) continue;
    return {
      pagination: { type: 'page', page_param: name, ...(size ? { per_page_param: size } : {}), first_page: firstPageNumber, evidence: `${name}=2 brings the next record${size ? `s; ${size} sets the page size` : 's'}${firstPageNumber === 0 ? '; pages count from 0' : ''}` },
      notes,
    };
  }
  tried.push(`page numbers: none of ${PAGE_PARAMS.join(', ')} brought other records than the first page`);
  return { pagination: { type: 'none', tried }, notes };
}

const NAME = '([A-Za-z_][A-Za-z0-9_.\\[\\]-]*)';
const GENERIC = new Set(['field', 'parameter', 'param', 'value', 'this', 'it', 'query', 'request', 'argument', 'input', 'body', 'one', 'is', 'the', 'a']);
const MESSAGES = [
  new RegExp(`\\b${NAME}\\s+(?:field|param(?:eter)?|argument)\\s+is\\s+(?:required|missing|mandatory)`, 'i'),
  new RegExp(`missing (?:required |mandatory )?(?:query |request )?(?:param(?:eter)?|argument|field)s?[:\\s]+['"\`]?${NAME}`, 'i'),
  new RegExp(`(?:query |request )?(?:param(?:eter)?|argument|field)\\s+['"\`]?${NAME}['"\`]?\\s+(?:is\\s+)?(?:required|missing|mandatory)`, 'i'),
  new RegExp(`['"\`]${NAME}['"\`]\\s+(?:is\\s+)?(?:required|missing|mandatory)`, 'i'),
  new RegExp(`(?:required|mandatory) (?:query |request )?(?:param(?:eter)?|argument|field)s?[:\\s]+['"\`]?${NAME}`, 'i'),
  new RegExp(`\\b${NAME} (?:is )?(?:required|missing)\\b`, 'i'),
];
const NAME_KEYS = ['param', 'parameter', 'missing', 'missing_param', 'missing_parameter', 'missing_params', 'field'];

/** Every string of a JSON value, and the named-parameter fields of its objects. */
function strings(value: unknown, named: string[], all: string[]): void {
  if (typeof value === 'string') all.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, named, all);
  else if (isObject(value)) {
    for (const key of NAME_KEYS) {
      const v = value[key];
      if (typeof v === 'string' && new RegExp(`^${NAME}$`).test(v)) named.push(v);
      if (Array.isArray(v)) for (const x of v) if (typeof x === 'string') named.push(x);
    }
    // FastAPI / pydantic: { loc: ["query", "from"], msg: "field required" }.
    const loc = value.loc;
    if (Array.isArray(loc) && loc[0] === 'query' && typeof loc[loc.length - 1] === 'string') named.push(loc[loc.length - 1] as string);
    for (const v of Object.values(value)) strings(v, named, all);
  }
}

/**
 * The query parameter a refused request's body names as required or wrong, if it names one:
 * `{"error":"missing required parameter from"}`, `{"param":"from"}`, `query parameter 'from' is
 * required`, a pydantic `loc`. Undefined when the body names none.
 */
export function parameterNamed(body: string | undefined): string | undefined {
  if (body === undefined || body === '') return undefined;
  const named: string[] = [];
  const all: string[] = [];
  try {
    strings(JSON.parse(body), named, all);
  } catch {
    all.push(body);
  }
  const found = named.find((n) => !GENERIC.has(n.toLowerCase()));
  if (found !== undefined) return found;
  for (const message of all) {
    for (const pattern of MESSAGES) {
      const m = pattern.exec(message)?.[1];
      if (m !== undefined && !GENERIC.has(m.toLowerCase())) return m;
    }
  }
  return undefined;
}
