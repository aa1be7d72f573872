/**
 * The whole pipeline against a raw COPY of the same records: one iGaming partner's generated month
 * (the sandbox's generator, seed 1, October 2026) imported entity by entity with `importFile`,
 * the code behind `partner-sync import`, with every after-load job on, with none, and with each job
 * alone; on PostgreSQL and on SQLite. The baseline, in the same run: the same records, one JSON
 * document per row, COPY'd into a table of one jsonb column.
 *
 *   node dist/bench/pipeline.bench.js [customers=20000]
 *   BENCH_MODES=all,none node dist/bench/pipeline.bench.js 5000     (modes: all, none, fraud, commissions, facts, phases, postbacks)
 *   BENCH_STORES=postgres                                          (postgres, sqlite; default both)
 *   BENCH_PHASES=1                                                 (time per hook, from the hooks' own clocks)
 *   BENCH_QUERIES=1                                                (time per statement shape, from knex's query events)
 *   BENCH_FLOOR=1                                                  (PostgreSQL: the jobs' state written once, set-based: the floor under the jobs)
 *   BENCH_CLI=1                                                    (first, PostgreSQL: the month by the `partner-sync import` command itself, process start to exit,
 *                                                                   as one command of the three files and as three commands)
 *   BENCH_TOGETHER=1                                               (one import of the three files, settled once at the end: `import --customers F --transactions F --activity F`,
 *                                                                   as `run` and `backfill` settle a partner's streams; without it, three `import --entity E FILE`)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import pg from 'pg';
import { commissionJob } from '../jobs/commission.js';
import { fraudJob } from '../jobs/fraud.js';
import { importFile, importFiles, type ImportSummary } from '../jobs/import-file.js';
import { afterLoadJobs } from '../jobs/load-hooks.js';
import type { AfterLoadJob } from '../src/pipeline/jobs.js';
import { phaseHistoryJob } from '../jobs/phase-history.js';
import { postbackJob } from '../jobs/postbacks.js';
import { loadPlans } from '../src/commission/load-plans.js';
import { loadFraudConfig } from '../src/fraud/config.js';
import { silentLogger } from '../src/log.js';
import { packageRoot } from '../src/paths.js';
import { Loader } from '../src/pipeline/load.js';
import { reportFactsJob } from '../src/reports/hook.js';
import { createSandboxData } from '../src/sandbox/data.js';
import { USD_RATE } from '../src/sandbox/generate-common.js';
import { specValidator } from '../src/spec/validator.js';
import { parseRatesCsv, saveRates } from '../src/store/fx-rates.js';
import { openStore, type Store } from '../src/store/store.js';
import type { Entity } from '../src/types.js';
import { copyLines, dropBenchSchemas, openBenchStore } from './support/pg-bench.js';
import { launcherFlags, underLauncherFlags } from './support/launcher.js';
import { postgresCpuMs } from './support/proc-cpu.js';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PARTNER = 'sandbox-casino';
const customers = Number(process.argv[2] ?? 20_000);
const MODES = (process.env.BENCH_MODES ?? 'all,none,fraud,commissions,facts,phases,postbacks').split(',');
const STORES = (process.env.BENCH_STORES ?? 'postgres,sqlite').split(',');
const ENTITIES: readonly Entity[] = ['customers', 'transactions', 'activity'];
const TOGETHER = process.env.BENCH_TOGETHER === '1';

/**
 * The generated month, written to one NDJSON file per entity. Its own (synchronous) function, so
 * that nothing of the month stays reachable once the files are written: the import reads the files,
 * and a heap holding the month (it held 398 MB when generated inside the async main) makes every
 * collection of the measured run slower than the CLI's.
 */
function writeMonth(dir: string): { files: Record<Entity, string>; counts: Record<Entity, number> } {
  const files = {} as Record<Entity, string>;
  const counts = {} as Record<Entity, number>;
  const data = createSandboxData({ seed: 1, customers, from: '2026-10-01', to: '2026-10-31', clock: () => new Date('2026-11-01T12:00:00.000Z') });
  const records: Record<Entity, readonly object[]> = {
    customers: data.customers('igaming'),
    transactions: data.transactions('igaming').map(({ updated_at: _u, ...t }) => t),
    activity: data.activity('igaming'),
  };
  for (const e of ENTITIES) {
    files[e] = join(dir, `${e}.ndjson`);
    counts[e] = records[e].length;
    writeFileSync(files[e], `${records[e].map((r) => JSON.stringify(r)).join('\n')}\n`);
  }
  return { files, counts };
}

/**
 * A full collection, so that a run starts with the heap a fresh `partner-sync` process has: the
 * month generated, the raw COPY's text and the runs before it are garbage by then, but without a
 * full collection they stay in the old generation (400-850 MB), and V8, sizing its next full
 * collection from that, lets them stay through the run while every young collection of the run
 * took 40-140 ms where the CLI's take about 20 ms.
 */
function fullCollection(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pipeline-bench-'));
  const { files, counts } = writeMonth(dir);
  const total = ENTITIES.reduce((s, e) => s + counts[e], 0);
  console.log(`month: ${customers} customers: ${counts.customers} customers, ${counts.transactions} transactions, ${counts.activity} activity rows (${total} records)`);

  if (process.env.BENCH_HEAP) {
    fullCollection();
    console.log(`heap used before the runs: ${Math.round(process.memoryUsage().heapUsed / 1e6)} MB (at ${Math.round(performance.now())} ms)`);
  }
  const copy = await rawCopy(files);
  console.log(`raw COPY into one jsonb column: ${(copy / 1000).toFixed(2)} s, ${Math.round(total / copy * 1000)} records/s`);
  console.log(`${'store'.padEnd(9)} ${'jobs'.padEnd(12)} ${ENTITIES.map((e) => `${e} s`.padStart(16)).join('')} ${'total s'.padStart(9)} ${'records/s'.padStart(10)} ${'x COPY'.padStart(7)}`);

  const plans = (await loadPlans(join(packageRoot(), 'config', 'commissions.yaml'))).plans;
  const fraud = (await loadFraudConfig(join(packageRoot(), 'config', 'fraud.yaml'))).config;
  const created: { schema: string; store?: Store }[] = [];
  try {
    if (process.env.BENCH_CLI === '1') await cliRuns(dir, files, counts, copy, created);
    for (const kind of STORES) {
      for (const mode of MODES) {
        let store: Store;
        let cleanup = async (): Promise<void> => {};
        if (kind === 'postgres') {
          store = (await openBenchStore(PG_URL, `bench_pipeline_${mode}`, created)).store;
        } else {
          const file = join(dir, `${mode}.sqlite`);
          store = await openStore({ url: `sqlite://${file}` });
          cleanup = async () => { await store.close(); rmSync(file, { force: true }); };
        }
        const logger = silentLogger();
        fullCollection();
        if (process.env.BENCH_QUERIES) watchQueries(store);
        const loader = new Loader({ store, validator: specValidator(), jobs: timed(jobsFor(mode, store, plans, fraud, logger)), logger });
        const { rates } = parseRatesCsv(ratesCsv());
        await store.transaction((trx) => saveRates(trx, rates, 'rates.csv', store.now()));
        const times: number[] = [];
        let lastEnd = 0;
        const cpuBefore = { process: process.cpuUsage(), postgres: postgresCpuMs() };
        let cpuAtLoadEnd = cpuBefore;
        const imported = (summary: ImportSummary, started: number): void => {
          lastEnd = performance.now();
          times.push(lastEnd - started);
          if (summary.counts.rejected > 0) throw new Error(`${summary.entity}: ${summary.counts.rejected} rejected: ${JSON.stringify(summary.rejects.slice(0, 3))}`);
        };
        if (TOGETHER) {
          // BENCH_TOGETHER=1: `partner-sync import --customers F --transactions F --activity F`, settled once at the end.
          let started = performance.now();
          await importFiles({ store, loader }, {
            partner: PARTNER, variant: 'igaming', files: ENTITIES.map((entity) => ({ entity, file: files[entity] })), stdin: new PassThrough(),
            imported: (summary) => {
              imported(summary, started);
              started = performance.now();
              if (summary.entity === 'activity') cpuAtLoadEnd = { process: process.cpuUsage(), postgres: postgresCpuMs() };
            },
          });
        } else {
          // Three `partner-sync import --entity E FILE`, each settled at its end.
          for (const entity of ENTITIES) {
            const started = performance.now();
            imported(await importFile({ store, loader }, { partner: PARTNER, variant: 'igaming', entity, file: files[entity], stdin: new PassThrough() }), started);
            if (process.env.BENCH_QUERIES) { console.log(`  ${entity} import, its statements:`); printQueries(); }
            if (process.env.BENCH_PHASES) console.log(`  ${entity} import, hook time s so far: ${[...phaseMs].map(([k, v]) => `${k} ${(v / 1000).toFixed(1)}`).join(', ')}`);
          }
        }
        const settledAtEnd = TOGETHER ? performance.now() - lastEnd : 0;
        if (TOGETHER) console.log(`  the three imports settled together at the end: ${(settledAtEnd / 1000).toFixed(1)} s (in the total)`);
        console.log(`  CPU s: ${cpuLine(cpuBefore, TOGETHER ? cpuAtLoadEnd : undefined, { process: process.cpuUsage(), postgres: postgresCpuMs() })}`);
        const sum = times.reduce((a, b) => a + b, 0) + settledAtEnd;
        if (process.env.BENCH_FLOOR && kind === 'postgres' && mode !== 'none') await printWriteFloor(store, copy, total);
        if (process.env.BENCH_QUERIES) printQueries();
        if (process.env.BENCH_PHASES) console.log(`  hook time s: ${[...phaseMs].map(([k, v]) => `${k} ${(v / 1000).toFixed(1)}`).join(', ')}`);
        phaseMs.clear();
        console.log(`${kind.padEnd(9)} ${mode.padEnd(12)} ${times.map((t, i) => `${(t / 1000).toFixed(1)} (${Math.round(counts[ENTITIES[i]!] / t * 1000)}/s)`.padStart(16)).join('')} ${(sum / 1000).toFixed(1).padStart(9)} ${String(Math.round(total / sum * 1000)).padStart(10)} ${(copy / sum).toFixed(3).padStart(7)}`);
        await cleanup();
      }
    }
  } finally {
    if (!process.env.BENCH_KEEP) await dropBenchSchemas(PG_URL, created);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * BENCH_CLI=1: the month by `partner-sync import` itself, a process of the launcher as a user
 * starts it (its flags, the shipped config/, a fresh PostgreSQL schema, the rates imported
 * first), timed from its start to its exit: one command with the three files, then three
 * commands of one file each into another fresh schema. What a user gets, startup included.
 */
async function cliRuns(dir: string, files: Record<Entity, string>, counts: Record<Entity, number>, copy: number, created: { schema: string; store?: Store }[]): Promise<void> {
  const rates = join(dir, 'rates.csv');
  writeFileSync(rates, ratesCsv());
  const total = ENTITIES.reduce((n, e) => n + counts[e], 0);
  const forms: [string, string[][]][] = [
    ['one command: --customers F --transactions F --activity F', [ENTITIES.flatMap((e) => [`--${e}`, files[e]])]],
    ['three commands: --entity E F', ENTITIES.map((e) => ['--entity', e, files[e]])],
  ];
  for (const [i, [name, commands]] of forms.entries()) {
    const { store, url } = await openBenchStore(PG_URL, `bench_pipeline_cli${i}`, created);
    await store.close();
    created[created.length - 1]!.store = undefined;
    const cli = (args: string[]): void => {
      const r = spawnSync(process.execPath, [...launcherFlags(), join(packageRoot(), 'bin', 'partner-sync.js'), '--store', url, ...args], { cwd: packageRoot(), env: { ...process.env, LOG_LEVEL: 'error' }, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`partner-sync ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    };
    cli(['fx', 'import', rates]);
    const started = performance.now();
    for (const args of commands) cli(['import', PARTNER, '--variant', 'igaming', ...args]);
    const ms = performance.now() - started;
    console.log(`CLI import, ${name.padEnd(56)} ${(ms / 1000).toFixed(1).padStart(5)} s ${String(Math.round(total / ms * 1000)).padStart(7)} records/s ${(copy / ms).toFixed(3)} x COPY`);
  }
}

interface CpuMark { process: NodeJS.CpuUsage; postgres: number | undefined }

/**
 * The CPU seconds of this process and of the local PostgreSQL server between two marks, with the
 * load and the settle apart when the settle came at the end: wall time moves with what else the
 * machine runs, CPU time much less, so a change's effect shows in it first.
 */
function cpuLine(before: CpuMark, loaded: CpuMark | undefined, after: CpuMark): string {
  const span = (a: CpuMark, b: CpuMark): string => {
    const own = (b.process.user + b.process.system - a.process.user - a.process.system) / 1e6;
    const server = a.postgres !== undefined && b.postgres !== undefined ? ((b.postgres - a.postgres) / 1000).toFixed(1) : 'n/a';
    return `process ${own.toFixed(1)} + PostgreSQL ${server}`;
  };
  return loaded ? `load ${span(before, loaded)}; settle ${span(loaded, after)}; all ${span(before, after)}` : span(before, after);
}

const phaseMs = new Map<string, number>();
const queryMs = new Map<string, { ms: number; n: number }>();

/** BENCH_QUERIES=1: time per statement shape, from knex's query events (COPY through the driver is not seen). */
function watchQueries(store: Store): void {
  const started = new Map<string, number>();
  store.knex.on('query', (q: { __knexQueryUid: string }) => started.set(q.__knexQueryUid, performance.now()));
  const done = (q: { __knexQueryUid: string; sql: string }) => {
    const t = started.get(q.__knexQueryUid);
    if (t === undefined) return;
    started.delete(q.__knexQueryUid);
    const shape = q.sql.replace(/\$\d+|\?/g, '?').replace(/(\?, )+\?/g, '?...').replace(/\s+/g, ' ').slice(0, 140);
    const e = queryMs.get(shape) ?? { ms: 0, n: 0 };
    e.ms += performance.now() - t;
    e.n += 1;
    queryMs.set(shape, e);
  };
  store.knex.on('query-response', (_r: unknown, q: { __knexQueryUid: string; sql: string }) => done(q));
  store.knex.on('query-error', (_e: unknown, q: { __knexQueryUid: string; sql: string }) => done(q));
}

function printQueries(): void {
  for (const [shape, e] of [...queryMs].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25)) console.log(`  ${(e.ms / 1000).toFixed(2).padStart(6)} s ${String(e.n).padStart(6)}x  ${shape}`);
  queryMs.clear();
}

/** The jobs with a clock on each phase (BENCH_PHASES=1 prints where the jobs' time went: `name mark`, `name evaluate`). */
function timed(jobs: readonly AfterLoadJob[]): AfterLoadJob[] {
  const clock = async (name: string, work: () => Promise<void>) => {
    const started = performance.now();
    try {
      await work();
    } finally {
      phaseMs.set(name, (phaseMs.get(name) ?? 0) + performance.now() - started);
    }
  };
  return jobs.map((job) => ({
    ...job,
    ...(job.mark ? { mark: (tx, change) => clock(`${job.name} mark`, () => job.mark!(tx, change)) } : {}),
    ...(job.evaluate ? { evaluate: (ctx) => clock(`${job.name} evaluate`, () => job.evaluate!(ctx)) } : {}),
  } satisfies AfterLoadJob));
}

/** The jobs of one mode: every job as the service composes them, none, or one job alone. */
function jobsFor(mode: string, store: Store, plans: Awaited<ReturnType<typeof loadPlans>>['plans'], fraud: Awaited<ReturnType<typeof loadFraudConfig>>['config'], logger: ReturnType<typeof silentLogger>): AfterLoadJob[] {
  switch (mode) {
    case 'all': return afterLoadJobs(store, { plans, logger, fraud });
    case 'none': return [];
    case 'fraud': return [fraudJob(store, fraud, logger)];
    case 'commissions': return [commissionJob(store, plans, logger)];
    case 'facts': return [reportFactsJob(store)];
    case 'phases': return [phaseHistoryJob(store)];
    case 'postbacks': return [postbackJob(store)];
    default: throw new Error(`unknown mode ${mode}`);
  }
}

/** The tables the after-load jobs keep (everything a store holds beyond the loaded records and their bookkeeping). */
const JOB_TABLE = /^(commission_|fraud_|report_|funnel_|phase_history$|postback_events$)/;

/**
 * BENCH_FLOOR=1 (PostgreSQL): what writing the jobs' state alone costs, the floor under any way of
 * computing it. Every job table the run filled is written again from itself, set-based, into a
 * copy with the same indexes and keys (`INSERT INTO copy SELECT * FROM table`): the rows the jobs
 * must leave behind, without any reading of the loaded records or computing. Printed per table,
 * then in all beside the raw COPY of the records.
 */
async function printWriteFloor(store: Store, copyMs: number, records: number): Promise<void> {
  const knex = store.knex;
  const tables = ((await knex.raw(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`)) as { rows: { table_name: string }[] }).rows
    .map((r) => r.table_name).filter((t) => JOB_TABLE.test(t));
  let totalMs = 0;
  let totalRows = 0;
  const parts: string[] = [];
  for (const table of tables) {
    const rows = Number(((await knex.raw(`SELECT count(*) AS n FROM ${table}`)) as { rows: { n: string }[] }).rows[0]?.n ?? 0);
    if (rows === 0) continue;
    await knex.raw(`CREATE TABLE floor_${table} (LIKE ${table} INCLUDING ALL)`);
    const started = performance.now();
    await knex.raw(`INSERT INTO floor_${table} SELECT * FROM ${table}`);
    const ms = performance.now() - started;
    await knex.raw(`DROP TABLE floor_${table}`);
    totalMs += ms;
    totalRows += rows;
    parts.push(`${table} ${rows} rows ${(ms / 1000).toFixed(2)} s`);
  }
  if (totalRows === 0) return;
  console.log(`  the jobs' state written once, set-based (floor): ${totalRows} rows in ${(totalMs / 1000).toFixed(2)} s = ${(totalMs / copyMs).toFixed(2)}x the raw COPY's time of the ${records} records`);
  for (const p of parts) console.log(`    ${p}`);
}

function ratesCsv(): string {
  const lines = ['date,currency,rate'];
  for (let day = Date.parse('2026-10-01T00:00:00Z'); day <= Date.parse('2026-10-31T00:00:00Z'); day += 86_400_000) {
    for (const [currency, r] of Object.entries(USD_RATE)) if (currency !== 'USD') lines.push(`${new Date(day).toISOString().slice(0, 10)},${currency},${r}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Milliseconds to COPY every record of the files as one jsonb document per row, the table made in the same run. */
async function rawCopy(files: Record<Entity, string>): Promise<number> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query('DROP TABLE IF EXISTS bench_pipeline_raw');
    await client.query('CREATE TABLE bench_pipeline_raw (doc jsonb NOT NULL)');
    const escape = (s: string) => s.replace(/\\/g, '\\\\');
    const started = performance.now();
    await copyLines(client, 'COPY bench_pipeline_raw (doc) FROM STDIN', function* () {
      // One JSON document per line; JSON text holds no raw tab or newline, only backslashes to escape.
      for (const e of ENTITIES) for (const line of readFileSync(files[e], 'utf8').split('\n')) if (line) yield `${escape(line)}\n`;
    });
    const ms = performance.now() - started;
    await client.query('DROP TABLE bench_pipeline_raw');
    return ms;
  } finally {
    await client.end();
  }
}

// --expose-gc: a full collection before each run (fullCollection).
underLauncherFlags(['--expose-gc']);
await main();
