/**
 * One pooled connection of a source database, running statements: a whole (small) result, or a
 * large one a page at a time with bounded memory. Statements are knex.raw text with named
 * bindings (`:from`), compiled by knex to the driver's placeholders: values are always bound,
 * never spliced. Results come back with their columns' types, which decide how rows become records.
 */
import type { Knex } from 'knex';
import type Database from 'better-sqlite3';
import type { Connection as MysqlConnection, QueryError } from 'mysql2';
import type pg from 'pg';
import type { Redact } from '../../src/log.js';
import type { SourceStats } from '../source.js';
import { mysqlColumn, pgColumn, sqliteColumn, type ResultColumn } from './column-types.js';
import type { SqlDialect } from './dialects.js';
import { sqlError } from './errors.js';

export type Bindings = Readonly<Record<string, unknown>>;
export type Row = Record<string, unknown>;

export interface ResultPage {
  rows: Row[];
  columns: ResultColumn[];
}

export interface SqlSession {
  readonly dialect: SqlDialect;
  /** Runs one statement and returns its whole result. `what` says what it was for, in errors. */
  query(sql: string, bindings: Bindings, what: string): Promise<ResultPage>;
  /**
   * The rows of one statement in pages of at most `pageSize`, holding one page (and the driver's
   * small buffer) in memory. On PostgreSQL it must run inside a transaction (the snapshot).
   * Ending early (`return()`) stops the read on the server.
   */
  stream(sql: string, bindings: Bindings, pageSize: number, what: string): AsyncGenerator<ResultPage>;
  /** False once a read was abandoned midway, or the session discarded. */
  readonly usable: boolean;
  /** Marks the connection unfit for reuse (a transaction that could not be ended): released, it is closed. */
  discard(): void;
  /** Back to the pool (a closed connection is dropped by the pool's validation). */
  release(): Promise<void>;
}

interface Native {
  sql: string;
  values: unknown[];
}

/** What runs a compiled statement on one driver's raw connection. */
interface Driver {
  query(native: Native): Promise<ResultPage>;
  stream(native: Native, pageSize: number): AsyncGenerator<ResultPage>;
  /** Closes the connection so that the pool drops it. */
  discard(): void;
}

function compile(knex: Knex, sql: string, bindings: Bindings): Native {
  if (Object.keys(bindings).length === 0) return { sql, values: [] };
  const native = knex.raw(sql, bindings as Record<string, Knex.Value>).toSQL().toNative();
  return { sql: native.sql, values: [...native.bindings] };
}

// ---- mysql2 ----

interface MysqlField {
  name: string;
  columnType?: number;
  type?: number;
  characterSet?: number;
}

function mysqlDriver(conn: MysqlConnection): Driver {
  return {
    query: (native) =>
      new Promise((resolve, reject) => {
        conn.query({ sql: native.sql, values: native.values }, (error: QueryError | null, result: unknown, fields: unknown) => {
          if (error) return reject(error);
          const rows = Array.isArray(result) ? (result as Row[]) : [];
          const columns = Array.isArray(fields) ? (fields as MysqlField[]).map(mysqlColumn) : [];
          resolve({ rows, columns });
        });
      }),
    async *stream(native, pageSize) {
      // Rows are gathered from the query's row events into pages; when a full page waits for the
      // reader the connection is paused (the server waits, memory stays flat: a page filling and
      // one waiting), and resumed when the reader takes it. No per-row promise or stream buffer.
      const query = conn.query({ sql: native.sql, values: native.values });
      let columns: ResultColumn[] = [];
      let filling: Row[] = [];
      let full: Row[] | undefined;
      let ended = false;
      let failure: Error | undefined;
      let wake: (() => void) | undefined;
      const notify = () => {
        const resume = wake;
        wake = undefined;
        resume?.();
      };
      query.on('fields', (fields: unknown) => {
        if (Array.isArray(fields)) columns = (fields as MysqlField[]).map(mysqlColumn);
      });
      query.on('result', (row: unknown) => {
        filling.push(row as Row);
        if (filling.length >= pageSize && full === undefined) {
          full = filling;
          filling = [];
          conn.pause();
          notify();
        }
      });
      query.on('end', () => {
        ended = true;
        notify();
      });
      query.on('error', (error: Error) => {
        failure = error;
        notify();
      });
      let finished = false;
      try {
        for (;;) {
          if (full === undefined && !ended && failure === undefined) await new Promise<void>((resolve) => (wake = resolve));
          if (failure !== undefined) throw failure;
          if (full !== undefined) {
            const rows = full;
            full = undefined;
            // Resuming may deliver rows at once (those that came in while paused), even a full page.
            conn.resume();
            yield { rows, columns };
          } else if (ended) {
            if (filling.length > 0) yield { rows: filling, columns };
            break;
          }
        }
        finished = true;
      } finally {
        // The rest of an abandoned result would still be on its way: close the connection instead.
        if (!finished) conn.destroy();
      }
    },
    discard: () => conn.destroy(),
  };
}

// ---- pg ----

let cursorCounter = 0;

function pgDriver(conn: pg.Client): Driver {
  const run = async (text: string, values: unknown[] = []): Promise<ResultPage> => {
    const result = await conn.query({ text, values });
    return { rows: result.rows as Row[], columns: (result.fields ?? []).map(pgColumn) };
  };
  return {
    query: (native) => run(native.sql, native.values),
    async *stream(native, pageSize) {
      const cursor = `ps_read_${++cursorCounter}`;
      await run(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${native.sql}`, native.values);
      try {
        for (;;) {
          const page = await run(`FETCH FORWARD ${pageSize} FROM ${cursor}`);
          if (page.rows.length > 0) yield page;
          if (page.rows.length < pageSize) return;
        }
      } finally {
        // After an error the transaction is aborted and the cursor goes with its rollback.
        await conn.query(`CLOSE ${cursor}`).catch(() => undefined);
      }
    },
    discard: () => {
      void conn.end().catch(() => undefined);
    },
  };
}

// ---- better-sqlite3 ----

function sqliteDriver(db: Database.Database): Driver {
  return {
    async query(native) {
      const statement = db.prepare(native.sql);
      if (!statement.reader) {
        statement.run(native.values);
        return { rows: [], columns: [] };
      }
      const columns = statement.columns().map(sqliteColumn);
      return { rows: statement.all(native.values) as Row[], columns };
    },
    async *stream(native, pageSize) {
      const statement = db.prepare(native.sql);
      const columns = statement.columns().map(sqliteColumn);
      const iterator = statement.iterate(native.values) as IterableIterator<Row>;
      try {
        let page: Row[] = [];
        for (const row of iterator) {
          page.push(row);
          if (page.length >= pageSize) {
            yield { rows: page, columns };
            page = [];
          }
        }
        if (page.length > 0) yield { rows: page, columns };
      } finally {
        iterator.return?.();
      }
    },
    discard: () => db.close(),
  };
}

export interface SessionContext {
  knex: Knex;
  dialect: SqlDialect;
  stats: SourceStats;
  redact: Redact;
  statementTimeoutMs: number;
}

/** Wraps a raw connection acquired from the knex pool. */
export function createSession(context: SessionContext, raw: unknown): SqlSession {
  const { knex, dialect, stats, redact } = context;
  const driver =
    dialect.client === 'mysql' ? mysqlDriver(raw as MysqlConnection)
    : dialect.client === 'postgres' ? pgDriver(raw as pg.Client)
    : sqliteDriver(raw as Database.Database);
  const fail = (what: string, error: unknown) => sqlError(what, error, redact, dialect.statementTimeout ? context.statementTimeoutMs : undefined);
  let usable = true;
  let released = false;

  return {
    dialect,
    get usable() {
      return usable;
    },
    discard() {
      usable = false;
    },
    async query(sql, bindings, what) {
      if (!usable) throw fail(what, new Error('the connection was closed after an abandoned read'));
      let native: Native;
      try {
        native = compile(knex, sql, bindings);
      } catch (error) {
        throw fail(what, error);
      }
      stats.requests += 1;
      try {
        return await driver.query(native);
      } catch (error) {
        throw fail(what, error);
      }
    },
    async *stream(sql, bindings, pageSize, what) {
      if (!Number.isInteger(pageSize) || pageSize < 1) throw fail(what, new Error(`page size must be a positive integer, got ${pageSize}`));
      const native = (() => {
        try {
          return compile(knex, sql, bindings);
        } catch (error) {
          throw fail(what, error);
        }
      })();
      stats.requests += 1;
      const pages = driver.stream(native, pageSize);
      let finished = false;
      try {
        for (;;) {
          let next: IteratorResult<ResultPage>;
          try {
            next = await pages.next();
          } catch (error) {
            throw fail(what, error);
          }
          if (next.done) break;
          if (dialect.streaming === 'declare-fetch') stats.requests += 1;
          yield next.value;
        }
        finished = true;
      } finally {
        if (!finished) {
          if (dialect.streaming === 'result-stream') usable = false;
          await pages.return(undefined).catch(() => undefined);
        }
      }
    },
    async release() {
      if (released) return;
      released = true;
      if (!usable) driver.discard();
      await knex.client.releaseConnection(raw);
    },
  };
}
