/**
 * Monthly partitions against one plain table (migration 013's layout, ../src/store/partitions.ts):
 * N gaming-activity rows over 365 days written into both (same columns, primary key and index),
 * then, alternating between the two, 3 rounds of: 10 days replaced (each a DELETE of the day and
 * a COPY of its rows, in one transaction, as a daily load does), a month's report (GROUP BY
 * customer), one customer's year, and the VACUUM that the replacements call for (the whole plain
 * table; the 7 month partitions the days fell in). Medians; wall time and the server backend's
 * CPU time (less sensitive to a shared machine).
 *
 *   node dist/bench/partitions.bench.js [rows=1000000]     (TEST_PG_URL overrides the server)
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { copyLines, median } from './support/pg-bench.js';

const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.argv[2] ?? 1_000_000);
const DAYS = 365;
const GAMES = ['slots', 'live_casino', 'table_games', 'sportsbook', 'poker'];
const COLUMNS = 'partner_id, date, customer_id, game_type, currency, bets_count, total_bets, wins, ggr, ngr, run_id, loaded_at';
const DEFINITION = `(partner_id text NOT NULL, date date NOT NULL, customer_id text NOT NULL, game_type text NOT NULL, currency text NOT NULL,
  bets_count bigint, total_bets numeric, wins numeric, ggr numeric, ngr numeric, run_id text, loaded_at timestamptz NOT NULL)`;
const day = (i: number) => new Date(Date.UTC(2025, 0, 1 + i)).toISOString().slice(0, 10);
const monthStart = (m: number) => new Date(Date.UTC(2025, m, 1)).toISOString().slice(0, 10);

/** Row n: day n % 365, game (n / 365) % 5, customer n / (365 * 5): unique keys; `only` keeps one day's rows. */
function* lines(only?: number): Generator<string> {
  for (let n = 0; n < ROWS; n++) {
    const d = n % DAYS;
    if (only !== undefined && d !== only) continue;
    const bets = (((n * 7919) % 100000) / 100).toFixed(2);
    yield `p1\t${day(d)}\tc${Math.floor(n / (DAYS * 5))}\t${GAMES[Math.floor(n / DAYS) % 5]}\tEUR\t${1 + (n % 300)}\t${bets}\t1.00\t1.00\t0.90\trun\t2026-11-23T00:00:00.000000Z\n`;
  }
}

async function main(): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  const schema = `bench_partitions_${process.pid}`;
  const backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid as number;
  const cpuMs = () => {
    const stat = readFileSync(`/proc/${backend}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  };
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.query(`SET search_path = ${schema}`);
    await client.query(`CREATE TABLE plain ${DEFINITION}`);
    await client.query(`CREATE TABLE part ${DEFINITION} PARTITION BY RANGE (date)`);
    for (let m = 0; m < 12; m++) await client.query(`CREATE TABLE part_p${m} PARTITION OF part FOR VALUES FROM ('${monthStart(m)}') TO ('${monthStart(m + 1)}')`);
    for (const t of ['plain', 'part']) {
      const t0 = performance.now();
      await copyLines(client, `COPY ${t} (${COLUMNS}) FROM STDIN`, () => lines());
      await client.query(`ALTER TABLE ${t} ADD PRIMARY KEY (partner_id, date, customer_id, game_type, currency)`);
      await client.query(`CREATE INDEX ON ${t} (partner_id, customer_id, date)`);
      await client.query(`VACUUM ANALYZE ${t}`);
      console.log(`${t === 'plain' ? 'plain table' : 'partitioned'}: ${ROWS} rows written, indexed and vacuumed in ${((performance.now() - t0) / 1000).toFixed(1)} s (untimed set-up)`);
    }
    const timed = async (work: () => Promise<unknown>) => {
      const c0 = cpuMs();
      const t0 = performance.now();
      await work();
      return { ms: performance.now() - t0, cpu: cpuMs() - c0 };
    };
    const figures = new Map<string, { ms: number; cpu: number }[]>();
    const keep = (name: string, f: { ms: number; cpu: number }) => figures.set(name, [...(figures.get(name) ?? []), f]);
    const touchedMonths = [4, 5, 6, 7, 8, 9, 10];
    for (let round = 0; round < 3; round++) {
      for (const t of ['plain', 'part']) {
        keep(`${t} replace 10 days`, await timed(async () => {
          for (let k = 0; k < 10; k++) {
            const d = 100 + k * 20;
            await client.query('BEGIN');
            await client.query(`DELETE FROM ${t} WHERE partner_id = 'p1' AND date = $1`, [day(d)]);
            await copyLines(client, `COPY ${t} (${COLUMNS}) FROM STDIN`, () => lines(d));
            await client.query('COMMIT');
          }
        }));
        keep(`${t} month report`, await timed(() => client.query(`SELECT customer_id, sum(ggr) FROM ${t} WHERE partner_id = 'p1' AND date >= '2025-06-01' AND date < '2025-07-01' GROUP BY 1`)));
        keep(`${t} customer year`, await timed(() => client.query(`SELECT date, sum(ggr) FROM ${t} WHERE partner_id = 'p1' AND customer_id = 'c42' GROUP BY 1`)));
        keep(`${t} vacuum`, await timed(() => client.query(t === 'plain' ? 'VACUUM plain' : `VACUUM ${touchedMonths.map((m) => `part_p${m}`).join(', ')}`)));
      }
    }
    console.log(`monthly partitions vs one plain table, ${ROWS} activity rows over ${DAYS} days (${Math.round(ROWS / DAYS)} per day), median of 3: wall ms (server CPU ms)`);
    for (const what of ['replace 10 days', 'month report', 'customer year', 'vacuum']) {
      const p = figures.get(`plain ${what}`) ?? [];
      const q = figures.get(`part ${what}`) ?? [];
      const f = (xs: { ms: number; cpu: number }[]) => `${median(xs.map((x) => x.ms)).toFixed(0).padStart(7)} ms (${String(median(xs.map((x) => x.cpu))).padStart(5)})`;
      console.log(`${what.padEnd(16)} plain ${f(p)}   partitioned ${f(q)}   ratio ${(median(q.map((x) => x.ms)) / median(p.map((x) => x.ms))).toFixed(2)}`);
    }
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
}

await main();
