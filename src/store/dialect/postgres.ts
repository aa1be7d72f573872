/**
 * The PostgreSQL adapter: a server a round trip away, shared by processes. A batch goes in one
 * statement (array and JSON parameters), NUMERIC sums exactly, partners take turns by advisory
 * locks scoped to the store's schema (../transaction-lock.ts).
 */
import type { Knex } from 'knex';
import pg from 'pg';
import { DIALECTS } from '../dialects.js';
import { arrayLiteral, insertArrays, insertJson, insertRowArrays } from '../json-insert.js';
import { transactionLock } from '../transaction-lock.js';
import { sizing, type Conflict, type StoreDialect } from './adapter.js';

// Type OIDs read as text, so that dates, timestamps and NUMERIC keep full precision (pg would
// turn timestamps into millisecond Dates).
const TEXT_TYPES = new Set([1082 /* date */, 1114 /* timestamp */, 1184 /* timestamptz */, 1700 /* numeric */]);
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (TEXT_TYPES.has(oid)) return (value: string) => value;
    if (oid === 20) return (value: string) => Number(value); // int8 counts stay far below 2^53
    return pg.types.getTypeParser(oid, format);
  },
};

/** The advisory lock of migration runs: this class, and the schema migrated (stores in other schemas of one database do not wait for each other). */
const MIGRATION_LOCK = "7305, hashtext('partner-sync migrate ' || coalesce(current_schema(), ''))";

/** A bulk insert's ON CONFLICT clause. */
const conflictSql = (c: Conflict | undefined): string =>
  !c ? '' : ` ON CONFLICT (${c.on.join(', ')}) ${c.update?.length ? `DO UPDATE SET ${c.update.map((u) => `${u} = excluded.${u}`).join(', ')}` : 'DO NOTHING'}`;

export const postgresDialect: StoreDialect = {
  ...DIALECTS.postgres,
  ...sizing(DIALECTS.postgres, 20_000),
  inList: (column, values) => (q) => { q.whereRaw('?? = ANY(?::text[])', [column, arrayLiteral(values) as string]); },

  concurrent: true,
  transactionLock,
  skipLocked: 'FOR UPDATE SKIP LOCKED',

  batchParameters: true,
  exactDecimals: true,
  plannerStatistics: true,
  partitions: true,

  insertColumns: (trx, table, constants, columns, conflict) => insertArrays(trx, table, constants, columns, conflictSql(conflict)),
  insertRows: (trx, table, types, rows, options = {}) => (options.json ? insertJson : insertRowArrays)(trx, table, types, rows, conflictSql(options.conflict)),
  async deleteKeys(trx, table, partner, key, keys) {
    if (keys.length === 0) return;
    const columns = Object.keys(key);
    await trx.raw(`DELETE FROM ${table} t USING json_to_recordset(?::json) AS k(${columns.map((c) => `${c} ${key[c] as string}`).join(', ')}) WHERE t.partner_id = ? AND ${columns.map((c) => `t.${c} = k.${c}`).join(' AND ')}`,
      [JSON.stringify(keys.map((values) => Object.fromEntries(columns.map((c, i) => [c, values[i]])))), partner]);
  },

  dateText: (column) => `to_char(${column}, 'YYYY-MM-DD')`,
  monthText: (column) => `to_char(${column}, 'YYYY-MM')`,
  median: 'percentile_cont(0.5) WITHIN GROUP (ORDER BY ??)',

  async reclaimErased(knex, tables) {
    // VACUUM cannot run inside a transaction: each table its own statement, on a pool connection.
    for (const table of tables) await knex.raw('VACUUM ??', [table]);
  },

  knexConfig: (location) => ({
    client: DIALECTS.postgres.knexClient,
    connection: { connectionString: location.target, types: pgTypes } as Knex.PgConnectionConfig,
    pool: {
      min: 0,
      max: 4,
      afterCreate: (conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void) => {
        // No JIT: a bulk settle's statements (report facts, customer-days) cost above its
        // threshold and each paid for compiling a plan it runs once (bench/README.md, the whole
        // pipeline); nothing here runs long enough to win that back.
        conn.query("SET TIME ZONE 'UTC'; SET jit = off", (err) => done(err ?? null, conn));
      },
    },
  }),

  /**
   * Processes take turns: the run holds a session advisory lock on a connection of its own
   * (knex's lock table alone races on a fresh store: two processes both create it, or both find
   * it locked and give up).
   */
  async migrationTurn(location, migrate) {
    const lock = new pg.Client({ connectionString: location.target });
    await lock.connect();
    try {
      await lock.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
      return await migrate();
    } finally {
      // Ending the session releases the lock too, should the unlock itself fail.
      await lock.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
      await lock.end().catch(() => undefined);
    }
  },
};
