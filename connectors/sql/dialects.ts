/**
 * What differs between the databases a partner may hand us (a MySQL/MariaDB or PostgreSQL replica,
 * a warehouse on either, SQLite standing in for one in the demo), as data: the code elsewhere
 * asks the profile instead of testing the client name.
 */
export type SqlClient = 'mysql' | 'postgres' | 'sqlite';

/**
 * The keyset continuation a planner turns into an exact index range on (c, id):
 * - `row-value`: `(c, id) > (:c, :id)`. PostgreSQL makes it the index condition itself.
 * - `expanded`: `c >= :c AND (c > :c OR (c = :c AND id > :id))`. MariaDB 10.11 does not use the
 *   index for the row-value form (one page read every row from the window's start: 109,001 of
 *   200,000 rows for a page of 1000, measured in test/sql/keyset-plan.test.ts) but reads exactly
 *   one page with this one. The redundant `c >= :c` lets any planner start the range at the
 *   cursor (PostgreSQL without it filters every row from the window's start too).
 */
export type KeysetForm = 'row-value' | 'expanded';

/** How a result larger than memory is read a page at a time. */
export type StreamingMethod =
  /** `DECLARE ... NO SCROLL CURSOR` + `FETCH n` inside the snapshot transaction (PostgreSQL). */
  | 'declare-fetch'
  /** The driver's row stream with backpressure: the connection pauses when the buffer is full (mysql2). */
  | 'result-stream'
  /** The prepared statement's row iterator (better-sqlite3, in process). */
  | 'statement-iterate';

export interface SqlDialect {
  client: SqlClient;
  knexClient: 'mysql2' | 'pg' | 'better-sqlite3';
  /** Identifier quote character (identifiers are validated first, so none contains it). */
  quote: '`' | '"';
  /** Starts one read-only transaction that sees one consistent snapshot for all its statements. */
  beginSnapshot: string;
  keyset: KeysetForm;
  streaming: StreamingMethod;
  /**
   * The source's own current UTC time, at microseconds where the server has them, as zone-less
   * text `YYYY-MM-DD HH:MM:SS.ffffff` in a column `now`. Not the transaction start time: the
   * bound is read before the snapshot.
   */
  clockSql: string;
  /** Whether the server can cancel a statement that runs past `statement_timeout_ms`. */
  statementTimeout: boolean;
  /** Longest identifier the server accepts. */
  maxIdentifierLength: number;
  /**
   * One row when a table or view exists and this user can see it. Bindings: `:schema` (null when
   * the name is not qualified: the connection's default), `:name`, `:qualified` (the quoted name).
   */
  relationExistsSql: string;
}

export const SQL_DIALECTS: Record<SqlClient, SqlDialect> = {
  mysql: {
    client: 'mysql',
    knexClient: 'mysql2',
    quote: '`',
    beginSnapshot: 'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY',
    keyset: 'expanded',
    streaming: 'result-stream',
    clockSql: 'SELECT UTC_TIMESTAMP(6) AS now',
    statementTimeout: true,
    maxIdentifierLength: 64,
    relationExistsSql: 'SELECT 1 AS present FROM information_schema.tables WHERE table_schema = COALESCE(:schema, DATABASE()) AND table_name = :name',
  },
  postgres: {
    client: 'postgres',
    knexClient: 'pg',
    quote: '"',
    beginSnapshot: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    keyset: 'row-value',
    streaming: 'declare-fetch',
    clockSql: `SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS now`,
    statementTimeout: true,
    maxIdentifierLength: 63,
    // to_regclass resolves an unqualified name through search_path, as the read will.
    relationExistsSql: 'SELECT 1 AS present WHERE to_regclass(:qualified) IS NOT NULL',
  },
  sqlite: {
    client: 'sqlite',
    knexClient: 'better-sqlite3',
    quote: '"',
    // Deferred: the read snapshot is taken at the first SELECT and held until COMMIT (WAL keeps it).
    beginSnapshot: 'BEGIN DEFERRED',
    keyset: 'expanded',
    streaming: 'statement-iterate',
    clockSql: `SELECT strftime('%Y-%m-%d %H:%M:%f', 'now') AS now`,
    statementTimeout: false,
    maxIdentifierLength: 128,
    relationExistsSql: `SELECT 1 AS present FROM pragma_table_list WHERE schema = COALESCE(:schema, 'main') AND name = :name AND type IN ('table', 'view')`,
  },
};
