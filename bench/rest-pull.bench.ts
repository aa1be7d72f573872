/**
 * REST pull benchmark: an N-customer pull (default 100,000) of the example iGaming definition's
 * customers stream from the sandbox partner, through the whole run path (runPartner: token, rate
 * limiter, retries, pagination, mapping, validation, upsert, checkpoint, run bookkeeping) into a
 * fresh SQLite store and a fresh PostgreSQL schema, beside a baseline measured in the same run:
 * the sandbox alone serving the same pages to a bare keep-alive HTTP client that only receives
 * and JSON-parses the bodies.
 *
 * - The sandbox runs in a child process (this file forked with --sandbox), so its CPU and memory
 *   are not ours; generating its data set happens before any timed section.
 * - Each store case runs in its own child process (--case), so its peak RSS
 *   (process.resourceUsage().maxRSS) is its own: not another case's, not the baseline's.
 * - Cursor pagination, per_page 500; the window starts the day before the data's first day, so
 *   every customer is pulled. The store must hold every customer afterwards (else it throws).
 *
 * - Beside COPY too: the customers the PostgreSQL case stored, exported (untimed) and COPYed into
 *   an identical table (timed), the store's own bulk rate for the same rows.
 *
 * - BENCH_STREAMS=all: every stream of the example definition (customers, transactions, daily
 *   activity) as `partner-sync backfill` pulls them over the sandbox's 30 days, with every
 *   after-load job as shipped (config/commissions.yaml, config/fraud.yaml), PostgreSQL only; the
 *   baseline walks the same pages (activity a day at a time), and the raw COPY takes the same
 *   records as one jsonb document a row, as the pipeline bench's does. The REST source's own
 *   ceiling is printed beside it: the spec's limits (1000 requests a minute, 500 records a page).
 *
 *   node dist/bench/rest-pull.bench.js [customers]      (TEST_PG_URL overrides the PostgreSQL server)
 *   BENCH_STREAMS=all node dist/bench/rest-pull.bench.js 20000
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { runPartner } from '../jobs/run-partner.js';
import { createRedactor } from '../src/config/redact.js';
import { silentLogger } from '../src/log.js';
import { Loader } from '../src/pipeline/load.js';
import { startSandbox } from '../src/sandbox/server.js';
import { createSpecValidator } from '../src/spec/validator.js';
import { openStore } from '../src/store/store.js';
import { entityTable } from '../src/store/tables.js';
import { SANDBOX_SECRET, exampleDefinition } from '../test/support/sandbox.js';
import { shippedHooks } from './support/shipped-jobs.js';
import { ENTITIES } from '../src/types.js';

const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PER_PAGE = 500;
const SEED = 1;
const CLIENT_ID = 'sandbox-client';
const CUSTOMERS_PATH = '/api/v1/igaming/customers';
/** BENCH_STREAMS=all: every stream, a backfill of the sandbox's days, every job on (PostgreSQL). */
const ALL_STREAMS = process.env.BENCH_STREAMS === 'all';
/** The spec's ceiling for a REST pull (§8): 1000 requests a minute, 500 records a page. */
const SPEC_CEILING = (1000 / 60) * 500;

const mb = (kb: number) => Math.round(kb / 1024);
const peakRssKb = () => process.resourceUsage().maxRSS;

interface SandboxReady {
  url: string;
  /** First day of the generated data, YYYY-MM-DD. */
  from: string;
  startupMs: number;
  rssKb: number;
}

interface CaseResult {
  records: number;
  ms: number;
  rssBeforeKb: number;
  peakRssKb: number;
}

/** Forks this file in a role and resolves with the first message it sends. */
function forkRole<T>(args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; message: Promise<T> } {
  const child = fork(fileURLToPath(import.meta.url), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...env } });
  const message = new Promise<T>((resolve, reject) => {
    child.once('message', (m) => resolve(m as T));
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`${args[0]} child exited (${signal ?? `code ${code}`}) before reporting`)));
  });
  return { child, message };
}

// --- child: the sandbox -------------------------------------------------------------------

async function sandboxChild(customers: number): Promise<void> {
  const t0 = performance.now();
  const sandbox = await startSandbox({ port: 0, seed: SEED, customers, clients: [{ client_id: CLIENT_ID, client_secret: SANDBOX_SECRET }] });
  const ready: SandboxReady = { url: sandbox.url, from: sandbox.data.from, startupMs: performance.now() - t0, rssKb: peakRssKb() };
  const stop = () => void sandbox.close().finally(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('disconnect', stop); // the bench went away: do not outlive it
  process.send?.(ready);
}

// --- child: one store case ----------------------------------------------------------------

async function caseChild(storeUrl: string, sandboxUrl: string, start: string, customers: number): Promise<void> {
  const store = await openStore({ url: storeUrl });
  const { def, cleanup } = await exampleDefinition('igaming', sandboxUrl);
  try {
    const stream = def.streams.customers;
    if (!stream || !('pagination' in stream)) throw new Error('the example definition has no REST customers stream');
    stream.incremental.start = start;
    stream.pagination.per_page = PER_PAGE;
    const loader = new Loader({ store, validator: createSpecValidator(), ...(ALL_STREAMS ? await shippedHooks(store, def.partner) : {}) });
    const deps = { loader, clock: store.clock, logger: silentLogger(), redact: createRedactor(def.secrets) };
    const rssBeforeKb = peakRssKb();

    if (ALL_STREAMS) {
      for (const e of ENTITIES) {
        const s = def.streams[e];
        if (s && 'pagination' in s) s.pagination.per_page = PER_PAGE;
      }
      const [from, to] = [start.slice(0, 10), new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)];
      const t0 = performance.now();
      const results = await runPartner(deps, def, { kind: 'backfill', from, to });
      const ms = performance.now() - t0;
      const failed = results.filter((r) => r.status !== 'succeeded');
      if (failed.length > 0) throw new Error(`the backfill did not succeed: ${JSON.stringify(failed)}`);
      const rows = await Promise.all(ENTITIES.map(async (e) => Number(((await store.knex(entityTable(def.variant, e).name).where('partner_id', def.partner).count({ n: '*' })) as { n: number | string }[])[0]?.n)));
      const pulled = results.reduce((n, r) => n + r.counts.pulled, 0);
      console.log(`  backfill ${from}..${to}: ${results.map((r) => `${r.stream} ${r.counts.pulled} pulled, ${r.counts.loaded} loaded`).join('; ')}; store rows ${rows.join(' / ')}`);
      process.send?.({ records: pulled, ms, rssBeforeKb, peakRssKb: peakRssKb() } satisfies CaseResult);
      return;
    }
    const t0 = performance.now();
    const [result] = await runPartner(deps, def, { kind: 'run', scheduledFor: new Date() }, 'customers');
    const ms = performance.now() - t0;
    const peak = peakRssKb();

    if (!result || result.status !== 'succeeded') throw new Error(`the pull did not succeed: ${JSON.stringify(result)}`);
    const table = entityTable(def.variant, 'customers').name;
    const [row] = (await store.knex(table).where('partner_id', def.partner).count({ n: '*' })) as { n: number | string }[];
    const stored = Number(row?.n);
    if (stored !== customers || result.counts.loaded !== customers) {
      throw new Error(`expected ${customers} customers in the store, found ${stored} (run counts ${JSON.stringify(result.counts)})`);
    }
    const out: CaseResult = { records: result.counts.pulled, ms, rssBeforeKb, peakRssKb: peak };
    process.send?.(out);
  } finally {
    cleanup();
    await store.close();
  }
}

// --- the baseline: the sandbox alone serving the same pages ---------------------------------

function httpCall(agent: Agent, base: URL, method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: base.hostname, port: base.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Walks the customers list once: a token, then cursor pages until there is no next cursor. With
 * BENCH_STREAMS=all, the transactions list too, and the activity of each day.
 */
async function baselineWalk(sandboxUrl: string, since: string, until: string): Promise<{ records: number; pages: number; ms: number }> {
  const base = new URL(sandboxUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    // A fresh token per walk: the sandbox's rate limit (1000 requests/min) is per token.
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: SANDBOX_SECRET }).toString();
    const token = await httpCall(agent, base, 'POST', '/oauth/token', { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': String(Buffer.byteLength(form)) }, form);
    if (token.status !== 200) throw new Error(`baseline: token request answered ${token.status}: ${token.text.slice(0, 200)}`);
    const headers = { Authorization: `Bearer ${(JSON.parse(token.text) as { access_token: string }).access_token}`, Accept: 'application/json' };

    const t0 = performance.now();
    let records = 0;
    let pages = 0;
    const walk = async (path: string, params: Record<string, string>): Promise<void> => {
      let cursor: string | undefined;
      for (;;) {
        const query = new URLSearchParams({ ...params, per_page: String(PER_PAGE) });
        if (cursor !== undefined) query.set('cursor', cursor);
        const res = await httpCall(agent, base, 'GET', `${path}?${query}`, headers);
        if (res.status !== 200) throw new Error(`baseline: page ${pages + 1} answered ${res.status}: ${res.text.slice(0, 200)}`);
        const body = JSON.parse(res.text) as { data: unknown[]; meta: { next_cursor?: string } };
        records += body.data.length;
        pages += 1;
        cursor = body.meta.next_cursor;
        if (cursor === undefined || body.data.length === 0) break;
      }
    };
    await walk(CUSTOMERS_PATH, { modified_since: since, modified_until: until });
    if (ALL_STREAMS) {
      await walk('/api/v1/igaming/transactions', { updated_since: since, updated_until: until });
      for (let day = Date.parse(since.slice(0, 10)); day < Date.parse(until.slice(0, 10)); day += 86_400_000) await walk('/api/v1/igaming/activity', { date: new Date(day).toISOString().slice(0, 10) });
    }
    return { records, pages, ms: performance.now() - t0 };
  } finally {
    agent.destroy();
  }
}

// --- the bench ----------------------------------------------------------------------------

async function main(customers: number): Promise<void> {
  console.error(`starting the sandbox with ${customers} customers (generation takes about 20 s per 100,000; untimed) ...`);
  const sandbox = forkRole<SandboxReady>(['--sandbox', String(customers)]);
  const cleanups: (() => Promise<void> | void)[] = [() => void sandbox.child.kill('SIGTERM')];
  try {
    const ready = await sandbox.message;
    const firstDay = new Date(`${ready.from}T00:00:00.000Z`);
    const start = new Date(firstDay.getTime() - 86_400_000).toISOString();

    // Baseline: one untimed walk (it also warms the sandbox up, as it is for our runs), then the timed one.
    const until = new Date().toISOString();
    const warm = await baselineWalk(ready.url, start, until);
    if (!ALL_STREAMS && warm.records !== customers) throw new Error(`baseline: the sandbox served ${warm.records} customers, expected ${customers}`);
    const baseline = await baselineWalk(ready.url, start, until);
    const baselineRssKb = peakRssKb();

    // Ours: each store in its own process, one after the other (never beside each other).
    const dir = mkdtempSync(join(tmpdir(), 'partner-sync-bench-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const schema = `bench_rest_pull_${process.pid}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    cleanups.push(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    });
    await admin.query(`CREATE SCHEMA ${schema}`);
    const pgUrl = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;

    const cases: { name: string; url: string }[] = ALL_STREAMS ? [{ name: 'backfill, every job -> PostgreSQL', url: pgUrl }] : [
      { name: 'runPartner -> SQLite (fresh file)', url: `sqlite:${join(dir, 'store.sqlite')}` },
      { name: 'runPartner -> PostgreSQL (fresh schema)', url: pgUrl },
    ];
    const results: (CaseResult & { name: string })[] = [];
    for (const c of cases) {
      // The store URL goes by environment, not argv: a TEST_PG_URL may carry a password.
      const run = forkRole<CaseResult>(['--case', ready.url, start, String(customers)], { BENCH_STORE_URL: c.url });
      results.push({ name: c.name, ...(await run.message) });
      await new Promise((resolve) => (run.child.exitCode !== null ? resolve(undefined) : run.child.once('exit', resolve)));
    }

    // The same rows by raw COPY into an identical table: exported untimed, the COPY timed. Every
    // stream's records: as one jsonb document a row, into one table (the pipeline bench's baseline).
    const table = `${schema}.customers`;
    const exported: Buffer[] = [];
    const keep = new Writable({ write(chunk: Buffer, _e, done) { exported.push(chunk); done(); } });
    if (ALL_STREAMS) {
      await admin.query(`CREATE TABLE ${schema}.copy_baseline (doc jsonb)`);
      const tables = ENTITIES.map((e) => `${schema}.${entityTable('igaming', e).name}`);
      await pipeline(admin.query(copyTo(`COPY (${tables.map((t) => `SELECT to_jsonb(x) - 'partner_id' - 'run_id' FROM ${t} x`).join(' UNION ALL ')}) TO STDOUT`)), keep);
    } else {
      await admin.query(`CREATE TABLE ${schema}.copy_baseline (LIKE ${table} INCLUDING ALL)`);
      await pipeline(admin.query(copyTo(`COPY ${table} TO STDOUT`)), keep);
    }
    const c0 = performance.now();
    await pipeline(Readable.from(exported), admin.query(copyFrom(`COPY ${schema}.copy_baseline FROM STDIN`)));
    const copyMs = performance.now() - c0;
    const copied = Number((await admin.query(`SELECT count(*) AS n FROM ${schema}.copy_baseline`)).rows[0].n);

    // The baseline walked the records the runs pulled, or the rates compare different work.
    for (const r of results) if (r.records !== baseline.records) throw new Error(`${r.name} pulled ${r.records} records; the baseline walk got ${baseline.records}`);
    const baseRate = baseline.records / (baseline.ms / 1000);
    const copyRate = copied / (copyMs / 1000);
    const row = (name: string, records: number, ms: number, rssKb: number) => {
      const rate = records / (ms / 1000);
      return `${name.padEnd(42)} | ${String(Math.round(rate)).padStart(9)} records/s | ${(rate / baseRate).toFixed(2).padStart(5)} x baseline | ${(ms / 1000).toFixed(2).padStart(6)} s | ${String(mb(rssKb)).padStart(4)} MB peak RSS`;
    };
    console.log(`REST pull benchmark: ${customers} iGaming customers from the sandbox (child process)${ALL_STREAMS ? ' with their transactions and activity' : ''}, cursor pages of ${PER_PAGE} (${baseline.pages} pages)`);
    console.log(row('baseline: sandbox alone, bare HTTP client', baseline.records, baseline.ms, baselineRssKb) + ` | ${(baseRate / copyRate).toFixed(3).padStart(5)} x COPY`);
    for (const r of results) console.log(row(r.name, r.records, r.ms, r.peakRssKb) + ` | ${(r.records / (r.ms / 1000) / copyRate).toFixed(3).padStart(5)} x COPY`);
    console.log(`raw COPY of the same ${copied} ${ALL_STREAMS ? 'records, one jsonb document a row,' : 'customer rows'} into ${ALL_STREAMS ? 'one table' : 'an identical PostgreSQL table'}: ${Math.round(copyRate)} rows/s (${(copyMs / 1000).toFixed(2)} s)`);
    console.log(`the spec's ceiling for a REST source (1000 requests a minute, 500 records a page): ${Math.round(SPEC_CEILING)} records/s = ${(SPEC_CEILING / copyRate).toFixed(3)} x COPY`);
    console.log(`sandbox startup (generating ${customers} customers per variant with their transactions and activity): ${(ready.startupMs / 1000).toFixed(1)} s, untimed; sandbox RSS ${mb(ready.rssKb)} MB`);
    console.log(`peak RSS of each case before its pull (node, modules, store opened and migrated): ${results.map((r) => `${r.name.replace('runPartner -> ', '')} ${mb(r.rssBeforeKb)} MB`).join(', ')}`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

const [role, ...rest] = process.argv.slice(2);
if (role === '--sandbox') {
  await sandboxChild(Number(rest[0]));
} else if (role === '--case') {
  const [sandboxUrl, start, customers] = rest as [string, string, string];
  await caseChild(process.env.BENCH_STORE_URL ?? '', sandboxUrl, start, Number(customers));
  process.disconnect?.(); // the IPC channel would keep this process alive
} else {
  const customers = Number(role ?? 100_000);
  if (!Number.isInteger(customers) || customers < 1) throw new Error(`customers must be a whole number ≥ 1, got ${role}`);
  await main(customers);
}
