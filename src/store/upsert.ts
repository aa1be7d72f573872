/**
 * Bulk upsert of entity rows, the hot path of every load. A re-sent record replaces the stored
 * one (status and amounts of a transaction, the whole day record of an activity key); a row whose
 * values did not change is left alone, so a rerun writes nothing.
 *
 * Two writers, chosen by the dialect profile:
 * - prepared-rows (SQLite): one prepared INSERT ... ON CONFLICT statement run per row on the
 *   transaction's connection; SQLite runs in-process, so per-row statements are the fast path.
 * - copy-staging (PostgreSQL): each chunk is COPYed into a session temp table, then merged with
 *   one INSERT ... SELECT ... ON CONFLICT; COPY avoids building and parsing huge VALUES lists.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Knex } from 'knex';
import { from as copyFrom } from 'pg-copy-streams';
import type pg from 'pg';
import type { BulkWriteStrategy } from './dialects.js';
import type { Store } from './store.js';
import { rowColumns, type Row } from './rows.js';
import type { EntityTable } from './tables.js';

/** Rows per statement: the spec's bulk limit, and well inside every backend's bind-variable limit. */
export const CHUNK_SIZE = 1000;

type Writer = (trx: Knex.Transaction, table: EntityTable, rows: readonly Row[]) => Promise<void>;

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

function conflictClause(table: EntityTable): { keys: string; set: string; changed: string } {
  const keyCols = ['partner_id', ...table.key];
  const updatable = table.columns.map((c) => c.name).filter((c) => !keyCols.includes(c));
  const set = [...updatable, 'run_id', 'loaded_at'].map((c) => `${quote(c)} = excluded.${quote(c)}`).join(', ');
  const left = updatable.map((c) => `${quote(table.name)}.${quote(c)}`).join(', ');
  const right = updatable.map((c) => `excluded.${quote(c)}`).join(', ');
  return { keys: keyCols.map(quote).join(', '), set, changed: `(${left}) IS DISTINCT FROM (${right})` };
}

/** The driver connection a knex transaction runs on. */
async function connectionOf<T>(trx: Knex.Transaction): Promise<T> {
  return (await (trx.client as { acquireConnection(): Promise<T> }).acquireConnection()) as T;
}

interface SqliteDatabase {
  prepare(sql: string): { run(...params: unknown[]): unknown };
}
const sqliteStatements = new WeakMap<object, Map<string, { run(...params: unknown[]): unknown }>>();

const preparedRows: Writer = async (trx, table, rows) => {
  const db = await connectionOf<SqliteDatabase>(trx);
  let cache = sqliteStatements.get(db);
  if (!cache) sqliteStatements.set(db, (cache = new Map()));
  let statement = cache.get(table.name);
  if (!statement) {
    const cols = rowColumns(table);
    const { keys, set, changed } = conflictClause(table);
    // SQLite spells IS DISTINCT FROM as IS NOT for row values.
    const sql =
      `INSERT INTO ${quote(table.name)} (${cols.map(quote).join(', ')}) VALUES (${cols.map(() => '?').join(', ')}) ` +
      `ON CONFLICT (${keys}) DO UPDATE SET ${set} WHERE ${changed.replace('IS DISTINCT FROM', 'IS NOT')}`;
    statement = db.prepare(sql);
    cache.set(table.name, statement);
  }
  for (const row of rows) statement.run(...row);
};

/** COPY text format: tab-separated, \N for NULL, backslash escapes. */
function copyText(rows: readonly Row[]): string {
  let out = '';
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) {
      const v = row[i];
      if (i > 0) out += '\t';
      if (v === null || v === undefined) out += '\\N';
      else if (typeof v === 'number') out += String(v);
      else out += /[\\\t\n\r]/.test(v) ? v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r') : v;
    }
    out += '\n';
  }
  return out;
}

const copyStaging: Writer = async (trx, table, rows) => {
  const conn = await connectionOf<pg.Client>(trx);
  const stage = quote(`stage_${table.name}`);
  const cols = rowColumns(table).map(quote).join(', ');
  const { keys, set, changed } = conflictClause(table);
  // Session-local, emptied at every commit; created once per pooled connection.
  await conn.query(`CREATE TEMP TABLE IF NOT EXISTS ${stage} (LIKE ${quote(table.name)} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS`);
  for (let start = 0; start < rows.length; start += CHUNK_SIZE) {
    const chunk = rows.slice(start, start + CHUNK_SIZE);
    await pipeline(Readable.from([copyText(chunk)]), conn.query(copyFrom(`COPY ${stage} (${cols}) FROM STDIN`)));
    await conn.query(
      `INSERT INTO ${quote(table.name)} (${cols}) SELECT ${cols} FROM ${stage} ` +
        `ON CONFLICT (${keys}) DO UPDATE SET ${set} WHERE ${changed}`,
    );
    await conn.query(`TRUNCATE ${stage}`);
  }
};

const WRITERS: Record<BulkWriteStrategy, Writer> = {
  'prepared-rows': preparedRows,
  'copy-staging': copyStaging,
};

/** Upserts rows (already de-duplicated by key) into an entity table inside the caller's transaction. */
export async function upsertRows(store: Store, trx: Knex.Transaction, table: EntityTable, rows: readonly Row[]): Promise<void> {
  if (rows.length === 0) return;
  await WRITERS[store.profile.bulkWrite](trx, table, rows);
}
