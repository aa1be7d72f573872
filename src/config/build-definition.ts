/**
 * A validated connector definition → the resolved PartnerDefinition: the defaults applied,
 * durations parsed, secrets collected for redaction. Only called when no error was found.
 */
import { HASH_KEY_ENV, personalData, type PersonalDataPolicy } from '../spec/personal-data.js';
import { ENTITIES } from '../types.js';
import type { Entity, Variant } from '../types.js';
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
import { DEFINITION_DEFAULTS } from './definition-defaults.js';
import { durationMs } from './definition-problems.js';

/** The YAML shape after validation (see the schema for meanings and defaults). */
export interface DefinitionInput {
  partner: string;
  variant: Variant;
  source: RestSourceInput | DbSourceInput | WarehouseSourceInput;
  streams: Partial<Record<Entity, StreamInput>>;
  affiliates?: { map?: Record<string, string>; unmapped?: 'keep' | 'reject' };
  max_reject_ratio?: number;
  personal_data?: PersonalDataPolicy;
  reconcile?: { schedule: string; days?: number; infer_deletes?: boolean };
  delete_guard?: { max_share?: number; min_records?: number };
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
  incremental?: { mode?: string; cursor_field?: string; cursor_format?: 'unix_millis' | 'unix_seconds'; from_param?: string; to_param?: string; lookback?: string; start?: string; date_param?: string; late_days?: number; max_day_shrink?: number };
  mapping?: { fields?: Record<string, FieldRule>; passthrough?: boolean };
  schedule?: string;
  table?: string;
  query?: string;
  cursor_column?: string;
  tiebreak_column?: string;
  date_column?: string;
  view?: string;
  soft_delete?: { column?: string; field?: string; values?: (string | number | boolean)[] };
  deleted_list?: { path: string; since_param: string; id_field: string; records_path?: string };
}

/** A stream's soft_delete resolved: a db/warehouse column or a REST field, with the values meaning deleted when given. */
function softDelete(input: StreamInput['soft_delete']): Pick<StreamBase, 'soft_delete'> {
  const field = input?.column ?? input?.field;
  if (field === undefined) return {};
  return { soft_delete: { field, ...(input?.values ? { values: [...input.values] } : {}) } };
}

const ms = (text: string | undefined, fallback: string): number => durationMs(text ?? fallback) ?? 0;

/** Validated input → the resolved definition, defaults applied. Only called when no error was found. */
export function build(input: DefinitionInput, file: string, secrets: string[], env: NodeJS.ProcessEnv = {}): PartnerDefinition {
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
          ...softDelete(stream.soft_delete),
          ...(stream.deleted_list && entity !== 'activity'
            ? { deleted_list: { path: stream.deleted_list.path, since_param: stream.deleted_list.since_param, id_field: stream.deleted_list.id_field, records_path: stream.deleted_list.records_path ?? stream.records_path ?? d.records_path } }
            : {}),
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
          ...softDelete(stream.soft_delete),
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
          ...softDelete(stream.soft_delete),
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
    ...(input.personal_data ? { personal_data: personalData(input.personal_data, env) } : {}),
    ...(input.reconcile ? { reconcile: { schedule: input.reconcile.schedule, days: input.reconcile.days ?? 3, infer_deletes: input.reconcile.infer_deletes ?? true } } : {}),
    delete_guard: { max_share: input.delete_guard?.max_share ?? d.delete_guard.max_share, min_records: input.delete_guard?.min_records ?? d.delete_guard.min_records },
    secrets: withKey(src.type === 'rest' ? secrets : [...new Set([...secrets, ...urlPasswords(src.url)])], input.personal_data, env),
  };
}

/** The hash key of a policy that hashes is a secret of the definition too (redacted from logs and errors). */
function withKey(secrets: string[], policy: PersonalDataPolicy | undefined, env: NodeJS.ProcessEnv): string[] {
  const key = env[HASH_KEY_ENV];
  return policy && Object.values(policy).includes('hash') && key ? [...secrets, key] : secrets;
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
    ...(input.cursor_format === undefined ? {} : { cursor_format: input.cursor_format }),
    lookback_ms: durationMs(input.lookback ?? d.lookback[entity]) ?? 0,
    start: input.start ?? '',
  };
}

