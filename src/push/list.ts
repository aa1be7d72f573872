/**
 * The list endpoints (spec §2.5, §4): a partner's own records of one entity as spec records, in the
 * spec's envelope `{data, meta: {total, page, per_page, next_cursor}}`.
 *
 * - per_page: default 50, at most 500 (spec §8); outside 1..500 is a 422 naming `per_page`, not
 *   clamped: a limit of the spec is a rule, and a client asking for 1000 should learn it gets 500.
 * - Order: the entity's key (customer_id; transaction_id; date, customer_id, game_type or
 *   instrument, currency). `cursor` is opaque: the key of the last record of the page (keyset), so
 *   a walk by next_cursor sees every record present from start to end exactly once, however many
 *   records are inserted meanwhile. With `cursor`, `page` is carried by the cursor (a `page` sent
 *   beside it is ignored); without it, `page` counts pages of per_page from the start: an offset,
 *   so records inserted before it (or an activity day replaced with fewer rows) while a client walks
 *   pages shift later pages and a page walk can skip a record or see it twice. The cursor cannot.
 *   next_cursor is null on the last page.
 * - modified_since (an RFC 3339 date-time with zone, read by the same rules as a record's
 *   date-times: ../kernel/timestamp.ts; anything else, a leap second included, is a 422): customers whose last_modified_date is at or
 *   after it; transactions and activity (no change stamp in the spec) stored or last replaced at
 *   or after it (the time this service loaded them).
 * - meta.total: the records matching modified_since, whatever the page.
 */
import type { Knex } from 'knex';
import { entityTable, type EntityTable } from '../store/tables.js';
import { storedToRecord } from '../store/rows.js';
import { DateTimeError, parseDateTime } from '../kernel/timestamp.js';
import type { Entity, SpecRecord, Variant } from '../types.js';

export const DEFAULT_PER_PAGE = 50;
export const MAX_PER_PAGE = 500;

export interface ListQuery {
  page: number;
  perPage: number;
  /** Key of the last record of the previous page. */
  after?: string[];
  modifiedSince?: string;
}

export interface ParamError {
  field: string;
  rule: string;
  message: string;
}

export interface ListPage {
  data: SpecRecord[];
  meta: { total: number; page: number; per_page: number; next_cursor: string | null };
}

const POSITIVE = /^[1-9]\d{0,8}$/;

/** Reads the query parameters; errors name the parameter. */
export function parseListQuery(query: Record<string, unknown>, table: EntityTable): { query: ListQuery } | { errors: ParamError[] } {
  const errors: ParamError[] = [];
  const single = (name: string): string | undefined => {
    const v = query[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') {
      errors.push({ field: name, rule: 'type', message: `${name} must be given once` });
      return undefined;
    }
    return v;
  };
  let page = 1;
  let perPage = DEFAULT_PER_PAGE;
  const pageText = single('page');
  if (pageText !== undefined) {
    if (POSITIVE.test(pageText)) page = Number(pageText);
    else errors.push({ field: 'page', rule: 'minimum', message: 'page must be an integer of at least 1' });
  }
  const perPageText = single('per_page');
  if (perPageText !== undefined) {
    if (POSITIVE.test(perPageText) && Number(perPageText) <= MAX_PER_PAGE) perPage = Number(perPageText);
    else errors.push({ field: 'per_page', rule: 'maximum', message: `per_page must be an integer from 1 to ${MAX_PER_PAGE} (spec §8)` });
  }
  let after: string[] | undefined;
  const cursorText = single('cursor');
  if (cursorText !== undefined) {
    const decoded = decodeCursor(cursorText, table);
    if (decoded) ({ after, page } = decoded);
    else errors.push({ field: 'cursor', rule: 'format', message: 'cursor is not a next_cursor this endpoint returned' });
  }
  let modifiedSince: string | undefined;
  const sinceText = single('modified_since');
  if (sinceText !== undefined) {
    try {
      modifiedSince = parseDateTime(sinceText);
    } catch (error) {
      // `+01:00` sent unencoded in a URL arrives as ` 01:00`.
      const plus = / \d{2}:\d{2}$/.test(sinceText) ? '; a + in a query string must be sent as %2B' : '';
      const why = error instanceof DateTimeError ? `: ${error.reason}${plus}` : '';
      errors.push({ field: 'modified_since', rule: 'format', message: `modified_since must be an RFC 3339 date-time with a time zone, e.g. 2026-11-23T10:00:00Z${why} (got ${JSON.stringify(sinceText.slice(0, 40))})` });
    }
  }
  for (const name of Object.keys(query)) {
    if (!['page', 'per_page', 'cursor', 'modified_since'].includes(name)) errors.push({ field: name, rule: 'unknown', message: `unknown query parameter ${name} (known: page, per_page, cursor, modified_since)` });
  }
  if (errors.length > 0) return { errors };
  return { query: { page, perPage, after, modifiedSince } };
}

function encodeCursor(key: unknown[], page: number): string {
  return Buffer.from(JSON.stringify({ k: key, p: page })).toString('base64url');
}

function decodeCursor(text: string, table: EntityTable): { after: string[]; page: number } | undefined {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { k?: unknown; p?: unknown };
    if (!Array.isArray(value.k) || value.k.length !== table.key.length || !value.k.every((k) => typeof k === 'string')) return undefined;
    if (typeof value.p !== 'number' || !Number.isInteger(value.p) || value.p < 1) return undefined;
    return { after: value.k as string[], page: value.p };
  } catch {
    return undefined;
  }
}

/** One page of a partner's records. */
export async function listRecords(knex: Knex, partner: string, variant: Variant, entity: Entity, query: ListQuery): Promise<ListPage> {
  const table = entityTable(variant, entity);
  const filtered = (): Knex.QueryBuilder => {
    const q = knex(table.name).where('partner_id', partner);
    if (query.modifiedSince !== undefined) q.andWhere(entity === 'customers' ? 'last_modified_date' : 'loaded_at', '>=', query.modifiedSince);
    return q;
  };
  const [{ n }] = (await filtered().count({ n: '*' })) as [{ n: number | string }];
  const rows = filtered().select(table.columns.map((c) => c.name));
  if (query.after) {
    const marks = (m: string) => table.key.map(() => m).join(', ');
    rows.andWhereRaw(`(${marks('??')}) > (${marks('?')})`, [...table.key, ...query.after]);
  } else if (query.page > 1) {
    rows.offset((query.page - 1) * query.perPage);
  }
  for (const k of table.key) rows.orderBy(k, 'asc');
  rows.limit(query.perPage + 1);
  const found = (await rows) as Record<string, unknown>[];
  const more = found.length > query.perPage;
  const data = found.slice(0, query.perPage).map((r) => storedToRecord(table, r));
  const last = data[data.length - 1];
  const nextCursor = more && last ? encodeCursor(table.key.map((k) => String(last[k])), query.page + 1) : null;
  return { data, meta: { total: Number(n), page: query.page, per_page: query.perPage, next_cursor: nextCursor } };
}
