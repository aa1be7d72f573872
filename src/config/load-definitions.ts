/**
 * Loading the connector definitions of config/partners/*.yaml: parse (YAML, keeping positions),
 * validate against partner-definition.schema.json, resolve `${ENV}` references and secrets, check
 * what the schema cannot say (secure base URL, file name, mapping targets, cron, zones), then apply
 * the defaults and parse durations into the resolved PartnerDefinition. Every error of every file
 * is reported, each with the file, the key path and the line.
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { Duration } from 'luxon';
import { validate as validateCron, validateDetailed as explainCron } from 'node-cron';
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { Node as YamlNode } from 'yaml';
import { ENTITIES, isVariant } from '../types.js';
import type { Entity, Variant } from '../types.js';
import { mappingProblems } from '../pipeline/map-record.js';
import type { FieldRule, Incremental, Pagination, PartnerDefinition, RestAuth, RestSource, RestStream } from './definition.js';
import { definitionSchema, schemaProblems } from './definition-schema.js';
import type { SchemaProblem } from './definition-schema.js';
import { resolveReferences } from './secrets.js';
import { insecureUrlReason } from './secure-url.js';

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
  schedule: { customers: '*/5 * * * *', transactions: '*/5 * * * *', activity: '15 0 * * *' },
  passthrough: true,
  unmapped: 'keep',
} as const;

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
  const report = (path: readonly string[], message: string, at: SchemaProblem['at'] = 'value'): void => {
    errors.push({ file, path: path.join('.'), ...locate(doc.contents, lineCounter, path, at), message });
  };

  const { schema, validate } = definitionSchema();
  if (!validate(data)) for (const p of schemaProblems(validate.errors ?? [], schema)) report(p.path, p.message, p.at);

  const resolved = resolveReferences(data, { schema, env, baseDir: dirname(file) });
  for (const p of resolved.problems) report(p.path, p.message);

  const value = resolved.value as Record<string, unknown>;
  for (const p of semanticProblems(value, stem(file), resolved.unresolved)) report(p.path, p.message, p.at);

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
}

/** Checks the schema cannot express. Written over unchecked data: it runs even when the schema found errors. */
function semanticProblems(data: Record<string, unknown>, fileStem: string, unresolved: ReadonlySet<string>): Problem[] {
  const problems: Problem[] = [];
  const usable = (path: string[], value: unknown): value is string => typeof value === 'string' && !unresolved.has(path.join('.'));

  if (typeof data.partner === 'string' && data.partner !== fileStem) {
    problems.push({ path: ['partner'], message: `must equal the file's base name ${JSON.stringify(fileStem)}, got ${JSON.stringify(data.partner)} (rename the file or the id)` });
  }

  const source = isRecord(data.source) ? data.source : {};
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
  }
  return problems;
}

/** The YAML shape after validation (see the schema for meanings and defaults). */
interface DefinitionInput {
  partner: string;
  variant: Variant;
  source: {
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
  };
  streams: Partial<Record<Entity, StreamInput>>;
  affiliates?: { map?: Record<string, string>; unmapped?: 'keep' | 'reject' };
}

interface StreamInput {
  path: string;
  records_path?: string;
  params?: Record<string, string | number | boolean>;
  pagination?: { type: 'page' | 'cursor' | 'offset'; per_page?: number; page_param?: string; per_page_param?: string; first_page?: number; cursor_param?: string; cursor_path?: string; offset_param?: string; limit_param?: string };
  incremental?: { mode?: string; cursor_field?: string; from_param?: string; to_param?: string; lookback?: string; start?: string; date_param?: string; late_days?: number };
  mapping?: { fields?: Record<string, FieldRule>; passthrough?: boolean };
  schedule?: string;
}

/** Validated input → the resolved definition, defaults applied. Only called when no error was found. */
function build(input: DefinitionInput, file: string, secrets: string[]): PartnerDefinition {
  const d = DEFINITION_DEFAULTS;
  const ms = (text: string | undefined, fallback: string): number => durationMs(text ?? fallback) ?? 0;
  const src = input.source;
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

  const streams: Partial<Record<Entity, RestStream>> = {};
  for (const entity of ENTITIES) {
    const stream = input.streams[entity];
    if (stream === undefined) continue;
    streams[entity] = {
      entity,
      path: stream.path,
      records_path: stream.records_path ?? d.records_path,
      params: Object.fromEntries(Object.entries(stream.params ?? {}).map(([k, v]) => [k, String(v)])),
      pagination: buildPagination(stream.pagination),
      incremental: buildIncremental(entity, stream.incremental ?? {}),
      mapping: { fields: stream.mapping?.fields ?? {}, passthrough: stream.mapping?.passthrough ?? d.passthrough },
      schedule: stream.schedule ?? d.schedule[entity],
    };
  }

  return {
    partner: input.partner,
    variant: input.variant,
    file,
    source,
    streams,
    affiliates: { map: { ...(input.affiliates?.map ?? {}) }, unmapped: input.affiliates?.unmapped ?? d.unmapped },
    secrets,
  };
}

function buildAuth(auth: DefinitionInput['source']['auth']): RestAuth {
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

function buildIncremental(entity: Entity, input: NonNullable<StreamInput['incremental']>): Incremental {
  const d = DEFINITION_DEFAULTS;
  if (entity === 'activity') {
    return { mode: 'daily', date_param: input.date_param ?? d.daily.date_param, late_days: input.late_days ?? d.daily.late_days, start: input.start ?? '' };
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function position(lineCounter: LineCounter, offset: number | undefined): { line?: number; column?: number } {
  if (offset === undefined) return {};
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

/**
 * The line of a key path in the document: the value's node, the key's node for an unknown key, or
 * the nearest existing ancestor for a missing key.
 */
function locate(root: unknown, lineCounter: LineCounter, path: readonly string[], at: SchemaProblem['at']): { line?: number; column?: number } {
  let node: unknown = root;
  let keyNode: unknown;
  let last: unknown = root;
  for (const part of path) {
    keyNode = undefined;
    let next: unknown;
    if (isMap(node)) {
      const pair = node.items.find((item) => String(isScalar(item.key) ? item.key.value : item.key) === part);
      next = pair?.value;
      keyNode = pair?.key;
      if (pair === undefined) break;
    } else if (isSeq(node)) {
      next = node.items[Number(part)];
      if (next === undefined) break;
    } else break;
    node = next;
    last = at === 'key' && keyNode !== undefined ? keyNode : next ?? keyNode;
  }
  const target = (last ?? root) as YamlNode | undefined;
  return position(lineCounter, target?.range?.[0]);
}
