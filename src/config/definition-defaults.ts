/**
 * The defaults of a connector definition and the fixed vocabularies a definition is checked
 * against (query parameters, connection URL schemes), in one place; the schema states the same
 * defaults (checked by a test).
 */
import type { DbSource } from './definition.js';

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
  delete_guard: { max_share: 0.05, min_records: 20 },
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
