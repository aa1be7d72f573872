/**
 * What differs between store backends, as behaviour: one adapter per backend (./postgres.ts,
 * ./sqlite.ts) implements each difference, and the store and the domain modules ask it
 * (`store.dialect`, or `dialectOf(knex)` for a handle or a transaction: ./index.ts) instead of
 * testing the client name. Kysely's DialectAdapter is the model. An adapter extends its backend's
 * data (../dialects.ts: column types, which the frozen migrations read, and statement limits).
 *
 * A new difference is a member here with both implementations. A strategy that differs as a whole
 * (set-based SQL on one backend, work in the process on the other) asks for the capability it
 * rests on (`batchParameters`, `exactDecimals`, `concurrent`), never for a name.
 */
import type { Knex } from 'knex';
import { columnCount, cut, rowsPerStatement, type DialectProfile, type StatementForm } from '../dialects.js';
import type { StoreLocation } from '../store-url.js';

/** A column's SQL type, for the casts of a batch's parameters (PostgreSQL's `?::type[]`, `json_to_recordset`). */
export type SqlType = string;

/** How the statements `chunks` sizes carry their items. */
export interface StatementShape {
  /** Bind variables per item (default 1; the columns of a composite key or of a row). */
  valuesPerRow?: number;
  /**
   * `list` (default): a VALUES list or an IN list of placeholders, only the variables count;
   * `insert`: knex's multi-row insert (a compound SELECT on SQLite); `inList`: the values of an
   * `inList` (one array parameter on PostgreSQL).
   */
  form?: StatementForm | 'inList';
  /** Variables of the rest of the statement (its WHERE, its ON CONFLICT). */
  otherValues?: number;
  /** At most this many items a statement: a size chosen for the work, within the limits. */
  atMost?: number;
}

/** The ON CONFLICT of a bulk insert: the key, and the columns a conflicting row takes from the new one (none: the new row is dropped). */
export interface Conflict {
  on: readonly string[];
  update?: readonly string[];
}

export interface StoreDialect extends DialectProfile {
  /** Items cut into statements inside the backend's limits; a number: at most that many a statement, one variable each. */
  chunks<T>(items: readonly T[], shape?: number | StatementShape): T[][];
  /** Rows of a knex multi-row insert cut into statements inside the limits (variables per row: every key of any row). */
  insertChunks<T extends object>(rows: readonly T[], otherValues?: number): T[][];
  /** Values of one `inList` statement at most: a batch's whole list on PostgreSQL (one array parameter), 500 on SQLite. */
  readonly inListSize: number;
  /** `column IN (values)` as a query modifier: one array parameter on PostgreSQL (thousands of placeholders cost more to parse than the lookup), a list on SQLite. */
  inList(column: string, values: readonly string[]): (q: Knex.QueryBuilder) => void;

  /** Whether several connections (processes, threads) use the store at once (PostgreSQL); SQLite has one connection, its transactions serial. */
  readonly concurrent: boolean;
  /** Holds `key` in this store until the transaction ends: PostgreSQL's advisory lock; nothing on SQLite, serial already. */
  transactionLock(trx: Knex.Transaction, key: string): Promise<void>;
  /** What a claiming SELECT ends with to lock its rows, skipping those another transaction holds ('' on SQLite). */
  readonly skipLocked: string;

  /**
   * Whether one parameter carries a whole batch (array and JSON parameters: `unnest`,
   * `json_to_recordset`, cursors over them): PostgreSQL, a round trip away. SQLite runs in the
   * process, where small prepared statements cost no round trip.
   */
  readonly batchParameters: boolean;
  /** Whether SQL adds and sums money exactly (NUMERIC): PostgreSQL. SQLite stores decimal text, which its SQL sums as floating point: summed in the process. */
  readonly exactDecimals: boolean;
  /** The planner leans on statistics that a bulk load makes stale (PostgreSQL: ../statistics.ts). */
  readonly plannerStatistics: boolean;
  /** The activity tables may be partitioned by month (PostgreSQL, migration 013: ../partitions.ts). */
  readonly partitions: boolean;

  /**
   * Inserts rows given column by column (`columns`: name → [SQL type, values], all of one length;
   * `constants`: name → [SQL type, value], the same in every row): PostgreSQL in one statement, an
   * array parameter per column; SQLite as knex multi-row inserts inside its limits.
   */
  insertColumns(trx: Knex.Transaction, table: string, constants: Record<string, [SqlType, unknown]>,
    columns: Record<string, [SqlType, readonly unknown[]]>, conflict?: Conflict): Promise<void>;
  /**
   * Inserts rows given as objects (`types`: each column's SQL type; a missing key is NULL):
   * PostgreSQL in one statement, an array parameter per column or (`json`: many or wide columns)
   * one JSON parameter; SQLite as knex multi-row inserts inside its limits.
   */
  insertRows(trx: Knex.Transaction, table: string, types: Record<string, SqlType>, rows: readonly Record<string, unknown>[],
    options?: { conflict?: Conflict; json?: boolean }): Promise<void>;
  /**
   * Deletes the partner's rows of these keys (each key: the values of `key`'s columns in order):
   * PostgreSQL in one statement, the keys as one JSON parameter; SQLite at most `atMost` keys a statement.
   */
  deleteKeys(trx: Knex.Transaction, table: string, partner: string, key: Record<string, SqlType>, keys: readonly (readonly string[])[], atMost: number): Promise<void>;

  /** A date column as its `YYYY-MM-DD` text. */
  dateText(column: string): string;
  /** A date column's month as `YYYY-MM` text. */
  monthText(column: string): string;
  /** An aggregate of the median of its `??` column, where the backend has one (PostgreSQL's percentile_cont); null elsewhere. */
  readonly median: string | null;

  /**
   * After rows were erased (src/privacy/erase.ts): what makes the backend's files stop holding the
   * old bytes it can reach. SQLite overwrites deleted content as it goes (`secure_delete`, set on
   * every connection) and its WAL is checkpointed and truncated here; PostgreSQL vacuums the tables
   * touched, so their dead row versions are removed (docs/personal-data.md says what remains).
   */
  reclaimErased(knex: Knex, tables: readonly string[]): Promise<void>;

  /** The knex configuration of a store at `location`: driver, pool, and each connection's set-up. */
  knexConfig(location: StoreLocation): Knex.Config;
  /** Runs `migrate` (the pending migrations) taking turns with other processes migrating the same store. */
  migrationTurn<T>(location: StoreLocation, migrate: () => Promise<T>): Promise<T>;
}

/** The statement sizing both adapters share, from their limits (`limits`; `inListSize`: values of one `inList` at most). */
export function sizing(limits: DialectProfile, inListSize: number): Pick<StoreDialect, 'chunks' | 'insertChunks' | 'inListSize'> {
  const chunks = <T>(items: readonly T[], shape: number | StatementShape = {}): T[][] => {
    const s: StatementShape = typeof shape === 'number' ? { atMost: shape } : shape;
    const byLimits = s.form === 'inList' ? inListSize : rowsPerStatement(limits, s.valuesPerRow ?? 1, s.form ?? 'list', s.otherValues ?? 0);
    return cut(items, Math.min(s.atMost ?? Infinity, byLimits));
  };
  return { chunks, insertChunks: (rows, otherValues = 0) => chunks(rows, { valuesPerRow: columnCount(rows), form: 'insert', otherValues }), inListSize };
}
