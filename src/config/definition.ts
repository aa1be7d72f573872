/**
 * A partner's connector definition (config/partners/<partner>.yaml), as the code sees it after
 * loading: validated against its JSON Schema, `${ENV}` / `*_FILE` secrets resolved, defaults
 * applied, durations parsed. The YAML shape is the same, in snake_case.
 */
import type { PersonalData } from '../spec/personal-data.js';
import type { Entity, Variant } from '../types.js';

/** How one spec field is produced from a source record. A bare string is a rename (a dot path). */
export type FieldRule =
  | string
  | {
      /** Dot path in the source record (`a.b.0.c`). */
      from?: string;
      /** A constant value instead of a source field. */
      const?: unknown;
      /** Parse a date-time or date with luxon into UTC ISO 8601 (or YYYY-MM-DD for date fields). */
      datetime?: {
        /** `iso` (default), `sql`, `rfc2822`, `http`, `unix_seconds`, `unix_millis`, or a luxon format like `dd/MM/yyyy HH:mm`. */
        format?: string;
        /** IANA zone the source writes local times in (default UTC). */
        zone?: string;
      };
      /** Source amount in minor units (cents): divide by 10^minor_units. */
      minor_units?: number;
      /** Multiply by this exact decimal factor (1000 for an account size kept in thousands); number or decimal text. */
      multiply?: number | string;
      /** Source value → spec value (status, transaction types); a value not listed takes `default`, else is rejected. */
      map?: Record<string, unknown>;
      /** Upper- or lower-case a text value (after map). */
      case?: 'upper' | 'lower';
      /** Convert numeric strings to numbers ("12.50" → 12.5). */
      number?: boolean;
      /** Value when the source field is absent or null (and, with a map, for a value the map does not list). */
      default?: unknown;
    };

export interface StreamMapping {
  /** Spec field → rule. Fields not listed are copied when the source has a field of the same spec name (unless `passthrough: false`). */
  fields: Record<string, FieldRule>;
  passthrough: boolean;
}

export type Pagination =
  | { type: 'page'; per_page: number; page_param: string; per_page_param: string; first_page: number }
  | { type: 'cursor'; per_page: number; per_page_param: string; cursor_param: string; cursor_path: string }
  | { type: 'offset'; per_page: number; offset_param: string; limit_param: string };

/** How a REST change field is written: epoch milliseconds or seconds (absent: ISO 8601 text). */
export type CursorFormat = 'unix_millis' | 'unix_seconds';

/** How a stream is incremental. */
export type Incremental =
  /**
   * By a source change field (customers' last_modified_date, a transaction's updated_at): from cursor − lookback.
   * `start`: where the first run starts, the ISO date-time or date as written; '' when not given (the sync job's default, 30 days back).
   */
  | {
      mode: 'cursor';
      cursor_field: string;
      /** REST only: the query parameters of the window's bounds. */
      from_param?: string;
      to_param?: string;
      /**
       * REST only: how the change field is written, and so how the window's bounds are sent: ISO
       * 8601 text (absent), or a number of milliseconds or seconds since 1970-01-01T00:00:00Z.
       */
      cursor_format?: CursorFormat;
      lookback_ms: number;
      start: string;
    }
  /**
   * Whole UTC days, the previous closed day and `late_days` before it; each pulled day replaces the stored day.
   * `start`: the first day of the first run (YYYY-MM-DD) as written; '' when not given.
   * `max_day_shrink`: the share of a stored activity day's rows a replacement may remove (1: any, even all; absent: the default 0.5; jobs/day-guard.ts).
   */
  | { mode: 'daily'; /** REST only: the query parameter of the day. */ date_param?: string; late_days: number; start: string; max_day_shrink?: number };

/** What every stream has, whatever its source kind. */
export interface StreamBase {
  entity: Entity;
  incremental: Incremental;
  mapping: StreamMapping;
  /** cron, UTC. */
  schedule: string;
  /**
   * Customers and transactions: where a source record says it was deleted at the source
   * (docs/loading.md, Deletes): a field (a REST dot path, or a db/warehouse column) and, when
   * given, its values that mean deleted (else a date-time or a true flag does).
   */
  soft_delete?: { field: string; values?: (string | number | boolean)[] };
}

export interface RestStream extends StreamBase {
  path: string;
  /** Where the records are in the response body (default `data`, the spec's envelope). */
  records_path: string;
  params: Record<string, string>;
  pagination: Pagination;
  /** The partner's endpoint of ids deleted since a time (jobs/deleted-list.ts), paged as the stream is. */
  deleted_list?: { path: string; since_param: string; id_field: string; records_path: string };
}

export type RestAuth =
  | { type: 'oauth2_client_credentials'; token_url: string; client_id: string; client_secret: string; scope?: string }
  | { type: 'bearer'; token: string }
  | { type: 'api_key'; header: string; key: string };

export interface RestSource {
  type: 'rest';
  base_url: string;
  auth: RestAuth;
  /** Requests per minute per token (spec §8: 1000). */
  requests_per_minute: number;
  timeout_ms: number;
  retries: { max: number; min_delay_ms: number; max_delay_ms: number; max_retry_after_ms: number };
  /** A run stops cleanly (progress kept) rather than wait past this. */
  run_budget_ms: number;
}

/**
 * A partner database replica (MySQL/MariaDB or PostgreSQL), read-only. Each read runs in one
 * consistent read-only snapshot; cursor streams page by the keyset (cursor column, tie-breaker).
 */
export interface DbSource {
  type: 'db';
  /** `sqlite` stands in for a replica where no server runs (the demo), through the same knex path. */
  client: 'mysql' | 'postgres' | 'sqlite';
  /** Connection URL (a secret: it may carry a password). */
  url: string;
  /** Rows per keyset page. */
  page_size: number;
  /** The upper bound of a read is the source's clock minus this, so rows still being committed are left for the next run. */
  safety_lag_ms: number;
  /** IANA zone of the source's zone-less date-time columns (MySQL DATETIME); default UTC. */
  timezone: string;
  statement_timeout_ms: number;
  run_budget_ms: number;
}

export interface DbStream extends StreamBase {
  /** A table (or view) name, quoted as an identifier... */
  table?: string;
  /** ...or a SELECT with named parameters (:from, :to, :cursor, :id, :limit, :date_from, :date_to), values bound, never spliced. */
  query?: string;
  /** Cursor streams: the change column and the unique tie-breaker column of the keyset. */
  cursor_column?: string;
  tiebreak_column?: string;
  /** Daily streams: the column holding the UTC day (YYYY-MM-DD) of a row. */
  date_column?: string;
}

/** A partner data-warehouse view per stream, read by date partition (closed UTC days only). */
export interface WarehouseSource {
  type: 'warehouse';
  client: 'postgres' | 'mysql' | 'sqlite';
  url: string;
  statement_timeout_ms: number;
  /** How many days one query reads (each day still loads whole). */
  days_per_query: number;
  timezone: string;
  run_budget_ms: number;
}

export interface WarehouseStream extends StreamBase {
  view: string;
  /** The day column: `date` for activity; a modified-day column for customers and transactions. */
  date_column: string;
}

export type SourceDefinition = RestSource | DbSource | WarehouseSource;
export type StreamDefinition = RestStream | DbStream | WarehouseStream;

/** The mass-delete guard of a partner's deletes (src/pipeline/delete-guard.ts). */
export interface DeleteGuard {
  /** The share of the partner's customers, or of a day's transactions, one scope may delete (default 0.05). */
  max_share: number;
  /** Deletes a scope may make whatever the share (default 20). */
  min_records: number;
}

export interface PartnerDefinition {
  partner: string;
  variant: Variant;
  /** The file it was read from (for messages). */
  file: string;
  source: SourceDefinition;
  streams: Partial<Record<Entity, StreamDefinition>>;
  /** Partner affiliate code → the service's affiliate id; `unmapped: reject` makes an unknown code a reject. */
  affiliates: { map: Record<string, string>; unmapped: 'keep' | 'reject' };
  /**
   * A window of any stream that rejects more than this share of its records (from 20 records up)
   * fails and its start does not move (a broken mapping, a changed source format). Default 0.5.
   */
  max_reject_ratio?: number;
  /** What is kept of the personal customer fields (../spec/personal-data.ts), with the hash key from the environment; absent: all kept. */
  personal_data?: PersonalData;
  /**
   * The worker's daily reconcile (src/worker/reconcile-schedule.ts): cron (UTC), closed days
   * compared, and whether keys two consecutive scans find missing at the source become deletes; absent: none.
   */
  reconcile?: { schedule: string; days: number; infer_deletes: boolean };
  /** The mass-delete guard of the partner's deletes (src/pipeline/delete-guard.ts); absent: its defaults. */
  delete_guard?: DeleteGuard;
  /** Every resolved secret value, for redaction of logs and errors. */
  secrets: string[];
}
