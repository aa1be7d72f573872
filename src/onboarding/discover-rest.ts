/**
 * Discovery of a partner REST API: the first pages of each list endpoint, read with the
 * connector's own client (auth, rate limit, retries), and what they hold: where the records are,
 * how the endpoint pages (meta.next_cursor, page numbers), its total when given, and the value
 * profile of every field.
 */
import { createRestSource } from '../../connectors/rest/source.js';
import { addDays, utcDay } from '../../jobs/windows.js';
import type { Logger } from '../log.js';
import type { Entity } from '../types.js';
import type { EntityDiscovery, PaginationSeen } from './discover.js';
import { profileRecords } from './profile.js';
import { restSource, type RestOptions } from './source-options.js';

export interface RestDiscoverOptions {
  pages: number;
  perPage: number;
  clock: () => Date;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** How many days back from yesterday to look for a day with activity. */
  activityDays?: number;
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
  for (const entity of ['customers', 'transactions', 'activity'] as Entity[]) {
    const path = options.paths[entity];
    if (path === undefined) continue;
    out.push(await discoverEndpoint(client.getJson, entity, path, options, run));
  }
  return out;
}

async function discoverEndpoint(
  getJson: (path: string, params: Record<string, string>) => Promise<unknown>,
  entity: Entity,
  path: string,
  options: RestOptions,
  run: RestDiscoverOptions,
): Promise<EntityDiscovery> {
  const notes: string[] = [];
  const base: Record<string, string> = { per_page: String(run.perPage) };
  let first: unknown;
  if (entity === 'activity') {
    // A day's rows: yesterday, else the days before it, until a day has rows.
    const yesterday = addDays(utcDay(run.clock()), -1);
    const days = run.activityDays ?? 7;
    for (let back = 0; back < days; back++) {
      const day = addDays(yesterday, -back);
      base[options.dateParam] = day;
      first = await getJson(path, base);
      if ((recordsOf(first)?.records.length ?? 0) > 0) break;
    }
    notes.push(`activity read for ${options.dateParam}=${base[options.dateParam]}`);
  } else {
    first = await getJson(path, base);
  }
  const found = recordsOf(first);
  if (found === undefined) {
    return { entity, where: path, records: 0, pages: 1, records_path: undefined, pagination: { type: 'none' }, fields: [], notes: [`the answer holds no array of records: ${JSON.stringify(first).slice(0, 200)}`] };
  }
  const pagination = paginationOf(first);
  const total = totalOf(first);
  const records = [...found.records];
  let body = first;
  let pages = 1;
  let page = 1;
  while (pages < run.pages) {
    let params: Record<string, string>;
    if (pagination.type === 'cursor') {
      const next = at(body, pagination.cursor_path as string);
      if (typeof next !== 'string' || next === '') break;
      params = { per_page: String(run.perPage), cursor: next };
    } else if (pagination.type === 'page') {
      if (total !== undefined && page * run.perPage >= total) break;
      page += 1;
      params = { ...base, page: String(page) };
    } else break;
    body = await getJson(path, params);
    const more = recordsOf(body)?.records ?? [];
    pages += 1;
    if (more.length === 0) break;
    records.push(...more);
  }
  return {
    entity,
    where: path,
    records: records.length,
    pages,
    records_path: found.path,
    pagination,
    ...(total !== undefined ? { total } : {}),
    fields: profileRecords(records),
    notes,
  };
}
