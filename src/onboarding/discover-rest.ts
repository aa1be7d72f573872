/**
 * Discovery of a partner REST API: the first pages of each list endpoint, read with the
 * connector's own client (auth, rate limit, retries), and what they hold: where the records are,
 * how the endpoint pages (meta.next_cursor, page numbers), its total when given, the value
 * profile of every field, and the fields whose values are the customers' keys. Activity is read
 * for the day asked (`--sample-date`), else the latest day with rows up to 90 days back.
 */
import { createRestSource } from '../../connectors/rest/source.js';
import { addDays, utcDay } from '../../jobs/windows.js';
import type { Logger } from '../log.js';
import type { Entity } from '../types.js';
import type { EntityDiscovery, PaginationSeen, ReferenceSeen } from './discovery.js';
import { leaves, profileRecords } from './profile.js';
import { restSource, type RestOptions } from './source-options.js';

export interface RestDiscoverOptions {
  pages: number;
  perPage: number;
  clock: () => Date;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** How many days back from yesterday to look for a day with activity. */
  activityDays?: number;
  /** The activity day to read, instead of looking back for one. */
  sampleDate?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function at(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split('.')) {
    if (!isObject(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** Where the records of a list body are: `data` (the spec's envelope), another array key, or the body itself. */
function recordsOf(body: unknown): { path: string; records: unknown[] } | undefined {
  if (Array.isArray(body)) return { path: '', records: body };
  if (!isObject(body)) return undefined;
  if (Array.isArray(body.data)) return { path: 'data', records: body.data };
  for (const [key, value] of Object.entries(body)) if (Array.isArray(value)) return { path: key, records: value };
  return undefined;
}

const CURSOR_PATHS = ['meta.next_cursor', 'meta.nextCursor', 'next_cursor', 'nextCursor', 'meta.cursor', 'links.next', 'paging.next'];

function paginationOf(body: unknown): PaginationSeen {
  for (const path of CURSOR_PATHS) {
    const value = at(body, path);
    if (typeof value === 'string' && value !== '') return { type: 'cursor', cursor_path: path };
  }
  const page = at(body, 'meta.page') ?? at(body, 'page');
  if (typeof page === 'number') return { type: 'page' };
  return { type: 'none' };
}

function totalOf(body: unknown): number | undefined {
  const total = at(body, 'meta.total') ?? at(body, 'total');
  return typeof total === 'number' ? total : undefined;
}

export async function discoverRest(options: RestOptions, run: RestDiscoverOptions): Promise<EntityDiscovery[]> {
  const { source, redact } = restSource(options, run.env);
  const client = createRestSource(source, { clock: run.clock, logger: run.logger, redact });
  const out: EntityDiscovery[] = [];
  const samples = new Map<Entity, { records: unknown[]; complete: boolean }>();
  for (const entity of ['customers', 'transactions', 'activity'] as Entity[]) {
    const path = options.paths[entity];
    if (path === undefined) continue;
    const { found, records, complete } = await discoverEndpoint(client.getJson, entity, path, options, run);
    out.push(found);
    samples.set(entity, { records, complete });
  }
  const customers = out.find((e) => e.entity === 'customers');
  const keys = samples.get('customers');
  if (customers && keys) for (const e of out) if (e !== customers) e.references = containment(samples.get(e.entity)?.records ?? [], customers, keys);
  return out;
}

const primitive = (v: unknown): v is string | number => typeof v === 'string' || typeof v === 'number';

/** Per leaf field, its distinct primitive values as text. */
function valuesOf(records: readonly unknown[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const record of records) {
    if (!isObject(record)) continue;
    for (const [name, value] of leaves(record)) {
      if (!primitive(value)) continue;
      const set = out.get(name) ?? new Set<string>();
      set.add(String(value));
      out.set(name, set);
    }
  }
  return out;
}

/**
 * The fields of an entity's sample whose values are the customers' keys (fields unique in the
 * customers' sample): all of them when the customers were read whole, at least half when only
 * their first pages were (the rest may be on pages not read).
 */
function containment(records: readonly unknown[], customers: EntityDiscovery, sample: { records: unknown[]; complete: boolean }): ReferenceSeen[] {
  const keys = valuesOf(sample.records);
  const out: ReferenceSeen[] = [];
  for (const [field, values] of valuesOf(records)) {
    for (const key of customers.fields.filter((f) => f.unique)) {
      const held = keys.get(key.name);
      if (held === undefined) continue;
      const found = [...values].filter((v) => held.has(v)).length;
      if (found === values.size || (!sample.complete && found * 2 >= values.size && found > 0)) out.push({ column: field, table: 'customers', key: key.name, how: 'contained', values: values.size, found });
    }
  }
  return out;
}

async function discoverEndpoint(
  getJson: (path: string, params: Record<string, string>) => Promise<unknown>,
  entity: Entity,
  path: string,
  options: RestOptions,
  run: RestDiscoverOptions,
): Promise<{ found: EntityDiscovery; records: unknown[]; complete: boolean }> {
  const notes: string[] = [];
  const base: Record<string, string> = { per_page: String(run.perPage) };
  let first: unknown;
  if (entity === 'activity') {
    // A day's rows: the day asked for, else yesterday, else the days before it, until a day has rows.
    const yesterday = addDays(utcDay(run.clock()), -1);
    const days = run.sampleDate !== undefined ? [run.sampleDate] : Array.from({ length: run.activityDays ?? 90 }, (_, back) => addDays(yesterday, -back));
    for (const day of days) {
      base[options.dateParam] = day;
      first = await getJson(path, base);
      if ((recordsOf(first)?.records.length ?? 0) > 0) break;
    }
    const none = (recordsOf(first)?.records.length ?? 0) === 0;
    notes.push(none && days.length > 1 ? `no activity on any day from ${days[0]} back to ${days[days.length - 1]}` : `activity read for ${options.dateParam}=${base[options.dateParam]}`);
  } else {
    first = await getJson(path, base);
  }
  const found = recordsOf(first);
  if (found === undefined) {
    return { found: { entity, where: path, records: 0, pages: 1, records_path: undefined, pagination: { type: 'none' }, fields: [], references: [], notes: [`the answer holds no array of records: ${JSON.stringify(first).slice(0, 200)}`] }, records: [], complete: true };
  }
  let pagination = paginationOf(first);
  if (pagination.type === 'none' && found.records.length >= 2) {
    // Everything fit on one page: ask for pages of one record to see how the partner pages.
    const small = await getJson(path, { ...base, per_page: '1' });
    const seen = paginationOf(small);
    if (seen.type !== 'none') {
      pagination = seen;
      notes.push(`pagination seen by asking for pages of 1 record (${found.records.length} records fit on the first page)`);
    }
  }
  const total = totalOf(first);
  const records = [...found.records];
  let body = first;
  let pages = 1;
  let page = 1;
  let complete = false;
  while (pages < run.pages) {
    let params: Record<string, string>;
    if (pagination.type === 'cursor') {
      const next = at(body, pagination.cursor_path as string);
      if (typeof next !== 'string' || next === '') {
        complete = true;
        break;
      }
      params = { per_page: String(run.perPage), cursor: next };
    } else if (pagination.type === 'page') {
      if (total !== undefined && page * run.perPage >= total) {
        complete = true;
        break;
      }
      page += 1;
      params = { ...base, page: String(page) };
    } else {
      complete = records.length < run.perPage;
      break;
    }
    body = await getJson(path, params);
    const more = recordsOf(body)?.records ?? [];
    pages += 1;
    if (more.length === 0) {
      complete = true;
      break;
    }
    records.push(...more);
  }
  if (total !== undefined && records.length >= total) complete = true;
  const discovery: EntityDiscovery = {
    entity,
    where: path,
    records: records.length,
    pages,
    records_path: found.path,
    pagination,
    ...(total !== undefined ? { total } : {}),
    fields: profileRecords(records),
    references: [],
    notes,
  };
  return { found: discovery, records, complete };
}
