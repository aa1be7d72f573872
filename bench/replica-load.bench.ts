/**
 * Replica load benchmark: N already-aggregated daily gaming-activity rows (default 1,000,000) in a
 * MariaDB replica table, read by a `db` source (client mysql, a daily activity stream over the
 * table) and run through `runPartner` (backfill of all days: read, map, validate, COPY into
 * staging, upsert, day replacement) into a fresh PostgreSQL store schema. Our path runs in a child
 * process, so its peak RSS is its own. Beside it, in the same run and over the same rows:
 *
 * - a raw COPY into an identical table (rows exported from MariaDB untimed; only the COPY timed),
 * - pgloader copying the same table MySQL -> PostgreSQL (the whole command timed; skipped with a
 *   note when pgloader is missing: bench/setup-pgloader.sh installs it),
 * - the rerun over the full store after every source row changed (every row an update),
 * - PostgreSQL's floors over the same COPY text, nothing else running: COPY into a table without
 *   indexes with the indexes built afterwards (how pgloader loads), the rerun as one transaction
 *   deleting every day and copying every row again, and as one UPDATE of every row in place.
 *
 * Figures are rows/s and ratios to the raw COPY of this run.
 *
 *   bash bench/setup-pgloader.sh
 *   node dist/bench/replica-load.bench.js [rows] [page_size]
 *     (TEST_MYSQL_URL, TEST_PG_URL override the servers; PGLOADER=0 skips pgloader;
 *      BENCH_CHILD_NODE_ARGS adds node flags to the child running our path, e.g. --cpu-prof;
 *      BENCH_RERUN=0 skips the rerun phase; BENCH_MEM_SAMPLE=1 prints the child's memoryUsage() at its peak RSS;
 *      BENCH_SETTLE_EVERY=n settles a bulk run's jobs every n records instead of SETTLE_EVERY;
 *      BENCH_HOOKS=1 runs our path with every after-load job, as the CLI and the worker do: fraud
 *      detection with config/fraud.yaml, the commission job with config/commissions.yaml's iGaming
 *      plans applied to the bench partner, the phase history and the report facts. Without it
 *      (the default) the Loader has no hooks: the load path alone, which is what pgloader does.)
 */
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { DAY_PAGE_MAX } from '../connectors/db/source.js';
import { replicaFloors } from './support/pg-floors.js';
import { shippedHooks } from './support/shipped-jobs.js';
import { procCpuMs } from './support/proc-cpu.js';
import { runPartner } from '../jobs/run-partner.js';
import { addDays } from '../src/kernel/dates.js';
import { loadDefinition } from '../src/config/load-definitions.js';
import { noRedaction, silentLogger } from '../src/log.js';
import { Loader } from '../src/pipeline/load.js';
import { createSpecValidator } from '../src/spec/validator.js';
import { recordToRow } from '../src/store/rows.js';
import { openStore } from '../src/store/store.js';
import { entityTable } from '../src/store/tables.js';
import type { RawRecord, SpecRecord } from '../src/types.js';
import { launcherFlags } from './support/launcher.js';

const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PARTNER = 'bench-replica';
const DAYS = 30;
const FIRST_DAY = '2026-01-01';
const LAST_DAY = addDays(FIRST_DAY, DAYS - 1);
const GAMES = ['slots', 'live_casino', 'table_games', 'sportsbook', 'poker'];
/** Rows per customer: one per day and game type. */
const PER_CUSTOMER = DAYS * GAMES.length;

/** Extra node flags for the child (e.g. `--cpu-prof --cpu-prof-dir=prof` to see where our time goes). */
const CHILD_NODE_ARGS = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
const rate = (rows: number, ms: number) => Math.round(rows / (ms / 1000));
const HOOKS = process.env.BENCH_HOOKS === '1';
/** Our path's connections carry this application_name, so their server processes' CPU can be read. */
const OURS_APP = `ps_bench_ours_${process.argv[2] === '--child' ? process.ppid : process.pid}`;
const storeUrl = (schema: string) => `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}&application_name=${OURS_APP}`;

/**
 * CPU time the servers spend on one phase, which unlike wall time does not depend on what else the
 * machine runs: PostgreSQL backends of an application_name (sampled every 100 ms while they live,
 * since they exit with their client) and the MariaDB server process (its whole delta: other users
 * of that server count too).
 */
class ServerCpu {
  private readonly seen = new Map<number, { first: number; last: number }>();
  private timer?: NodeJS.Timeout;
  private mariaStart = 0;
  private constructor(private readonly probe: pg.Client, private readonly app: string, private readonly mariaPid: number | undefined, private readonly preexisting: boolean) {}

  /** `preexisting`: count only the CPU used from now on by backends already running (else a backend's whole life). */
  static async start(app: string, preexisting = false): Promise<ServerCpu> {
    const probe = new pg.Client({ connectionString: PG_URL });
    await probe.connect();
    const maria = spawnSync('pgrep', ['-x', 'mariadbd'], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
    const cpu = new ServerCpu(probe, app, maria ? Number(maria) : undefined, preexisting);
    cpu.mariaStart = cpu.mariaPid ? procCpuMs(cpu.mariaPid) ?? 0 : 0;
    await cpu.sample();
    cpu.timer = setInterval(() => void cpu.sample().catch(() => undefined), 100);
    return cpu;
  }

  private async sample(): Promise<void> {
    const { rows } = await this.probe.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [this.app]);
    for (const { pid } of rows) {
      const ms = procCpuMs(pid);
      if (ms === undefined) continue;
      const s = this.seen.get(pid);
      if (s) s.last = ms;
      else this.seen.set(pid, { first: this.preexisting ? ms : 0, last: ms });
    }
  }

  /** PostgreSQL and MariaDB CPU seconds of the phase. */
  async stop(): Promise<{ pg: number; maria: number }> {
    clearInterval(this.timer);
    await this.sample();
    await this.probe.end();
    let pgMs = 0;
    for (const s of this.seen.values()) pgMs += s.last - s.first;
    const maria = this.mariaPid ? (procCpuMs(this.mariaPid) ?? this.mariaStart) - this.mariaStart : 0;
    return { pg: pgMs / 1000, maria: maria / 1000 };
  }
}

interface PhaseCpu { client: number; pg: number; maria: number }

interface ChildResult {
  ms: number;
  peakRssMb: number;
  counts: Record<string, number>;
  statuses: string[];
  errors: string[];
  runIds: string[];
  liveHeapMaxMb?: number;
  /** CPU seconds of the child process (user + system) in the timed section. */
  cpuS: number;
}

/** The definition our path runs: the replica's daily activity table, mapped to the igaming spec. */
function definitionYaml(pageSize: number): string {
  return `partner: ${PARTNER}
variant: igaming
source:
  type: db
  client: mysql
  url: \${BENCH_REPLICA_URL}
  page_size: ${pageSize}
  safety_lag: PT5S
  timezone: UTC
  statement_timeout: PT30M
  run_budget: PT2H
streams:
  activity:
    table: daily_gaming
    date_column: date
    incremental:
      mode: daily
      late_days: ${DAYS}
      start: ${FIRST_DAY}
    mapping:
      fields:
        bets_count: { number: true }
        total_bets: { number: true }
        wins: { number: true }
        ggr: { number: true }
        ngr: { number: true }
    schedule: "15 2 * * *"
affiliates:
  map: {}
  unmapped: keep
`;
}

/** Child: one backfill of every day through runPartner; prints its own time and peak RSS. */
async function child(schema: string, replicaUrl: string, pageSize: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'partner-sync-replica-bench-'));
  const store = await openStore({ url: storeUrl(schema) });
  try {
    const file = join(dir, `${PARTNER}.yaml`);
    writeFileSync(file, definitionYaml(pageSize));
    const loaded = await loadDefinition(file, { ...process.env, BENCH_REPLICA_URL: replicaUrl });
    if (!loaded.definition) throw new Error(JSON.stringify(loaded.errors));
    // BENCH_SETTLE_EVERY: records a bulk run loads between two settles (default SETTLE_EVERY, src/pipeline/load.ts).
    const settleEvery = Number(process.env.BENCH_SETTLE_EVERY ?? '') || undefined;
    const loader = new Loader({ store, validator: createSpecValidator(), ...(HOOKS ? await shippedHooks(store, PARTNER) : {}), ...(settleEvery ? { settleEvery } : {}) });
    // BENCH_HEAP_PROBE=1 (child run with --expose-gc): the live heap after a full GC every 20 pages,
    // to tell memory held by the load path from garbage not yet collected. Diagnostic only: slows the run.
    const gc = (globalThis as { gc?: () => void }).gc;
    let pages = 0;
    let liveMaxMb = 0;
    const progress = process.env.BENCH_HEAP_PROBE === '1' && gc ? () => {
      if (++pages % 20 !== 0) return;
      gc();
      liveMaxMb = Math.max(liveMaxMb, Math.round(process.memoryUsage().heapUsed / 1048576));
    } : undefined;
    // BENCH_MEM_SAMPLE=1: process.memoryUsage() every 100 ms; the breakdown at the highest RSS seen (stderr).
    let memPeak: NodeJS.MemoryUsage | undefined;
    const memMax = { heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
    const sampler = process.env.BENCH_MEM_SAMPLE === '1' ? setInterval(() => {
      const m = process.memoryUsage();
      if (!memPeak || m.rss > memPeak.rss) memPeak = m;
      for (const k of Object.keys(memMax) as (keyof typeof memMax)[]) memMax[k] = Math.max(memMax[k], m[k]);
    }, 100) : undefined;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const results = await runPartner({ loader, clock: store.clock, logger: silentLogger(), redact: noRedaction, progress },
      loaded.definition, { kind: 'backfill', from: FIRST_DAY, to: LAST_DAY }, 'activity');
    const ms = performance.now() - t0;
    if (sampler) {
      clearInterval(sampler);
      const mb = (n: number) => Math.round(n / 1048576);
      if (memPeak) process.stderr.write(`memory at peak RSS sample: rss ${mb(memPeak.rss)} heapTotal ${mb(memPeak.heapTotal)} heapUsed ${mb(memPeak.heapUsed)} external ${mb(memPeak.external)} arrayBuffers ${mb(memPeak.arrayBuffers)} MB; maxima: heapTotal ${mb(memMax.heapTotal)} heapUsed ${mb(memMax.heapUsed)} external ${mb(memMax.external)} arrayBuffers ${mb(memMax.arrayBuffers)} MB\n`);
    }
    const counts: Record<string, number> = {};
    for (const r of results) for (const [k, v] of Object.entries(r.counts)) counts[k] = (counts[k] ?? 0) + Number(v);
    const out: ChildResult = {
      ms, peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024), counts, cpuS: (process.cpuUsage(cpu0).user + process.cpuUsage(cpu0).system) / 1e6,
      statuses: results.map((r) => r.status), runIds: results.map((r) => r.runId), liveHeapMaxMb: progress ? liveMaxMb : undefined, errors: results.flatMap((r) => (r.error ? [r.error] : [])),
    };
    process.stdout.write(`RESULT ${JSON.stringify(out)}\n`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every after-load job with the shipped configuration; the iGaming commission plans name the bench partner. */
function runChild(schema: string, replicaUrl: string, pageSize: number): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...launcherFlags(), ...CHILD_NODE_ARGS, fileURLToPath(import.meta.url), '--child', schema, replicaUrl, String(pageSize)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    proc.on('error', reject);
    proc.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code !== 0 || line === undefined) reject(new Error(`child exited ${code}: ${out}`));
      else resolve(JSON.parse(line.slice('RESULT '.length)) as ChildResult);
    });
  });
}

/** A MariaDB database with the daily activity table, filled with `rows` rows in one INSERT ... SELECT. */
async function createReplica(db: string, rows: number): Promise<mysql.Connection> {
  const admin = await mysql.createConnection(MYSQL_URL);
  await admin.query(`CREATE DATABASE ${db}`);
  await admin.end();
  const conn = await mysql.createConnection(`${MYSQL_URL}/${db}`);
  await conn.query("SET time_zone = '+00:00'");
  await conn.query(`CREATE TABLE daily_gaming (
    date DATE NOT NULL, customer_id VARCHAR(32) NOT NULL, game_type VARCHAR(32) NOT NULL, currency CHAR(3) NOT NULL,
    bets_count INT NOT NULL, total_bets DECIMAL(14,2) NOT NULL, wins DECIMAL(14,2) NOT NULL, ggr DECIMAL(14,2) NOT NULL, ngr DECIMAL(14,2) NOT NULL,
    PRIMARY KEY (date, customer_id, game_type, currency))`);
  const games = `ELT(1 + (n DIV ${DAYS}) % ${GAMES.length}, ${GAMES.map((g) => `'${g}'`).join(', ')})`;
  // row n: day n % DAYS, game (n / DAYS) % games, customer n / (DAYS * games): the key is unique.
  // One statement per million rows keeps each transaction moderate.
  const CHUNK = 1_000_000;
  for (let start = 0; start < rows; start += CHUNK) {
    const end = Math.min(rows, start + CHUNK) - 1;
    await conn.query(`INSERT INTO daily_gaming
      SELECT DATE('${FIRST_DAY}') + INTERVAL (n % ${DAYS}) DAY, CONCAT('c', n DIV ${PER_CUSTOMER}), ${games}, 'EUR',
             1 + n % 300, tb, w, tb - w, ROUND((tb - w) * 0.9, 2)
        FROM (SELECT seq AS n, ROUND(((seq * 7919) % 100000) / 100, 2) AS tb, ROUND(ROUND(((seq * 7919) % 100000) / 100, 2) * 0.93, 2) AS w
                FROM seq_${start}_to_${end}) s`);
  }
  return conn;
}

/** The customers the activity refers to, through the load path (untimed): unknown customers would park their activity. */
async function loadCustomers(schema: string, rows: number): Promise<void> {
  const store = await openStore({ url: storeUrl(schema) });
  try {
    const loader = new Loader({ store, validator: createSpecValidator() });
    const customers = Math.ceil(rows / PER_CUSTOMER);
    for (let start = 0; start < customers; start += 5000) {
      const records: RawRecord[] = Array.from({ length: Math.min(5000, customers - start) }, (_, k) => ({
        position: k + 1,
        value: { customer_id: `c${start + k}`, signup_date: '2025-12-01T00:00:00Z', affiliate_id: 'a1' },
      }));
      await loader.load({ partner: PARTNER, variant: 'igaming', entity: 'customers', runId: 'bench', records });
    }
  } finally {
    await store.close();
  }
}

/**
 * Raw COPY baseline: the same rows streamed from MariaDB and rendered as store rows into a file
 * (untimed), then one COPY of that file into an identical table (timed). Memory stays flat at any
 * row count: rows are streamed, never held.
 */
async function rawCopy(conn: mysql.Connection, admin: pg.Client, schema: string, dir: string): Promise<{ ms: number; rows: number; cpu: PhaseCpu; rerunFloor: { ms: number; cpu: PhaseCpu }; updateFloor: { ms: number; cpu: PhaseCpu }; indexAfter: { ms: number; cpu: PhaseCpu } }> {
  const table = entityTable('igaming', 'activity');
  const now = new Date().toISOString().replace('Z', '000Z');
  const file = join(dir, 'baseline.copy');
  const out = createWriteStream(file);
  // The promise wrapper's underlying connection streams rows.
  const rows = (conn as unknown as { connection: import('mysql2').Connection }).connection
    .query("SELECT DATE_FORMAT(date, '%Y-%m-%d') AS date, customer_id, game_type, currency, bets_count, total_bets, wins, ggr, ngr FROM daily_gaming")
    .stream({ highWaterMark: 1000 });
  async function* lines(): AsyncGenerator<string> {
    let text = '';
    let n = 0;
    for await (const row of rows) {
      const r = row as Record<string, unknown>;
      const record: SpecRecord = {
        date: r.date as string, customer_id: r.customer_id as string, game_type: r.game_type as string, currency: r.currency as string,
        bets_count: Number(r.bets_count), total_bets: Number(r.total_bets), wins: Number(r.wins), ggr: Number(r.ggr), ngr: Number(r.ngr),
      };
      text += recordToRow(table, PARTNER, record, 'bench', now).map((v) => (v === null ? '\\N' : String(v))).join('\t') + '\n';
      if (++n % 10_000 === 0) {
        yield text;
        text = '';
      }
    }
    if (text !== '') yield text;
  }
  await pipeline(Readable.from(lines()), out);
  await admin.query(`CREATE TABLE ${schema}.baseline (LIKE ${schema}.${table.name} INCLUDING ALL)`);
  const backend = (await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid as number;
  // Wall time with this process's CPU and its server backend's.
  const timed = async (work: () => Promise<void>): Promise<{ ms: number; cpu: PhaseCpu }> => {
    const pg0 = procCpuMs(backend) ?? 0;
    const c0 = process.cpuUsage();
    const started = performance.now();
    await work();
    const c = process.cpuUsage(c0);
    return { ms: performance.now() - started, cpu: { client: (c.user + c.system) / 1e6, pg: ((procCpuMs(backend) ?? pg0) - pg0) / 1000, maria: 0 } };
  };
  const { ms, cpu } = await timed(() => pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), admin.query(copyFrom(`COPY ${schema}.baseline FROM STDIN`))));
  const n = await admin.query(`SELECT count(*)::int AS n FROM ${schema}.baseline`);
  const floors = await replicaFloors(admin, { schema, storeTable: table.name, baseline: 'baseline', file, partner: PARTNER }, timed);
  rmSync(file, { force: true });
  return { ms, rows: n.rows[0].n as number, cpu, ...floors };
}

/** pgloader of the same table MySQL -> PostgreSQL, into its own schema; the whole command timed. */
async function pgloaderCopy(db: string, schema: string): Promise<{ ms: number; note?: string; cpu?: PhaseCpu }> {
  if (process.env.PGLOADER === '0') return { ms: NaN, note: 'skipped (PGLOADER=0)' };
  const probe = spawnSync('pgloader', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return { ms: NaN, note: 'skipped: pgloader is not installed (run bash bench/setup-pgloader.sh as root)' };
  const dir = mkdtempSync(join(tmpdir(), 'partner-sync-pgloader-'));
  try {
    const mysqlUrl = `${MYSQL_URL}/${db}`;
    const pgUrl = PG_URL.replace(/^postgres:/, 'postgresql:');
    const file = join(dir, 'load.pgl');
    writeFileSync(file, `LOAD DATABASE
  FROM ${mysqlUrl}
  INTO ${pgUrl}
  WITH include drop, create tables, create indexes, reset sequences
  INCLUDING ONLY TABLE NAMES MATCHING 'daily_gaming'
  ALTER SCHEMA '${db}' RENAME TO '${schema}';
`);
    const servers = await ServerCpu.start('pgloader');
    const children0 = procCpuMs('self-children') ?? 0;
    const t0 = performance.now();
    // Run asynchronously: the CPU probe samples its server backends meanwhile.
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const proc = spawn('pgloader', ['--no-ssl-cert-verification', '--root-dir', dir, file], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      proc.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
      proc.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
      proc.on('error', reject);
      proc.on('close', (status) => resolve({ status, stdout, stderr }));
    });
    const ms = performance.now() - t0;
    const server = await servers.stop();
    const cpu: PhaseCpu = { client: ((procCpuMs('self-children') ?? children0) - children0) / 1000, ...server };
    if (run.status !== 0) return { ms: NaN, note: `failed (exit ${run.status}): ${(run.stderr || run.stdout).split('\n').filter((l) => /error|fatal/i.test(l)).slice(0, 3).join(' | ') || run.stderr.slice(-400)}` };
    return { ms, cpu };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const ROWS = Number(process.argv[2] ?? 1_000_000);
  const PAGE = Number(process.argv[3] ?? 5_000);
  const tag = `${process.pid}`;
  const db = `ps_bench_replica_${tag}`;
  const schema = `bench_replica_${tag}`;
  const pglSchema = `bench_pgloader_${tag}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const workDir = mkdtempSync(join(tmpdir(), 'partner-sync-replica-bench-'));
  let conn: mysql.Connection | undefined;
  try {
    let t0 = performance.now();
    conn = await createReplica(db, ROWS);
    const fillMs = performance.now() - t0;
    await admin.query(`CREATE SCHEMA ${schema}`);
    await loadCustomers(schema, ROWS);

    const copy = await rawCopy(conn, admin, schema, workDir);
    if (copy.rows !== ROWS) throw new Error(`COPY baseline holds ${copy.rows} rows, expected ${ROWS}`);
    await admin.query(`DROP TABLE ${schema}.baseline`);
    const pgl = await pgloaderCopy(db, pglSchema);
    let pglRows: number | undefined;
    if (!Number.isNaN(pgl.ms)) pglRows = (await admin.query(`SELECT count(*)::int AS n FROM ${pglSchema}.daily_gaming`)).rows[0].n as number;

    const replicaUrl = `${MYSQL_URL}/${db}`;
    const ours = async () => {
      const servers = await ServerCpu.start(OURS_APP);
      const result = await runChild(schema, replicaUrl, PAGE);
      return { ...result, cpu: { client: result.cpuS, ...(await servers.stop()) } };
    };
    const cpuLine = (name: string, cpu: PhaseCpu | undefined) => cpu === undefined ? '' :
      `  CPU ${name.padEnd(10)} client ${cpu.client.toFixed(1).padStart(6)} s  PostgreSQL ${cpu.pg.toFixed(1).padStart(6)} s  MariaDB ${cpu.maria.toFixed(1).padStart(6)} s  = ${(((cpu.client + cpu.pg + cpu.maria) * 1e6) / ROWS).toFixed(1).padStart(5)} us/row`;
    const first = await ours();
    const stored = async () => (await admin.query(`SELECT count(*)::int AS n FROM ${schema}.gaming_activity`)).rows[0].n as number;
    const afterFirst = await stored();
    if (process.env.BENCH_RERUN === '0') {
      console.log(cpuLine('first', first.cpu));
      console.log(`hooks ${HOOKS ? 'on' : 'off'}; our path, empty store (all inserts): ${rate(ROWS, first.ms)} rows/s   ${(rate(ROWS, first.ms) / rate(ROWS, copy.ms)).toFixed(2)} x COPY (COPY ${rate(ROWS, copy.ms)} rows/s)   ${(first.ms / 1000).toFixed(2)} s   peak RSS ${first.peakRssMb} MB; store rows ${afterFirst}; rerun skipped (BENCH_RERUN=0)`);
      if (afterFirst !== ROWS) throw new Error(`expected ${ROWS} rows in the store, found ${afterFirst}`);
      return;
    }
    t0 = performance.now();
    await conn.query('UPDATE daily_gaming SET total_bets = total_bets + 1, ggr = ggr + 1, ngr = ROUND((ggr) * 0.9, 2)');
    const updateSourceMs = performance.now() - t0;
    const rerun = await ours();
    const afterRerun = await stored();
    const changed = (await admin.query(`SELECT count(*)::int AS n FROM ${schema}.gaming_activity WHERE run_id = ANY($1)`, [rerun.runIds])).rows[0].n as number;

    const [srcSum] = await conn.query('SELECT CAST(SUM(total_bets) AS CHAR) AS s FROM daily_gaming');
    const storeSum = (await admin.query(`SELECT SUM(total_bets)::text AS s FROM ${schema}.gaming_activity`)).rows[0].s as string;
    const sourceSum = (srcSum as { s: string }[])[0]?.s;

    const copyRate = rate(ROWS, copy.ms);
    const line = (name: string, ms: number, rss?: number) => {
      if (Number.isNaN(ms)) return `${name.padEnd(46)} ${'-'.padStart(9)}`;
      const r = rate(ROWS, ms);
      const vsPgloader = Number.isNaN(pgl.ms) ? '' : `   ${(r / rate(ROWS, pgl.ms)).toFixed(2)} x pgloader`;
      return `${name.padEnd(46)} ${String(r).padStart(9)} rows/s   ${(r / copyRate).toFixed(2)} x COPY${vsPgloader}   ${(ms / 1000).toFixed(2).padStart(7)} s` +
        (rss === undefined ? '' : `   peak RSS ${rss} MB`);
    };
    console.log(`replica load benchmark: ${ROWS} daily gaming activity rows (${DAYS} days, ${Math.ceil(ROWS / PER_CUSTOMER)} customers), MariaDB -> PostgreSQL store, page_size ${PAGE} (days read in pages of ${Math.min(PAGE, DAY_PAGE_MAX)}); after-load hooks ${HOOKS ? 'ON (fraud, commission, phase history, report facts)' : 'OFF (the load path alone; BENCH_HOOKS=1 adds them)'}`);
    console.log(`  (MariaDB fill ${(fillMs / 1000).toFixed(1)} s, source UPDATE of every row ${(updateSourceMs / 1000).toFixed(1)} s: untimed)`);
    console.log(line('baseline: raw COPY into an identical table', copy.ms));
    console.log(line('floor: COPY, no indexes, indexes built after', copy.indexAfter.ms) + '   (how pgloader loads: create tables, create indexes)');
    console.log(line('floor: rerun, DELETE every day + COPY again', copy.rerunFloor.ms) + '   (one transaction, indexes maintained per row)');
    console.log(line('floor: rerun, UPDATE every row in place', copy.updateFloor.ms) + '   (one statement, no new values to join)');
    console.log(line('pgloader mysql:// -> postgresql:// same table', pgl.ms) + (pgl.note ? `   ${pgl.note}` : '') + (pglRows !== undefined && pglRows !== ROWS ? `   (only ${pglRows} rows!)` : ''));
    console.log(line('our path, empty store (all inserts)', first.ms, first.peakRssMb));
    console.log(line('our path, rerun, every row an update', rerun.ms, rerun.peakRssMb));
    console.log('  CPU seconds per phase (wall time depends on what else the machine runs; CPU much less). MariaDB: the whole server process, other users included; COPY: its server backend only');
    console.log(cpuLine('COPY', copy.cpu));
    console.log(cpuLine('no index', copy.indexAfter.cpu));
    console.log(cpuLine('rerun floor', copy.rerunFloor.cpu));
    console.log(cpuLine('update floor', copy.updateFloor.cpu));
    console.log(cpuLine('pgloader', pgl.cpu));
    console.log(cpuLine('first', first.cpu));
    console.log(cpuLine('rerun', rerun.cpu));
    if (first.liveHeapMaxMb !== undefined) console.log(`  live heap after GC, max: first run ${first.liveHeapMaxMb} MB, rerun ${rerun.liveHeapMaxMb} MB (${Math.round(ROWS / DAYS)} rows per day, one transaction each)`);
    console.log(`  first run: ${first.statuses.join(',')} ${JSON.stringify(first.counts)}${first.errors.length ? ' ' + first.errors.join('; ') : ''}; store rows ${afterFirst}`);
    console.log(`  rerun:     ${rerun.statuses.join(',')} ${JSON.stringify(rerun.counts)}${rerun.errors.length ? ' ' + rerun.errors.join('; ') : ''}; store rows ${afterRerun}, written by the rerun ${changed}`);
    console.log(`  SUM(total_bets) after the rerun: source ${sourceSum}, store ${storeSum}`);
    if (Number(sourceSum) !== Number(storeSum)) throw new Error('the store does not hold the updated source values');
    if (afterFirst !== ROWS || afterRerun !== ROWS) throw new Error(`expected ${ROWS} rows in the store, found ${afterFirst} then ${afterRerun}`);
  } finally {
    await conn?.end();
    const m = await mysql.createConnection(MYSQL_URL);
    await m.query(`DROP DATABASE IF EXISTS ${db}`);
    await m.end();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${pglSchema} CASCADE`);
    await admin.end();
    rmSync(workDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') await child(process.argv[3] as string, process.argv[4] as string, Number(process.argv[5]));
else await main();
