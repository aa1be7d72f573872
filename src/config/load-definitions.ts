/**
 * Loading the connector definitions of config/partners/*.yaml: parse (YAML, keeping positions),
 * validate against partner-definition.schema.json, resolve `${ENV}` references and secrets, check
 * what the schema cannot say (secure base URL, file name, mapping targets, cron, zones, connection
 * URL schemes, SQL queries), then apply the defaults and parse durations into the resolved
 * PartnerDefinition. Every error of every file is reported, each with the file, the key path and
 * the line.
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { Duration, IANAZone } from 'luxon';
import { validate as validateCron, validateDetailed as explainCron } from 'node-cron';
import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { isRecord, locate, position } from './yaml-position.js';
import { ENTITIES, isVariant } from '../types.js';
import type { Entity, Variant } from '../types.js';
import { mappingProblems } from '../pipeline/map-record.js';
import type {
  DbSource,
  DbStream,
  FieldRule,
  Incremental,
  Pagination,
  PartnerDefinition,
  RestAuth,
  RestSource,
  RestStream,
  SourceDefinition,
  StreamBase,
  StreamDefinition,
  WarehouseSource,
  WarehouseStream,
} from './definition.js';
import { definitionSchema, schemaProblems } from './definition-schema.js';
import type { SchemaProblem } from './definition-schema.js';
import { resolveReferences } from './secrets.js';
import { insecureUrlReason } from './secure-url.js';
import { scanQuery } from './query-scan.js';

export interface DefinitionError {
  /** The definition file, as found under the folder given. */
  file: string;
  /** Key path inside the file (`streams.customers.pagination.per_page`); '' for the file as a whole. */
  path: string;
  /** 1-based line and column of the key or value concerned, when known. */
  line?: number;
  column?: number;
  message: string;
}

export interface LoadedDefinitions {
  /** The valid definitions, by partner id. */
  definitions: PartnerDefinition[];
  /** Every error of every file; a file with errors yields no definition. */
  errors: DefinitionError[];
}

export interface LoadedDefinition {
  definition?: PartnerDefinition;
  errors: DefinitionError[];
}

/** Defaults of a definition, in one place; the schema states the same ones (checked by a test). */
export const DEFINITION_DEFAULTS = {
  requests_per_minute: 1000,
  timeout: 'PT30S',
  retries: { max: 5, min_delay: 'PT0.5S', max_delay: 'PT30S', max_retry_after: 'PT2M' },
  run_budget: 'PT15M',
  token_url: '/oauth/token',
  api_key_header: 'X-API-Key',
  records_path: 'data',
  per_page: 100,
  page: { page_param: 'page', per_page_param: 'per_page', first_page: 1 },
  cursor: { per_page_param: 'per_page', cursor_param: 'cursor', cursor_path: 'meta.next_cursor' },
  offset: { offset_param: 'offset', limit_param: 'limit' },
  lookback: { customers: 'PT10M', transactions: 'P3D' },
  daily: { date_param: 'date', late_days: 2 },
  // Every 4 minutes: a record is then loaded within 4 minutes plus one run, inside the spec's 5 (§1).
  schedule: { customers: '*/4 * * * *', transactions: '*/4 * * * *', activity: '15 0 * * *' },
  passthrough: true,
  unmapped: 'keep',
  max_reject_ratio: 0.5,
  db: {
    page_size: 5000,
    safety_lag: 'PT5S',
    timezone: 'UTC',
    statement_timeout: 'PT5M',
    run_budget: 'PT15M',
    lookback: { customers: 'PT10M', transactions: 'PT10M' },
    /** A transactions stream whose cursor_column is the column transaction_date comes from has no change column. */
    lookback_without_change_column: 'P3D',
    late_days: 2,
  },
  warehouse: {
    statement_timeout: 'PT5M',
    days_per_query: 1,
    timezone: 'UTC',
    run_budget: 'PT15M',
    late_days: 2,
    schedule: '15 0 * * *',
  },
} as const;

/** The named parameters a db stream's query may use: cursor streams (customers, transactions) and daily streams (activity). */
export const QUERY_PARAMETERS = {
  cursor: ['from', 'to', 'cursor', 'id', 'limit'],
  daily: ['date_from', 'date_to'],
} as const;

/** The URL schemes each database client accepts. */
export const URL_SCHEMES: Record<DbSource['client'], readonly string[]> = {
  mysql: ['mysql', 'mariadb'],
  postgres: ['postgres', 'postgresql'],
  sqlite: ['sqlite'],
};

const DEFINITION_FILE = /\.ya?ml$/i;

/** `config/partners/acme.yaml: streams.customers.pagination.per_page (line 14): must be <= 500 (spec §4), got 1000` */
export function formatDefinitionError(error: DefinitionError): string {
  return `${error.file}: ${error.path === '' ? '(file)' : error.path}${error.line === undefined ? '' : ` (line ${error.line})`}: ${error.message}`;
}

/** Every `*.yaml` / `*.yml` definition in `dir` (other files are ignored). */
export async function loadDefinitions(dir: string, env: NodeJS.ProcessEnv): Promise<LoadedDefinitions> {
  let names: string[];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    names = entries.filter((e) => (e.isFile() || e.isSymbolicLink()) && DEFINITION_FILE.test(e.name)).map((e) => e.name);
  } catch (error) {
    return { definitions: [], errors: [{ file: dir, path: '', message: `cannot read the definitions folder: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` }] };
  }
  names.sort();
  const definitions: PartnerDefinition[] = [];
  const errors: DefinitionError[] = [];
  const fileOf = new Map<string, string>();
  for (const name of names) {
    const file = join(dir, name);
    const result = await loadDefinition(file, env);
    errors.push(...result.errors);
    const id = stem(file);
    const other = fileOf.get(id);
    if (other !== undefined) {
      errors.push({ file, path: '', message: `partner ${id} is also defined in ${other}: one file per partner` });
      continue;
    }
    fileOf.set(id, file);
    if (result.definition !== undefined) definitions.push(result.definition);
  }
  definitions.sort((a, b) => (a.partner < b.partner ? -1 : a.partner > b.partner ? 1 : 0));
  return { definitions, errors };
}

/** One definition file: the resolved definition, or every error found in it. */
export async function loadDefinition(file: string, env: NodeJS.ProcessEnv): Promise<LoadedDefinition> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { errors: [{ file, path: '', message: `cannot read the file: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` }] };
  }

  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      errors: doc.errors.map((e) => ({ file, path: '', ...position(lineCounter, e.pos[0]), message: `YAML syntax: ${e.message.split('\n')[0] ?? e.message}` })),
    };
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  if (!isRecord(data)) {
    return { errors: [{ file, path: '', line: 1, column: 1, message: 'must be a mapping with the keys partner, variant, source and streams' }] };
  }

  const errors: DefinitionError[] = [];
  const report = (path: readonly string[], message: string, at: SchemaProblem['at'] = 'value', within?: Within): void => {
    const place = (within && locateWithin(doc.contents, lineCounter, text, path, within)) ?? locate(doc.contents, lineCounter, path, at);
    errors.push({ file, path: path.join('.'), ...place, message });
  };

  const { schema, validate } = definitionSchema();
  if (!validate(data)) for (const p of schemaProblems(validate.errors ?? [], schema)) report(p.path, p.message, p.at);

  const resolved = resolveReferences(data, { schema, env, baseDir: dirname(file) });
  for (const p of resolved.problems) report(p.path, p.message);

  const value = resolved.value as Record<string, unknown>;
  for (const p of semanticProblems(value, data, stem(file), resolved.unresolved)) report(p.path, p.message, p.at, p.within);

  if (errors.length > 0) return { errors: errors.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity)) };
  return { definition: build(value as unknown as DefinitionInput, file, resolved.secrets), errors: [] };
}

/** A duration of the schema's form (PT10M, P3D, PT0.5S) in milliseconds; undefined when not one. */
export function durationMs(text: string): number | undefined {
  if (!/^P(?=\d|T\d)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/.test(text)) return undefined;
  const duration = Duration.fromISO(text);
  return duration.isValid ? Math.round(duration.as('milliseconds')) : undefined;
}

interface Problem {
  path: string[];
  message: string;
  at?: SchemaProblem['at'];
  /** A place inside the string value at path (a query's `;`): its line when the value is written so that it can be found. */
  within?: Within;
}

/** A character offset in a string value, and the value it was found in (to check it is the one written in the file). */
interface Within {
  text: string;
  offset: number;
}

/** Checks the schema cannot express. Written over unchecked data: it runs even when the schema found errors. */
function semanticProblems(data: Record<string, unknown>, raw: Record<string, unknown>, fileStem: string, unresolved: ReadonlySet<string>): Problem[] {
  const problems: Problem[] = [];
  const usable = (path: string[], value: unknown): value is string => typeof value === 'string' && !unresolved.has(path.join('.'));

  if (typeof data.partner === 'string' && data.partner !== fileStem) {
    problems.push({ path: ['partner'], message: `must equal the file's base name ${JSON.stringify(fileStem)}, got ${JSON.stringify(data.partner)} (rename the file or the id)` });
  }

  const source = isRecord(data.source) ? data.source : {};
  const rawSource = isRecord(raw.source) ? raw.source : {};
  if (source.type === 'db' || source.type === 'warehouse') {
    problems.push(...databaseSourceProblems(source, rawSource, usable));
  } else {
    problems.push(...restSourceProblems(source, usable));
  }

  const reconcileSchedule = isRecord(data.reconcile) ? data.reconcile.schedule : undefined;
  if (usable(['reconcile', 'schedule'], reconcileSchedule) && !validateCron(reconcileSchedule)) {
    problems.push({ path: ['reconcile', 'schedule'], message: `not a valid cron expression (5 or 6 fields, UTC): ${explainCron(reconcileSchedule).errors.map((e) => e.message).join('; ') || JSON.stringify(reconcileSchedule)}` });
  }
  const variant: Variant | undefined = isVariant(data.variant) ? data.variant : undefined;
  const streams = isRecord(data.streams) ? data.streams : {};
  for (const entity of ENTITIES) {
    const stream = streams[entity];
    if (!isRecord(stream)) continue;
    const schedule = stream.schedule;
    if (usable(['streams', entity, 'schedule'], schedule) && !validateCron(schedule)) {
      const details = explainCron(schedule).errors.map((e) => e.message).join('; ');
      problems.push({ path: ['streams', entity, 'schedule'], message: `not a valid cron expression (5 or 6 fields, UTC): ${details || JSON.stringify(schedule)}` });
    }
    const mapping = isRecord(stream.mapping) ? stream.mapping : {};
    if (variant !== undefined && isRecord(mapping.fields)) {
      for (const p of mappingProblems(variant, entity, mapping.fields)) {
        problems.push({ path: ['streams', entity, 'mapping', 'fields', p.field, ...p.key], message: p.message, at: p.key.length === 0 ? 'key' : 'value' });
      }
    }
    if (source.type === 'db') problems.push(...dbStreamProblems(entity, stream, usable));
    if ((source.type === 'db' || source.type === 'warehouse') && typeof source.client === 'string' && Object.hasOwn(IDENTIFIER_MAX_LENGTH, source.client)) {
      const max = IDENTIFIER_MAX_LENGTH[source.client as DbSource['client']];
      for (const key of ['table', 'view', 'cursor_column', 'tiebreak_column', 'date_column']) {
        const name = stream[key];
        if (typeof name === 'string' && name.split('.').some((part) => part.length > max)) {
          problems.push({ path: ['streams', entity, key], message: `a name may have at most ${max} characters on ${String(source.client)}` });
        }
      }
    }
  }
  return problems;
}

/** The longest identifier (each part of schema.name) each client's server accepts. */
const IDENTIFIER_MAX_LENGTH: Record<DbSource['client'], number> = { mysql: 64, postgres: 63, sqlite: 128 };

type Usable = (path: string[], value: unknown) => value is string;

function restSourceProblems(source: Record<string, unknown>, usable: Usable): Problem[] {
  const problems: Problem[] = [];
  if (usable(['source', 'base_url'], source.base_url)) {
    const reason = insecureUrlReason(source.base_url);
    if (reason !== undefined) problems.push({ path: ['source', 'base_url'], message: reason });
  }
  const auth = isRecord(source.auth) ? source.auth : {};
  if (usable(['source', 'auth', 'token_url'], auth.token_url)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(auth.token_url)) {
      const reason = insecureUrlReason(auth.token_url);
      if (reason !== undefined) problems.push({ path: ['source', 'auth', 'token_url'], message: reason });
    } else if (!auth.token_url.startsWith('/')) {
      problems.push({ path: ['source', 'auth', 'token_url'], message: `must be a path starting with / (joined to base_url) or an absolute https:// URL, got ${JSON.stringify(auth.token_url)}` });
    }
  }
  const retries = isRecord(source.retries) ? source.retries : {};
  const minDelay = durationMs(typeof retries.min_delay === 'string' ? retries.min_delay : DEFINITION_DEFAULTS.retries.min_delay);
  const maxDelay = durationMs(typeof retries.max_delay === 'string' ? retries.max_delay : DEFINITION_DEFAULTS.retries.max_delay);
  if (minDelay !== undefined && maxDelay !== undefined && minDelay > maxDelay) {
    problems.push({ path: ['source', 'retries', 'min_delay'], message: `must not be longer than max_delay (${String(retries.max_delay ?? DEFINITION_DEFAULTS.retries.max_delay)})` });
  }
  return problems;
}

/** A db or warehouse source: its zone, and a connection URL that fits the client (the URL is a secret: never shown). */
function databaseSourceProblems(source: Record<string, unknown>, rawSource: Record<string, unknown>, usable: Usable): Problem[] {
  const problems: Problem[] = [];
  if (usable(['source', 'timezone'], source.timezone) && !IANAZone.isValidZone(source.timezone)) {
    problems.push({ path: ['source', 'timezone'], message: `unknown time zone ${JSON.stringify(source.timezone)}: use an IANA name such as Europe/Malta, or UTC` });
  }
  const client = source.client;
  // Both url and url_file, or neither: the schema says so, and url is not resolved.
  const given = Object.hasOwn(rawSource, 'url') !== Object.hasOwn(rawSource, 'url_file');
  if (given && typeof client === 'string' && Object.hasOwn(URL_SCHEMES, client) && usable(['source', 'url'], source.url)) {
    const reason = connectionUrlProblem(client as DbSource['client'], source.url);
    // The resolved value is always `url`; the file says which key it came from.
    const key = Object.hasOwn(rawSource, 'url') ? 'url' : 'url_file';
    if (reason !== undefined) problems.push({ path: ['source', key], message: reason });
  }
  return problems;
}

/** Why a connection URL does not fit its client, naming its scheme at most (the rest may hold a password). */
export function connectionUrlProblem(client: DbSource['client'], url: string): string | undefined {
  const schemes = URL_SCHEMES[client];
  const forms = client === 'sqlite' ? 'sqlite:path/to/file.sqlite' : schemes.map((s) => `${s}://`).join(' or ');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  // Only a known scheme is named: in "user:password@host" the part before the colon is no scheme.
  const known = Object.values(URL_SCHEMES).flat();
  if (scheme === undefined || !known.includes(scheme)) return `must be a connection URL for client ${client} (${forms}); the value is a secret, not shown`;
  if (!schemes.includes(scheme)) return `the URL's scheme ${scheme}: does not fit client ${client}: use ${forms}`;
  if (client === 'sqlite') {
    return /^sqlite:(\/\/)?\S/i.test(url) ? undefined : 'a sqlite: URL needs a file path, e.g. sqlite:data/replica.sqlite';
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `is not a valid ${scheme}: URL (percent-encode special characters of the password, e.g. @ as %40); the value is a secret, not shown`;
  }
  if (parsed.hostname === '') return `a ${scheme}: URL needs a host, e.g. ${scheme}://user:password@host/db; the value is a secret, not shown`;
  return undefined;
}

/** A db stream: its query (one SELECT, known parameters) and its keyset columns. */
function dbStreamProblems(entity: Entity, stream: Record<string, unknown>, usable: Usable): Problem[] {
  const problems: Problem[] = [];
  const queryPath = ['streams', entity, 'query'];
  const query = stream.query;
  if (usable(queryPath, query)) {
    const scanned = scanQuery(query);
    for (const p of scanned.problems) problems.push({ path: queryPath, message: p.message, within: { text: query, offset: p.offset } });
    const allowed: readonly string[] = entity === 'activity' ? QUERY_PARAMETERS.daily : QUERY_PARAMETERS.cursor;
    const reported = new Set<string>();
    for (const { name, offset } of scanned.parameters) {
      if (allowed.includes(name) || reported.has(name)) continue;
      reported.add(name);
      problems.push({
        path: queryPath,
        message: `unknown parameter :${name}; a${entity === 'activity' ? 'n' : ''} ${entity} query may use ${allowed.map((a) => ':' + a).join(', ')}`,
        within: { text: query, offset },
      });
    }
    for (const { name, offset } of scanned.hidden) {
      if (!allowed.includes(name) || reported.has(`hidden ${name}`)) continue;
      reported.add(`hidden ${name}`);
      problems.push({ path: queryPath, message: `:${name} inside quotes or a comment would be bound there too (the binder does not see quotes): remove it`, within: { text: query, offset } });
    }
    const used = new Set(scanned.parameters.map((p) => p.name));
    const missing = allowed.filter((name) => !used.has(name));
    if (missing.length > 0) {
      const list = (names: readonly string[]): string => names.map((m) => ':' + m).join(', ');
      problems.push({
        path: queryPath,
        message:
          entity === 'activity'
            ? `must select the days read with :date_from and :date_to (UTC days, both included); missing ${list(missing)}`
            : `must filter, order and page itself with ${list(allowed)}: WHERE c >= :from AND c < :to AND c >= :cursor AND (c > :cursor OR (c = :cursor AND id > :id)) ORDER BY c, id LIMIT :limit; missing ${list(missing)}`,
      });
    }
  }
  if (entity !== 'activity' && typeof stream.cursor_column === 'string' && stream.cursor_column === stream.tiebreak_column) {
    problems.push({
      path: ['streams', entity, 'tiebreak_column'],
      message: 'must differ from cursor_column: a unique column (the primary key) orders the rows that share a cursor value',
    });
  }
  return problems;
}

/** The YAML shape after validation (see the schema for meanings and defaults). */
interface DefinitionInput {
  partner: string;
  variant: Variant;
  source: RestSourceInput | DbSourceInput | WarehouseSourceInput;
  streams: Partial<Record<Entity, StreamInput>>;
  affiliates?: { map?: Record<string, string>; unmapped?: 'keep' | 'reject' };
  max_reject_ratio?: number;
  reconcile?: { schedule: string; days?: number };
}

interface RestSourceInput {
  type: 'rest';
  base_url: string;
  auth:
    | { type: 'oauth2_client_credentials'; token_url?: string; client_id: string; client_secret: string; scope?: string }
    | { type: 'bearer'; token: string }
    | { type: 'api_key'; header?: string; key: string };
  rate_limit?: { requests_per_minute?: number };
  timeout?: string;
  retries?: { max?: number; min_delay?: string; max_delay?: string; max_retry_after?: string };
  run_budget?: string;
}

/** `url` is resolved (from `url` or `url_file`) by then. */
interface DbSourceInput {
  type: 'db';
  client: DbSource['client'];
  url: string;
  page_size?: number;
  safety_lag?: string;
  timezone?: string;
  statement_timeout?: string;
  run_budget?: string;
}

interface WarehouseSourceInput {
  type: 'warehouse';
  client: WarehouseSource['client'];
  url: string;
  statement_timeout?: string;
  days_per_query?: number;
  timezone?: string;
  run_budget?: string;
}

/** Every kind's stream keys; the schema allowed only those of the source's kind. */
interface StreamInput {
  path?: string;
  records_path?: string;
  params?: Record<string, string | number | boolean>;
  pagination?: { type: 'page' | 'cursor' | 'offset'; per_page?: number; page_param?: string; per_page_param?: string; first_page?: number; cursor_param?: string; cursor_path?: string; offset_param?: string; limit_param?: string };
  incremental?: { mode?: string; cursor_field?: string; from_param?: string; to_param?: string; lookback?: string; start?: string; date_param?: string; late_days?: number; max_day_shrink?: number };
  mapping?: { fields?: Record<string, FieldRule>; passthrough?: boolean };
  schedule?: string;
  table?: string;
  query?: string;
  cursor_column?: string;
  tiebreak_column?: string;
  date_column?: string;
  view?: string;
}

const ms = (text: string | undefined, fallback: string): number => durationMs(text ?? fallback) ?? 0;

/** Validated input → the resolved definition, defaults applied. Only called when no error was found. */
function build(input: DefinitionInput, file: string, secrets: string[]): PartnerDefinition {
  const d = DEFINITION_DEFAULTS;
  const src = input.source;
  const source = buildSource(src);

  const streams: Partial<Record<Entity, StreamDefinition>> = {};
  for (const entity of ENTITIES) {
    const stream = input.streams[entity];
    if (stream === undefined) continue;
    const mapping = { fields: stream.mapping?.fields ?? {}, passthrough: stream.mapping?.passthrough ?? d.passthrough };
    const incremental = stream.incremental ?? {};
    switch (src.type) {
      case 'rest': {
        const rest: RestStream = {
          entity,
          path: stream.path ?? '',
          records_path: stream.records_path ?? d.records_path,
          params: Object.fromEntries(Object.entries(stream.params ?? {}).map(([k, v]) => [k, String(v)])),
          pagination: buildPagination(stream.pagination),
          incremental: buildIncremental(entity, incremental),
          mapping,
          schedule: stream.schedule ?? d.schedule[entity],
        };
        streams[entity] = rest;
        break;
      }
      case 'db': {
        const base: StreamBase = { entity, incremental: buildDbIncremental(entity, stream, mapping), mapping, schedule: stream.schedule ?? d.schedule[entity] };
        const db: DbStream = {
          ...base,
          ...(stream.table === undefined ? {} : { table: stream.table }),
          ...(stream.query === undefined ? {} : { query: stream.query }),
          ...(stream.cursor_column === undefined ? {} : { cursor_column: stream.cursor_column }),
          ...(stream.tiebreak_column === undefined ? {} : { tiebreak_column: stream.tiebreak_column }),
          ...(stream.date_column === undefined ? {} : { date_column: stream.date_column }),
        };
        streams[entity] = db;
        break;
      }
      case 'warehouse': {
        const warehouse: WarehouseStream = {
          entity,
          incremental: { mode: 'daily', late_days: incremental.late_days ?? d.warehouse.late_days, start: incremental.start ?? '', ...shrink(incremental) },
          mapping,
          schedule: stream.schedule ?? d.warehouse.schedule,
          view: stream.view ?? '',
          date_column: stream.date_column ?? '',
        };
        streams[entity] = warehouse;
        break;
      }
    }
  }

  return {
    partner: input.partner,
    variant: input.variant,
    file,
    source,
    streams,
    affiliates: { map: { ...(input.affiliates?.map ?? {}) }, unmapped: input.affiliates?.unmapped ?? d.unmapped },
    max_reject_ratio: input.max_reject_ratio ?? d.max_reject_ratio,
    ...(input.reconcile ? { reconcile: { schedule: input.reconcile.schedule, days: input.reconcile.days ?? 3 } } : {}),
    secrets: src.type === 'rest' ? secrets : [...new Set([...secrets, ...urlPasswords(src.url)])],
  };
}

function buildSource(src: DefinitionInput['source']): SourceDefinition {
  const d = DEFINITION_DEFAULTS;
  switch (src.type) {
    case 'db': {
      const source: DbSource = {
        type: 'db',
        client: src.client,
        url: src.url,
        page_size: src.page_size ?? d.db.page_size,
        safety_lag_ms: ms(src.safety_lag, d.db.safety_lag),
        timezone: src.timezone ?? d.db.timezone,
        statement_timeout_ms: ms(src.statement_timeout, d.db.statement_timeout),
        run_budget_ms: ms(src.run_budget, d.db.run_budget),
      };
      return source;
    }
    case 'warehouse': {
      const source: WarehouseSource = {
        type: 'warehouse',
        client: src.client,
        url: src.url,
        statement_timeout_ms: ms(src.statement_timeout, d.warehouse.statement_timeout),
        days_per_query: src.days_per_query ?? d.warehouse.days_per_query,
        timezone: src.timezone ?? d.warehouse.timezone,
        run_budget_ms: ms(src.run_budget, d.warehouse.run_budget),
      };
      return source;
    }
    default: {
      const retries = src.retries ?? {};
      const source: RestSource = {
        type: 'rest',
        base_url: src.base_url,
        auth: buildAuth(src.auth),
        requests_per_minute: src.rate_limit?.requests_per_minute ?? d.requests_per_minute,
        timeout_ms: ms(src.timeout, d.timeout),
        retries: {
          max: retries.max ?? d.retries.max,
          min_delay_ms: ms(retries.min_delay, d.retries.min_delay),
          max_delay_ms: ms(retries.max_delay, d.retries.max_delay),
          max_retry_after_ms: ms(retries.max_retry_after, d.retries.max_retry_after),
        },
        run_budget_ms: ms(src.run_budget, d.run_budget),
      };
      return source;
    }
  }
}

/**
 * A db stream's incremental: cursor on cursor_column (customers, transactions) or whole days
 * (activity). A transactions stream without a change column (its cursor_column is the column
 * transaction_date comes from) defaults to lookback P3D, so late status changes are read again.
 */
function buildDbIncremental(entity: Entity, stream: StreamInput, mapping: { fields: Record<string, FieldRule>; passthrough: boolean }): Incremental {
  const d = DEFINITION_DEFAULTS;
  const input = stream.incremental ?? {};
  if (entity === 'activity') return { mode: 'daily', late_days: input.late_days ?? d.db.late_days, start: input.start ?? '', ...shrink(input) };
  const cursorColumn = stream.cursor_column ?? '';
  const fallback = entity === 'transactions' && !hasChangeColumn(cursorColumn, mapping) ? d.db.lookback_without_change_column : d.db.lookback[entity];
  return { mode: 'cursor', cursor_field: cursorColumn, lookback_ms: ms(input.lookback, fallback), start: input.start ?? '' };
}

/** False when a transactions stream's cursor column is the column its transaction_date is mapped from. */
export function hasChangeColumn(cursorColumn: string, mapping: { fields: Record<string, FieldRule>; passthrough: boolean }): boolean {
  const rule = mapping.fields.transaction_date;
  let from: string | undefined;
  if (typeof rule === 'string') from = rule;
  else if (rule !== undefined) from = Object.hasOwn(rule, 'const') ? undefined : (rule.from ?? 'transaction_date');
  else if (mapping.passthrough) from = 'transaction_date';
  return from === undefined || from !== cursorColumn;
}

/** The password of a connection URL, as written and decoded: redacted on its own too (a driver may print it alone). */
function urlPasswords(url: string): string[] {
  try {
    const password = new URL(url).password;
    if (password === '') return [];
    let decoded = password;
    try {
      decoded = decodeURIComponent(password);
    } catch {
      // not percent-encoded text: the raw form only
    }
    return [...new Set([password, decoded])];
  } catch {
    return [];
  }
}

function buildAuth(auth: RestSourceInput['auth']): RestAuth {
  switch (auth.type) {
    case 'oauth2_client_credentials':
      return {
        type: auth.type,
        token_url: auth.token_url ?? DEFINITION_DEFAULTS.token_url,
        client_id: auth.client_id,
        client_secret: auth.client_secret,
        ...(auth.scope === undefined ? {} : { scope: auth.scope }),
      };
    case 'bearer':
      return { type: auth.type, token: auth.token };
    case 'api_key':
      return { type: auth.type, header: auth.header ?? DEFINITION_DEFAULTS.api_key_header, key: auth.key };
  }
}

function buildPagination(input: StreamInput['pagination']): Pagination {
  const d = DEFINITION_DEFAULTS;
  const per_page = input?.per_page ?? d.per_page;
  switch (input?.type ?? 'page') {
    case 'cursor':
      return {
        type: 'cursor',
        per_page,
        per_page_param: input?.per_page_param ?? d.cursor.per_page_param,
        cursor_param: input?.cursor_param ?? d.cursor.cursor_param,
        cursor_path: input?.cursor_path ?? d.cursor.cursor_path,
      };
    case 'offset':
      return { type: 'offset', per_page, offset_param: input?.offset_param ?? d.offset.offset_param, limit_param: input?.limit_param ?? d.offset.limit_param };
    default:
      return {
        type: 'page',
        per_page,
        page_param: input?.page_param ?? d.page.page_param,
        per_page_param: input?.per_page_param ?? d.page.per_page_param,
        first_page: input?.first_page ?? d.page.first_page,
      };
  }
}

/** `max_day_shrink` when given; absent, jobs/day-guard.ts applies its default (0.5). */
function shrink(input: { max_day_shrink?: number }): { max_day_shrink?: number } {
  return input.max_day_shrink === undefined ? {} : { max_day_shrink: input.max_day_shrink };
}

function buildIncremental(entity: Entity, input: NonNullable<StreamInput['incremental']>): Incremental {
  const d = DEFINITION_DEFAULTS;
  if (entity === 'activity') {
    return { mode: 'daily', date_param: input.date_param ?? d.daily.date_param, late_days: input.late_days ?? d.daily.late_days, start: input.start ?? '', ...shrink(input) };
  }
  return {
    mode: 'cursor',
    cursor_field: input.cursor_field ?? '',
    from_param: input.from_param ?? '',
    ...(input.to_param === undefined ? {} : { to_param: input.to_param }),
    lookback_ms: durationMs(input.lookback ?? d.lookback[entity]) ?? 0,
    start: input.start ?? '',
  };
}

function stem(file: string): string {
  return basename(file, extname(file));
}




/**
 * The line and column of a place inside a string value, when the value is written so that it can
 * be found: a literal block (`|`), or a plain or quoted scalar written on one line without escapes.
 * Undefined otherwise (the value's own position is used then).
 */
function locateWithin(root: unknown, lineCounter: LineCounter, source: string, path: readonly string[], within: Within): { line: number; column: number } | undefined {
  let node: unknown = root;
  for (const part of path) {
    if (!isMap(node)) return undefined;
    node = node.items.find((item) => String(isScalar(item.key) ? item.key.value : item.key) === part)?.value;
  }
  if (!isScalar(node) || node.value !== within.text || !node.range) return undefined;
  const { text, offset } = within;
  const [start, end] = node.range;
  if (node.type === 'BLOCK_LITERAL') {
    const before = text.slice(0, offset);
    const index = before.split('\n').length - 1;
    const line = lineCounter.linePos(start).line + 1 + index;
    const lineStart = lineCounter.lineStarts[line - 1];
    if (lineStart === undefined) return undefined;
    const written = source.slice(lineStart).split(/\r?\n/)[0] ?? '';
    const valueLine = text.split('\n')[index] ?? '';
    if (!written.endsWith(valueLine)) return undefined;
    return { line, column: written.length - valueLine.length + (offset - (before.lastIndexOf('\n') + 1)) + 1 };
  }
  const inner = node.type === 'PLAIN' ? source.slice(start, end) : node.type === 'QUOTE_SINGLE' || node.type === 'QUOTE_DOUBLE' ? source.slice(start + 1, end - 1) : undefined;
  if (inner !== text) return undefined;
  const { line, col } = lineCounter.linePos(start + (node.type === 'PLAIN' ? 0 : 1) + offset);
  return { line, column: col };
}
