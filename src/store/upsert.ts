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
 *   A batch of only new keys is COPYed straight into the table under a savepoint, as fast as a
 *   raw COPY; a batch that meets an existing key rolls back to the savepoint and merges.
 * On customers and transactions a stored row is never replaced by an older version (versions.ts):
 * the SQLite writer reads the stored version first; the PostgreSQL merge's ON CONFLICT guard leaves
 * them unwritten, then one query names them; a COPY of only new keys has nothing to compare with.
 *
 * `storedMayChange`, given, runs before the write replaces any stored row, and only when the store
 * may hold some of the batch's keys: not for a COPY of only new keys (keysAreNew, or a direct COPY
 * that went through), where it would read nothing (the after-load jobs read the stored versions
 * there; a month's import of new transactions read them once a batch to find none).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Knex } from 'knex';
import { from as copyFrom } from 'pg-copy-streams';
import type pg from 'pg';
import type { BulkWriteStrategy } from './dialects.js';
import type { Store } from './store.js';
import { rewordDriverError } from './store-errors.js';
import type { SpecRecord } from '../types.js';
import { CopyTextWriter, recycleCopyBuffer, writeCopyRows } from './copy-text.js';
import { recordToRow, rowColumns } from './rows.js';
import { type EntityTable, VERSION_COLUMN, isVersioned } from './tables.js';
import { versionOf } from './record-meta.js';
import { isOlder } from './versions.js';
import { SLICE, yieldToEventLoop } from '../yield.js';

/** Rows per statement: the spec's bulk limit, and well inside every backend's bind-variable limit. */
export const CHUNK_SIZE = 1000;

/** Validated records of one partner, and the lineage their rows carry. */
export interface UpsertBatch {
  partner: string;
  runId: string;
  loadedAt: string;
  /** No two with the same key: PostgreSQL cannot update one row twice in one statement. */
  records: readonly SpecRecord[];
}

/**
 * An upsert made ready before it is written: for PostgreSQL the COPY text of each chunk, rendered
 * by `prepareUpsert` while the transaction's connection may still be busy with the batch before.
 */
export interface PreparedUpsert {
  table: EntityTable;
  batch: UpsertBatch;
  /** copy-staging: the COPY text of all the records, sent in one write (a whole batch queued for the server at once). */
  copyText?: CopyText;
  /**
   * The caller proved that no key of the batch can be stored already (an activity day deleted in
   * this transaction, none of its keys written since: ../pipeline/load.ts). The COPY then goes
   * straight into the table with no savepoint around it (a day of 33 batches would otherwise
   * open 33 subtransactions, past PostgreSQL's cache of 64 per transaction on larger days).
   */
  keysAreNew?: boolean;
}

/** What a write did not apply: keys whose stored row holds a newer version (versions.ts). */
export type StaleKeys = Set<string>;

type Writer = (trx: Knex.Transaction, prepared: PreparedUpsert, storedMayChange: () => Promise<void>) => Promise<StaleKeys>;

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * The ON CONFLICT parts. On a versioned table a row is rewritten only when the incoming version is
 * not older than the stored one (a record without a version keeps the stored version), so no
 * writer can let an older version win, whatever the caller checked before.
 */
function conflictClause(table: EntityTable): { keys: string; set: string; changed: string } {
  const keyCols = ['partner_id', ...table.key];
  const updatable = table.columns.map((c) => c.name).filter((c) => !keyCols.includes(c));
  const target = (c: string) => `${quote(table.name)}.${quote(c)}`;
  const sets = [...updatable, 'run_id', 'loaded_at'].map((c) => `${quote(c)} = excluded.${quote(c)}`);
  const left = updatable.map(target);
  const right = updatable.map((c) => `excluded.${quote(c)}`);
  let guard = '';
  if (isVersioned(table)) {
    const version = quote(VERSION_COLUMN);
    const kept = `COALESCE(excluded.${version}, ${target(VERSION_COLUMN)})`;
    sets.push(`${version} = ${kept}`);
    left.push(target(VERSION_COLUMN));
    right.push(kept);
    guard = ` AND (excluded.${version} IS NULL OR ${target(VERSION_COLUMN)} IS NULL OR excluded.${version} >= ${target(VERSION_COLUMN)})`;
  }
  return { keys: keyCols.map(quote).join(', '), set: sets.join(', '), changed: `(${left.join(', ')}) IS DISTINCT FROM (${right.join(', ')})${guard}` };
}

/** The driver connection a knex transaction runs on. */
async function connectionOf<T>(trx: Knex.Transaction): Promise<T> {
  return (await (trx.client as { acquireConnection(): Promise<T> }).acquireConnection()) as T;
}

interface SqliteStatement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
}
interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
}
const sqliteStatements = new WeakMap<object, Map<string, SqliteStatement>>();

const preparedRows: Writer = async (trx, { table, batch }, storedMayChange) => {
  await storedMayChange();
  const db = await connectionOf<SqliteDatabase>(trx);
  let cache = sqliteStatements.get(db);
  if (!cache) sqliteStatements.set(db, (cache = new Map()));
  const stale: StaleKeys = new Set();
  // In process, a stored version is one indexed read away: an older record is not written at all.
  let readVersion: SqliteStatement | undefined;
  if (isVersioned(table)) {
    const versionKey = `${table.name}:version`;
    readVersion = cache.get(versionKey);
    if (!readVersion) {
      readVersion = db.prepare(`SELECT ${quote(VERSION_COLUMN)} AS v FROM ${quote(table.name)} WHERE partner_id = ? AND ${quote(table.key[0] as string)} = ?`);
      cache.set(versionKey, readVersion);
    }
  }
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
  for (const record of batch.records) {
    const version = readVersion ? versionOf(record) : undefined;
    if (version !== undefined) {
      const key = String(record[table.key[0] as string]);
      const stored = (readVersion?.get(batch.partner, key) as { v: string | null } | undefined)?.v;
      if (isOlder(version, stored)) {
        stale.add(key);
        continue;
      }
    }
    statement.run(...recordToRow(table, batch.partner, record, batch.runId, batch.loadedAt));
  }
  return stale;
};

/** PostgreSQL's unique_violation: a COPY straight into the table met a key that is already there. */
const UNIQUE_VIOLATION = '23505';

/** COPY text of a batch, and where each chunk of at most CHUNK_SIZE records ends in it. */
export interface CopyText {
  text: Buffer;
  chunkEnds: number[];
  /** The buffer `text` is a view of, given back for reuse once the server has taken the text. */
  storage: Buffer;
}

/** Renders a chunk at a time, letting the event loop run between chunks when `pause` is given. */
async function renderCopyText(table: EntityTable, batch: UpsertBatch, pause?: () => Promise<void>): Promise<CopyText> {
  // An activity row is about 150 bytes; the writer grows when rows are wider.
  const writer = new CopyTextWriter(batch.records.length * 192 + 1024, true);
  const chunkEnds: number[] = [];
  for (let start = 0; start < batch.records.length; start += SLICE) {
    if (start > 0 && pause) await pause();
    writeCopyRows(writer, table, batch.partner, batch.records.slice(start, start + SLICE), batch.runId, batch.loadedAt);
    const end = Math.min(start + SLICE, batch.records.length); // CHUNK_SIZE is a multiple of SLICE
    if (end % CHUNK_SIZE === 0 || end === batch.records.length) chunkEnds.push(writer.length);
  }
  return { text: writer.bytes(), chunkEnds, storage: writer.storage };
}

const copyStaging: Writer = async (trx, prepared, storedMayChange) => {
  const { table } = prepared;
  const { text, chunkEnds, storage } = prepared.copyText ?? await renderCopyText(table, prepared.batch);
  const conn = await connectionOf<pg.Client>(trx);
  const target = quote(table.name);
  const stage = quote(`stage_${table.name}`);
  const cols = rowColumns(table).map(quote).join(', ');
  const { keys, set, changed } = conflictClause(table);
  const versioned = isVersioned(table);
  // A versioned table's merge names the rows it wrote: only the others can be older than the store.
  const merge = `INSERT INTO ${target} (${cols}) SELECT ${cols} FROM ${stage} ` +
    `ON CONFLICT (${keys}) DO UPDATE SET ${set} WHERE ${changed}${versioned ? ` RETURNING ${quote(table.key[0] as string)} AS key` : ''}; TRUNCATE ${stage}`;
  const copyInto = (into: string, data: Buffer) =>
    pipeline(Readable.from([data]), conn.query(copyFrom(`COPY ${into} (${cols}) FROM STDIN`)));

  if (prepared.keysAreNew) {
    await copyInto(target, text);
    recycleCopyBuffer(storage);
    return new Set();
  }

  // New rows (a new day of activity, a first import) go straight in by one COPY. If a key is
  // already there, the COPY rolls back to its savepoint and the batch is merged instead.
  // The COPY is queued behind the SAVEPOINT on the connection (sent as soon as it completes), so
  // the server does not wait for this process to be free between the two.
  const savepoint = conn.query('SAVEPOINT partner_sync_copy');
  const copied = copyInto(target, text);
  copied.catch(() => undefined); // awaited below, after the savepoint
  await savepoint;
  try {
    await copied;
    // The server completed the COPY: it has every byte, the buffer may be written again.
    recycleCopyBuffer(storage);
    await conn.query('RELEASE SAVEPOINT partner_sync_copy');
    // Every key was new: nothing stored, so nothing older.
    return new Set();
  } catch (error) {
    if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
    await conn.query('ROLLBACK TO SAVEPOINT partner_sync_copy');
  }
  // Some key is stored: what reads the stored versions reads them now, before the merge.
  await storedMayChange();

  // Session-local, emptied at every commit; created once per pooled connection.
  await conn.query(`CREATE TEMP TABLE IF NOT EXISTS ${stage} (LIKE ${target} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS`);
  const written = new Set<string>();
  let start = 0;
  for (const end of chunkEnds) {
    await copyInto(stage, text.subarray(start, end));
    start = end;
    const results = (await conn.query(merge)) as unknown as pg.QueryResult<{ key: string }>[];
    if (versioned) for (const row of results[0]?.rows ?? []) written.add(row.key);
  }
  // Every COPY of the text completed (the failed one's bytes went out before the later ones'): free to reuse.
  recycleCopyBuffer(storage);
  return versioned ? olderThanStored(conn, table, prepared.batch, written) : new Set();
};

/**
 * The merge's guard left rows of an older version unwritten; this names them, for the counts: the
 * records with a version, not written by the merge, whose stored row holds a newer one. Keys and
 * versions go as arrays, each compared with its stored row by a primary-key probe (a correlated
 * subquery; a join with the staging table was planned as a scan of the whole table per chunk),
 * and only the older ones come back.
 */
async function olderThanStored(conn: pg.Client, table: EntityTable, batch: UpsertBatch, written: ReadonlySet<string>): Promise<StaleKeys> {
  const keyField = table.key[0] as string;
  const keys: string[] = [];
  const versions: string[] = [];
  for (const record of batch.records) {
    const version = versionOf(record);
    const key = String(record[keyField]);
    if (version === undefined || written.has(key)) continue;
    keys.push(key);
    versions.push(version);
  }
  const stale: StaleKeys = new Set();
  if (keys.length === 0) return stale;
  const { rows } = await conn.query<{ key: string }>(
    `SELECT s.key FROM unnest($2::text[], $3::text[]) AS s(key, v) WHERE s.v COLLATE "C" < ` +
    `(SELECT t.${quote(VERSION_COLUMN)} FROM ${quote(table.name)} t WHERE t.partner_id = $1 AND t.${quote(keyField)} = s.key)`,
    [batch.partner, keys, versions],
  );
  for (const row of rows) stale.add(row.key);
  return stale;
}

/** Each writer, and the COPY text it renders ahead of its turn (copy-staging; SQLite has nothing to prepare). */
const WRITERS: Record<BulkWriteStrategy, { write: Writer; copyText?: typeof renderCopyText }> = {
  'prepared-rows': { write: preparedRows },
  'copy-staging': { write: copyStaging, copyText: renderCopyText },
};

/**
 * Does the CPU work of an upsert ahead of its turn on the connection: renders PostgreSQL's COPY
 * text (SQLite has nothing to prepare), a chunk at a time with the event loop let in between.
 */
export async function prepareUpsert(store: Store, table: EntityTable, batch: UpsertBatch): Promise<PreparedUpsert> {
  const render = WRITERS[store.dialect.bulkWrite].copyText;
  return !render || batch.records.length === 0 ? { table, batch } : { table, batch, copyText: await render(table, batch, yieldToEventLoop) };
}

/** Writes a prepared upsert inside the caller's transaction; resolves with the keys left unwritten as older than the stored row. */
export async function writeUpsert(store: Store, trx: Knex.Transaction, prepared: PreparedUpsert, storedMayChange: () => Promise<void> = async () => {}): Promise<StaleKeys> {
  if (prepared.batch.records.length === 0) return new Set();
  try {
    return await WRITERS[store.dialect.bulkWrite].write(trx, prepared, storedMayChange);
  } catch (error) {
    // The writers run their statements on the driver's connection: their errors get the store's words too.
    throw rewordDriverError(error, `INSERT INTO ${quote(prepared.table.name)}`);
  }
}
