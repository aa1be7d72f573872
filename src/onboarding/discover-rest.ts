/**
 * Discovery of a partner REST API: the first pages of each list endpoint, read with the
 * connector's own client (auth, rate limit, retries), and what they hold: where the records are,
 * how the endpoint pages (the parameters that advance, discover-paging.ts), its total when given, the value
 * profile of every field, and the fields whose values are the customers' keys. Customers and
 * transactions are also read on pages spread over their history (discover-history.ts), so that
 * their code fields' values are the partner's, not only its latest page's. Activity is read
 * for the day asked (`--sample-date`), else the latest day with rows up to 90 days back. The
 * query of a list path (`/v2/transactions?from=2024-01-01`) is sent with every request.
 */
import { createRestSource } from '../../connectors/rest/source.js';
import { utcDay } from '../../jobs/windows.js';
import { addDays } from '../kernel/dates.js';
import type { Logger } from '../log.js';
import type { Entity } from '../types.js';
import { SourceError } from '../../connectors/source.js';
import { at, findPaging, parameterNamed, recordsOf } from './discover-paging.js';
import { markValueSets, readHistory } from './discover-history.js';
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

/** A list path as given (`/v2/transactions?from=2024-01-01`): the path and its query parameters. */
export function splitPath(given: string): { path: string; params: Record<string, string> } {
  const q = given.indexOf('?');
  if (q < 0) return { path: given, params: {} };
  return { path: given.slice(0, q), params: Object.fromEntries(new URLSearchParams(given.slice(q + 1))) };
}

/** A refused first page: the error, naming the parameter the partner's body says is required or wrong. */
function refused(error: unknown, entity: Entity, given: string, params: Record<string, string>, options: RestOptions): unknown {
  if (!(error instanceof SourceError) || (error.status !== 400 && error.status !== 422)) return error;
  const name = parameterNamed(error.body);
  if (name === undefined) return error;
  const flag = `--${entity}`;
  const example = `${given}${given.includes('?') ? '&' : '?'}${name}=...`;
  const sent = params[name] ?? splitPath(given).params[name];
  const how = sent !== undefined
    ? `the partner refuses the query parameter ${name}=${sent}: give the value it expects in the list path (${flag} "${given.replace(new RegExp(`([?&]${name}=)[^&]*`), '$1...')}")`
    : `the partner requires the query parameter ${name}: give it in the list path, ${flag} "${example}"${entity === 'activity' ? `, or --date-param ${name} if it is the day (${options.dateParam} now)` : ''}; it is sent on every page and written to the draft's params`;
  return new SourceError(`${error.message}: ${how}`, { status: error.status, cause: error, body: error.body });
}

async function discoverEndpoint(
  getJson: (path: string, params: Record<string, string>) => Promise<unknown>,
  entity: Entity,
  given: string,
  options: RestOptions,
  run: RestDiscoverOptions,
): Promise<{ found: EntityDiscovery; records: unknown[]; complete: boolean }> {
  const { path, params: userParams } = splitPath(given);
  const notes: string[] = [];
  // Every request of the endpoint carries these: the user's query and, for activity, the day.
  const base: Record<string, string> = { ...userParams };
  const get = async (params: Record<string, string>): Promise<unknown> => {
    try {
      return await getJson(path, params);
    } catch (error) {
      throw refused(error, entity, given, params, options);
    }
  };
  let first: unknown;
  if (entity === 'activity') {
    // A day's rows: the day asked for, else yesterday, else the days before it, until a day has rows.
    const yesterday = addDays(utcDay(run.clock()), -1);
    const days = run.sampleDate !== undefined ? [run.sampleDate] : Array.from({ length: run.activityDays ?? 90 }, (_, back) => addDays(yesterday, -back));
    for (const day of days) {
      base[options.dateParam] = day;
      first = await get(base);
      if ((recordsOf(first)?.records.length ?? 0) > 0) break;
    }
    const none = (recordsOf(first)?.records.length ?? 0) === 0;
    notes.push(none && days.length > 1 ? `no activity on any day from ${days[0]} back to ${days[days.length - 1]}` : `activity read for ${options.dateParam}=${base[options.dateParam]}`);
  } else {
    first = await get(base);
  }
  const where = { where: path, ...(Object.keys(userParams).length > 0 ? { params: userParams } : {}) };
  const found = recordsOf(first);
  if (found === undefined) {
    return { found: { entity, ...where, records: 0, pages: 1, records_path: undefined, pagination: { type: 'none' }, fields: [], references: [], notes: [`the answer holds no array of records: ${JSON.stringify(first).slice(0, 200)}`] }, records: [], complete: true };
  }
  const paging = await findPaging(get, base, first);
  const pagination = paging.pagination;
  notes.push(...paging.notes);
  const total = totalOf(first);
  const sized = sizedParams(base, pagination, run.perPage);
  const walked = await walkSample(get, sized, first, pagination, run);
  const complete = walked.complete || (total !== undefined && walked.records.length >= total);
  // Customers and transactions hold the code fields: their values are read over the history too.
  // (A list whose paging was not found is whole only by its total.)
  const whole = (walked.complete && pagination.type !== 'none') || (total !== undefined && walked.records.length >= total);
  const history = entity === 'activity' || walked.records.length === 0
    ? undefined
    : await readHistory({ get, sized, pagination, walked: { records: walked.records, pages: walked.pages, whole, pageSize: walked.pageSize }, total, now: run.clock() });
  const records = [...walked.records, ...(history?.added ?? [])];
  const fields = profileRecords(records);
  if (history !== undefined) markValueSets(fields, history);
  const discovery: EntityDiscovery = {
    entity,
    ...where,
    records: walked.records.length,
    pages: walked.pages,
    records_path: found.path,
    pagination,
    ...(total !== undefined ? { total } : {}),
    fields,
    ...(history !== undefined ? { history: history.seen } : {}),
    references: [],
    notes,
  };
  return { found: discovery, records, complete };
}

/** The parameters of every page read: the endpoint's own and the page size, when a parameter sets it. */
function sizedParams(base: Record<string, string>, pagination: PaginationSeen, perPage: number): Record<string, string> {
  const size = pagination.per_page_param ?? pagination.limit_param;
  return size === undefined ? base : { ...base, [size]: String(perPage) };
}

/** The first `run.pages` pages by the paging found (the first page alone when none was), every one with `sized`. */
async function walkSample(get: (params: Record<string, string>) => Promise<unknown>, sized: Record<string, string>, first: unknown, pagination: PaginationSeen, run: RestDiscoverOptions): Promise<{ records: unknown[]; pages: number; complete: boolean; pageSize: number }> {
  const firstRecords = recordsOf(first)?.records ?? [];
  if (pagination.type === 'none') return { records: [...firstRecords], pages: 1, complete: true, pageSize: firstRecords.length };
  const records: unknown[] = [];
  let pages = 0;
  let pageSize = 0;
  let body: unknown;
  let previous: string | undefined;
  let offset = 0;
  for (let index = 0; pages < run.pages; index += 1) {
    let params: Record<string, string> = sized;
    if (pagination.type === 'cursor' && index > 0) {
      const next = at(body, pagination.cursor_path as string);
      if ((typeof next !== 'string' && typeof next !== 'number') || next === '') return { records, pages, complete: true, pageSize };
      params = { ...sized, [pagination.cursor_param as string]: String(next) };
    } else if (pagination.type === 'page') {
      params = { ...sized, [pagination.page_param as string]: String((pagination.first_page ?? 1) + index) };
    } else if (pagination.type === 'offset') {
      params = { ...sized, [pagination.offset_param as string]: String(offset) };
    }
    body = await get(params);
    pages += 1;
    const more = recordsOf(body)?.records ?? [];
    if (index === 0) pageSize = more.length;
    const fingerprint = JSON.stringify(more);
    if (more.length === 0 || fingerprint === previous) return { records, pages, complete: more.length === 0, pageSize };
    previous = fingerprint;
    records.push(...more);
    offset += more.length;
  }
  return { records, pages, complete: false, pageSize };
}
