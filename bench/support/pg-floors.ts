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
import { procCpuMs } from './proc-cpu.js';

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

/**
 * The push benchmark's floor with the report facts, on the store's own tables in `schema` (the
 * deposits' customers stored): what PostgreSQL does at the least for new approved deposits whose
 * reports must be exact when their transaction commits. Per transaction of `perTransaction` lines
 * (COPY text rows of the transactions table): COPY into a temporary table, the upsert; one read of
 * the deposit customers' stored FTD (a deposit older than it becomes their FTD); their depositor
 * days inserted; the deposits' sums added to the day cells they fall in; COMMIT. That is less than
 * any exact update does (no stored versions read, no FTD or month cell written, no commission): a
 * lower bound. The connections in `lanes` run transactions side by side, each taking every
 * lanes.length-th group; side by side, two transactions must not both take a customer's stored FTD
 * as the one to compare with, so `lockCustomers` makes that read lock the customers' rows (FOR NO
 * KEY UPDATE, in key order), the least that keeps the FTD exact. The partner's transactions, depositor days and cells are deleted first.
 * Returns the wall time and the CPU of the lanes' server backends (Linux /proc).
 */
export async function pushFactsFloor(lanes: readonly pg.Client[], schema: string, partner: string, lines: readonly string[], perTransaction: number,
  options: { lockCustomers?: boolean } = {}): Promise<{ ms: number; pgCpuMs: number }> {
  const first = lanes[0] as pg.Client;
  const columnsOf = async (table: string) => (await first.query('SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position', [schema, table]))
    .rows.map((r: { column_name: string }) => r.column_name);
  const txSet = (await columnsOf('transactions')).filter((c) => c !== 'partner_id' && c !== 'transaction_id').map((c) => `${c} = excluded.${c}`).join(', ');
  const cellKey = ['partner_id', 'day', 'affiliate_id', 'campaign_id'];
  const cellValues = (await columnsOf('report_cells')).filter((c) => !cellKey.includes(c))
    .map((c) => [c, c === 'deposit_count' ? 'count(*)' : c === 'deposits_usd' ? 'sum(coalesce(s.amount_usd, s.amount_currency))' : '0'] as const);
  for (const table of ['transactions', 'report_depositors', 'report_cells']) await first.query(`DELETE FROM ${schema}.${table} WHERE partner_id = $1`, [partner]);
  const day = "(s.transaction_date AT TIME ZONE 'UTC')::date";
  const backends = await Promise.all(lanes.map(async (c) => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid as number));
  const cpu0 = backends.map((pid) => procCpuMs(pid) ?? 0);
  const started = performance.now();
  await Promise.all(lanes.map(async (client, lane) => {
    for (let r = lane * perTransaction; r < lines.length; r += lanes.length * perTransaction) {
      await client.query('BEGIN');
      await client.query(`CREATE TEMP TABLE IF NOT EXISTS floor_push (LIKE ${schema}.transactions) ON COMMIT DELETE ROWS`);
      await pipeline(Readable.from([lines.slice(r, r + perTransaction).join('\n') + '\n']), client.query(copyFrom('COPY floor_push FROM STDIN')));
      await client.query(`INSERT INTO ${schema}.transactions SELECT * FROM floor_push ON CONFLICT (partner_id, transaction_id) DO UPDATE SET ${txSet}`);
      if (options.lockCustomers) {
        await client.query(`SELECT f.* FROM ${schema}.customers c LEFT JOIN ${schema}.report_ftd f ON f.partner_id = c.partner_id AND f.customer_id = c.customer_id
          WHERE c.partner_id = $1 AND c.customer_id IN (SELECT customer_id FROM floor_push) ORDER BY c.customer_id FOR NO KEY UPDATE OF c`, [partner]);
      } else {
        await client.query(`SELECT f.* FROM (SELECT DISTINCT customer_id FROM floor_push) k LEFT JOIN ${schema}.report_ftd f ON f.partner_id = $1 AND f.customer_id = k.customer_id`, [partner]);
      }
      await client.query(`INSERT INTO ${schema}.report_depositors (partner_id, day, customer_id, affiliate_id, campaign_id)
        SELECT DISTINCT s.partner_id, ${day}, s.customer_id, c.affiliate_id, coalesce(c.campaign_id, '') FROM floor_push s
        JOIN ${schema}.customers c ON c.partner_id = s.partner_id AND c.customer_id = s.customer_id
        ORDER BY 2, 3 ON CONFLICT DO NOTHING`);
      await client.query(`INSERT INTO ${schema}.report_cells (${[...cellKey, ...cellValues.map(([c]) => c)].join(', ')})
        SELECT s.partner_id, ${day}, c.affiliate_id, coalesce(c.campaign_id, ''), ${cellValues.map(([, v]) => v).join(', ')} FROM floor_push s
        JOIN ${schema}.customers c ON c.partner_id = s.partner_id AND c.customer_id = s.customer_id
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (${cellKey.join(', ')}) DO UPDATE SET deposit_count = report_cells.deposit_count + excluded.deposit_count, deposits_usd = report_cells.deposits_usd + excluded.deposits_usd`);
      await client.query('COMMIT');
    }
  }));
  const ms = performance.now() - started;
  const pgCpuMs = backends.reduce((sum, pid, k) => sum + (procCpuMs(pid) ?? 0) - (cpu0[k] as number), 0);
  return { ms, pgCpuMs };
}
