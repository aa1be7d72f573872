/**
 * PostgreSQL's floors: the least PostgreSQL itself does for one way of writing the rows a
 * benchmark loads, with nothing else running (no validation, no hooks, no client work but
 * streaming the same COPY text). A target under its floor cannot be met by any implementation
 * that does that kind of write; the benchmarks print them beside their baselines.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/** Runs `work` and returns its wall time with whatever the caller measures beside it (CPU). */
export type Timed<T> = (work: () => Promise<void>) => Promise<T>;

/**
 * The replica benchmark's floors, over `baseline` (a table like the store's `storeTable`, holding
 * the COPY text of `file`, partner `partner`):
 * - rerunFloor: a rerun whose every row changed, replacing the days: one transaction deleting every
 *   day and copying every row again (indexes maintained row by row, as in the store);
 * - updateFloor: the same rerun as one UPDATE of every row in place (not even a join with new
 *   values: the least an UPDATE ... FROM staged rows or a MERGE would do);
 * - indexAfter: pgloader's way (its command says create tables, create indexes): COPY into a table
 *   without indexes, then the same indexes built over the loaded rows.
 */
export async function replicaFloors<T>(admin: pg.Client, where: { schema: string; storeTable: string; baseline: string; file: string; partner: string }, timed: Timed<T>):
  Promise<{ rerunFloor: T; updateFloor: T; indexAfter: T }> {
  const { schema, baseline, partner } = where;
  const copyInto = (target: string) => pipeline(createReadStream(where.file, { highWaterMark: 1 << 20 }), admin.query(copyFrom(`COPY ${target} FROM STDIN`)));
  const rerunFloor = await timed(async () => {
    await admin.query('BEGIN');
    await admin.query(`DELETE FROM ${schema}.${baseline} WHERE partner_id = $1`, [partner]);
    await copyInto(`${schema}.${baseline}`);
    await admin.query('COMMIT');
  });
  const updateFloor = await timed(async () => {
    await admin.query(`UPDATE ${schema}.${baseline} SET total_bets = total_bets + 1, ggr = ggr + 1 WHERE partner_id = $1`, [partner]);
  });
  const bare = `${baseline}_bare`;
  const indexes = (await admin.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2`, [schema, baseline])).rows.map((r: { indexdef: string }) => r.indexdef);
  await admin.query(`CREATE TABLE ${schema}.${bare} (LIKE ${schema}.${where.storeTable} INCLUDING DEFAULTS)`);
  const indexAfter = await timed(async () => {
    await copyInto(`${schema}.${bare}`);
    for (const def of indexes) await admin.query(def.replace(/^(CREATE (?:UNIQUE )?INDEX )(\S+)/, '$1$2_bare').replace(` ON ${schema}.${baseline} `, ` ON ${schema}.${bare} `));
  });
  await admin.query(`DROP TABLE ${schema}.${bare}`);
  return { rerunFloor, updateFloor, indexAfter };
}

/**
 * The push benchmark's floor: `lines` (COPY text rows of `table`) upserted `perTransaction` at a
 * time, each in its own transaction: COPY into a temporary table, INSERT ... ON CONFLICT (key) DO
 * UPDATE every other column, COMMIT. Returns the wall time in ms; `table` is emptied first.
 */
export async function upsertFloor(admin: pg.Client, table: string, key: readonly string[], lines: readonly string[], perTransaction: number): Promise<number> {
  const [schema, name] = table.split('.') as [string, string];
  const columns = (await admin.query('SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position', [schema, name]))
    .rows.map((r: { column_name: string }) => r.column_name).filter((c: string) => !key.includes(c));
  await admin.query(`TRUNCATE ${table}`);
  const started = performance.now();
  for (let r = 0; r < lines.length; r += perTransaction) {
    await admin.query('BEGIN');
    await admin.query(`CREATE TEMP TABLE IF NOT EXISTS floor_stage (LIKE ${table}) ON COMMIT DELETE ROWS`);
    await pipeline(Readable.from([lines.slice(r, r + perTransaction).join('\n') + '\n']), admin.query(copyFrom('COPY floor_stage FROM STDIN')));
    await admin.query(`INSERT INTO ${table} SELECT * FROM floor_stage ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${columns.map((c: string) => `${c} = excluded.${c}`).join(', ')}`);
    await admin.query('COMMIT');
  }
  return performance.now() - started;
}
