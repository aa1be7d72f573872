/**
 * Push benchmark: the HTTP API (`partner-sync serve`, a child process on loopback) loading into a
 * fresh PostgreSQL store schema, each figure beside a baseline measured in the same run.
 *
 * 1. Bulk: R requests of 1000 iGaming deposits each (C at a time) to /api/v1/igaming/transactions/bulk,
 *    records/s loaded, beside
 *    - a raw COPY of the same records, rendered as store rows, into an identical table (target: the
 *      API at 0.5 x COPY or better);
 *    - PostgreSQL's floor for an upserting request, per request and per full group, and the same with
 *      the report facts exact at the commit, one transaction at a time and two side by side
 *      (./support/pg-floors.ts), with the CPU of their server backends;
 *    - the least CPU the service's process spends on the same requests (the bare route's HTTP and
 *      JSON parsing of the same bodies; validation and COPY text in this process) and the CPU of
 *      the server, its backends and the load generator during the API's bulk run, against the CPU
 *      two cores give at 0.5 x COPY;
 *    - the pull load path: Loader.load of the same records in this process, 1000 per batch, with
 *      the same after-load composition (jobs/load-hooks.ts), into another fresh schema;
 *    - the push service in this process (src/push/service.ts: validation, group commit,
 *      bookkeeping, the same load path) without HTTP, to tell the HTTP share from the rest: once
 *      with one request per transaction, once with group commit as the server does it;
 *    - the server's own count of load transactions, requests per transaction and time per
 *      transaction (its /metrics: partner_sync_push_transaction_*), for the bulk and the single runs.
 * 2. Single records: N POSTs of one customer each to /api/v1/igaming/customers over 50 connections,
 *    as fast as they go (throughput, p50, p99), then at a fixed 1000 requests/s (target: p99 under
 *    50 ms); beside the same two runs against a bare fastify route in its own child process that
 *    parses the JSON body and answers 200.
 * 3. Nothing lost: records the load generator saw accepted = rows in the store; peak RSS (VmHWM)
 *    of the server process.
 *
 * The rate limit (1000 requests per minute per token) is not lifted: the load generator spreads
 * its requests over enough tokens of one client, as a busy partner's processes would.
 *
 *   npm run build && node dist/bench/push.bench.js [bulk_requests] [single_requests]
 *     (defaults 100 and 20000; TEST_PG_URL overrides the server; BENCH_BULK_CONCURRENCY (4);
 *      BENCH_SERVER_NODE_ARGS adds node flags to the server, e.g. "--cpu-prof --cpu-prof-dir=prof";
 *      BENCH_JOBS=1 runs the server and the in-process loaders with the shipped plans and fraud rules)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { createLoadHooks } from '../jobs/load-hooks.js';
import { shippedHooks, writeShippedConfig } from './support/shipped-jobs.js';
import { count, describeTransactions, emptyTransactions, freePort, newCounts, pushTransactions, startChild, statusText, type Counts, type Server } from './support/http-bench.js';
import { pushFactsFloor, upsertFloor } from './support/pg-floors.js';
import { procCpuMs } from './support/proc-cpu.js';
import { silentLogger } from '../src/log.js';
import { packageRoot } from '../src/paths.js';
import { Loader } from '../src/pipeline/load.js';
import { PushService } from '../src/push/service.js';
import { specValidator } from '../src/spec/validator.js';
import { recordToRow } from '../src/store/rows.js';
import { openStore, type Store } from '../src/store/store.js';
import { entityTable } from '../src/store/tables.js';
import type { RawRecord, SpecRecord } from '../src/types.js';
import { launcherFlags } from './support/launcher.js';

const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BULK_REQUESTS = Number(process.argv[2] ?? 100);
const SINGLE_REQUESTS = Number(process.argv[3] ?? 20_000);
const BULK_SIZE = 1000;
const BULK_CONCURRENCY = Number(process.env.BENCH_BULK_CONCURRENCY ?? 4);
const CONNECTIONS = 50;
const FIXED_RATE = 1000;
/** Requests per token, below the limit of 1000 per rolling minute. */
const PER_TOKEN = 900;
const PARTNER = 'bench-push';
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
const CLI = join(packageRoot(), 'bin', 'partner-sync.js');

/** The API server's connections carry this application_name, so their server processes' CPU can be read. */
const API_APP = `ps_bench_push_${process.pid}`;
const storeUrl = (schema: string, app?: string) => `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}${app ? `&application_name=${app}` : ''}`;
const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));

const customer = (i: number): SpecRecord => ({ customer_id: `c${i}`, signup_date: '2026-11-01T00:00:00Z', affiliate_id: `a${i % 20}` });
const deposit = (i: number, customers: number): SpecRecord => ({
  transaction_id: `t${i}`,
  customer_id: `c${i % customers}`,
  transaction_type: 'deposit',
  amount_currency: Math.round(((i * 7919) % 100_000) + 100) / 100,
  currency: 'EUR',
  transaction_date: `2026-11-${String(1 + (i % 22)).padStart(2, '0')}T12:00:00Z`,
  status: 'approved',
});

/** `partner-sync serve` on a free loopback port, over the store schema. */
async function startApi(schema: string, configDir: string): Promise<Server> {
  const port = await freePort();
  return startChild([...launcherFlags(), ...SERVER_NODE_ARGS, CLI, '--config', configDir, '--store', storeUrl(schema, API_APP), 'serve', '--host', '127.0.0.1', '--port', String(port)], port, '/healthz');
}

/** The bare baseline: fastify, JSON body parsed, 200, nothing else (this file, in --bare mode). */
async function startBare(): Promise<Server> {
  const port = await freePort();
  return startChild([fileURLToPath(import.meta.url), '--bare', String(port)], port, '/healthz');
}

async function bare(port: number): Promise<void> {
  const app = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024 });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.post('/bulk', async (request) => ({ accepted: Array.isArray(request.body) ? request.body.length : 0 }));
  app.post('/api/v1/igaming/customers', async (request) => ({ accepted: request.body === undefined ? 0 : 1 }));
  await app.listen({ host: '127.0.0.1', port });
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

function cli(configDir: string, schema: string, args: string[]): string {
  const r = spawnSync(process.execPath, [...launcherFlags(), CLI, '--config', configDir, '--store', storeUrl(schema), ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`partner-sync ${args.join(' ')}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

async function tokens(url: string, clientId: string, secret: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret, scope: 'write' }).toString(),
    });
    if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
    out.push(((await res.json()) as { access_token: string }).access_token);
  }
  return out;
}


/** R bulk requests, BULK_CONCURRENCY at a time; returns elapsed ms. */
async function pushBulk(url: string, bodies: string[], tokenList: string[], c: Counts, path = '/api/v1/igaming/transactions/bulk'): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < bodies.length) {
      const i = next++;
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokenList[i % tokenList.length] as string}` },
        body: bodies[i],
      });
      count(c, res.status, await res.text());
    }
  };
  await Promise.all(Array.from({ length: BULK_CONCURRENCY }, lane));
  return performance.now() - t0;
}

interface Run {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
  non2xx: number;
  seconds: number;
}

/** N single-record POSTs over 50 connections, each a new customer; overallRate when given. */
async function singles(url: string, first: number, n: number, tokenList: string[], c: Counts, overallRate?: number): Promise<Run> {
  let i = first;
  const result = await autocannon({
    url: `${url}/api/v1/igaming/customers`,
    connections: CONNECTIONS,
    amount: n,
    ...(overallRate ? { overallRate } : {}),
    timeout: 30,
    requests: [
      {
        method: 'POST',
        setupRequest: (req: autocannon.Request) => {
          const k = i++;
          return {
            ...req,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${tokenList[k % Math.max(tokenList.length, 1)] ?? ''}` },
            body: JSON.stringify(customer(k)),
          };
        },
        onResponse: (status: number, body: string) => count(c, status, body),
      },
    ],
  });
  return {
    rps: Math.round(result.requests.total / (result.duration || 1)),
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    seconds: result.duration,
  };
}

const runLine = (name: string, r: Run, base?: Run) =>
  `${name.padEnd(46)} ${String(r.rps).padStart(6)} req/s  p50 ${String(r.p50).padStart(3)} ms  p90 ${String(r.p90).padStart(3)} ms  p99 ${String(r.p99).padStart(4)} ms  max ${String(r.max).padStart(5)} ms` +
  `  errors ${r.errors} non-2xx ${r.non2xx}` +
  (base ? `   ${(r.rps / base.rps).toFixed(2)} x bare req/s, p99 ${(r.p99 / Math.max(base.p99, 1)).toFixed(1)} x bare` : '');

async function preloadCustomers(loader: Loader, n: number): Promise<void> {
  for (let start = 0; start < n; start += BULK_SIZE) {
    const records: RawRecord[] = [];
    for (let k = start; k < Math.min(n, start + BULK_SIZE); k++) records.push({ position: k - start + 1, value: customer(k) });
    await loader.load({ partner: PARTNER, variant: 'igaming', entity: 'customers', runId: 'bench-preload', records });
  }
}

/**
 * BENCH_JOBS=1: the server and the in-process loaders run with the shipped commission plans (for
 * the bench partner) and fraud rules, as a user with config/ as shipped gets; without it, with the
 * jobs that need no configuration (report facts, phase history, postbacks' outbox).
 */
const JOBS = process.env.BENCH_JOBS === '1';

const newLoader = async (store: Store) => new Loader({ store, validator: specValidator(),
  ...(JOBS ? await shippedHooks(store, PARTNER) : createLoadHooks(store, { plans: [], logger: silentLogger() })) });

async function main(): Promise<void> {
  const api = `bench_push_api_${process.pid}`;
  const pull = `bench_push_pull_${process.pid}`;
  const lib = `bench_push_lib_${process.pid}`;
  const big = `bench_push_big_${process.pid}`;
  const floor = `bench_push_floor_${process.pid}`;
  const configDir = mkdtempSync(join(tmpdir(), 'partner-sync-push-bench-'));
  if (JOBS) writeShippedConfig(configDir, PARTNER);
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const servers: Server[] = [];
  const stores: Store[] = [];
  try {
    await admin.query(`CREATE SCHEMA ${api}`);
    await admin.query(`CREATE SCHEMA ${pull}`);
    await admin.query(`CREATE SCHEMA ${lib}`);
    await admin.query(`CREATE SCHEMA ${big}`);
    await admin.query(`CREATE SCHEMA ${floor}`);
    const records = BULK_REQUESTS * BULK_SIZE;
    const customersN = Math.max(1, Math.ceil(records / 20));
    const deposits: SpecRecord[] = Array.from({ length: records }, (_, i) => deposit(i, customersN));
    const bodies: string[] = [];
    for (let r = 0; r < BULK_REQUESTS; r++) bodies.push(JSON.stringify(deposits.slice(r * BULK_SIZE, (r + 1) * BULK_SIZE)));

    // Both schemas: migrated, the deposits' customers loaded (untimed).
    const apiStore = await openStore({ url: storeUrl(api) });
    stores.push(apiStore);
    const pullStore = await openStore({ url: storeUrl(pull) });
    stores.push(pullStore);
    await preloadCustomers(await newLoader(apiStore), customersN);
    const pullLoader = await newLoader(pullStore);
    await preloadCustomers(pullLoader, customersN);
    const libStore = await openStore({ url: storeUrl(lib) });
    stores.push(libStore);
    const libLoader = await newLoader(libStore);
    await preloadCustomers(libLoader, customersN);
    const bigStore = await openStore({ url: storeUrl(big) });
    stores.push(bigStore);
    const bigLoader = await newLoader(bigStore);
    await preloadCustomers(bigLoader, customersN);
    const floorStore = await openStore({ url: storeUrl(floor) });
    stores.push(floorStore);
    await preloadCustomers(await newLoader(floorStore), customersN);

    // Baseline 1: raw COPY of the same deposits, rendered as store rows, into an identical table.
    const table = entityTable('igaming', 'transactions');
    const now = apiStore.now();
    const text = deposits.map((d) => recordToRow(table, PARTNER, d, 'bench', now).map((v) => (v === null ? '\\N' : String(v))).join('\t')).join('\n') + '\n';
    await admin.query(`CREATE TABLE ${pull}.baseline (LIKE ${pull}.${table.name} INCLUDING ALL)`);
    let t0 = performance.now();
    await pipeline(Readable.from([text]), admin.query(copyFrom(`COPY ${pull}.baseline FROM STDIN`)));
    const copyMs = performance.now() - t0;

    // Baseline 3, PostgreSQL's floor for an upserting request (./support/pg-floors.ts): a request's
    // records per transaction, and a full group's (four requests).
    await admin.query(`CREATE TABLE ${pull}.floor (LIKE ${pull}.${table.name} INCLUDING ALL)`);
    const [floorMs, floorGroupMs] = [await upsertFloor(admin, `${pull}.floor`, ['partner_id', 'transaction_id'], text.slice(0, -1).split('\n'), BULK_SIZE),
      await upsertFloor(admin, `${pull}.floor`, ['partner_id', 'transaction_id'], text.slice(0, -1).split('\n'), 4 * BULK_SIZE)];

    // Baseline 4, PostgreSQL's floor for the same requests with the report facts exact at their commit
    // (./support/pg-floors.ts), on the store's own tables: one transaction at a time (as a partner's
    // loads run) per 1000, per full group and per 20,000, then two side by side (one per core),
    // without and with the customers locked.
    const lines = text.slice(0, -1).split('\n');
    const lanes = [new pg.Client({ connectionString: PG_URL }), new pg.Client({ connectionString: PG_URL })];
    for (const l of lanes) await l.connect();
    const factsFloors: [string, { ms: number; pgCpuMs: number }][] = [];
    try {
      factsFloors.push([`floor: the same + exact facts per ${BULK_SIZE}`, await pushFactsFloor(lanes.slice(0, 1), floor, PARTNER, lines, BULK_SIZE)]);
      factsFloors.push([`floor: the same + exact facts per ${4 * BULK_SIZE}`, await pushFactsFloor(lanes.slice(0, 1), floor, PARTNER, lines, 4 * BULK_SIZE)]);
      // Larger groups than the server makes: how far the fixed cost of a transaction is behind the floor.
      factsFloors.push([`floor: the same + exact facts per ${20 * BULK_SIZE}`, await pushFactsFloor(lanes.slice(0, 1), floor, PARTNER, lines, 20 * BULK_SIZE)]);
      factsFloors.push([`floor: the same, 2 transactions side by side`, await pushFactsFloor(lanes, floor, PARTNER, lines, 4 * BULK_SIZE)]);
      factsFloors.push([`floor: the same, customers locked`, await pushFactsFloor(lanes, floor, PARTNER, lines, 4 * BULK_SIZE, { lockCustomers: true })]);
    } finally {
      for (const l of lanes) await l.end();
    }

    // The least the service's process does for the same requests beyond HTTP and JSON parsing (the
    // bare route below does those): validate each record against the spec's schema, render the
    // store rows as COPY text (no facts, no bookkeeping).
    const validator = specValidator();
    const parsedBodies = bodies.map((b) => JSON.parse(b) as SpecRecord[]);
    const least0 = process.cpuUsage();
    let rendered = 0;
    for (const parsed of parsedBodies) {
      for (const record of parsed) if (validator.validate('igaming', 'transactions', record).length > 0) throw new Error('invalid bench record');
      rendered += parsed.map((d) => recordToRow(table, PARTNER, d, 'bench', now).map((v) => (v === null ? '\\N' : String(v))).join('\t')).join('\n').length;
    }
    const leastCpu = process.cpuUsage(least0);
    const leastServiceMs = (leastCpu.user + leastCpu.system) / 1000;
    if (rendered === 0) throw new Error('nothing rendered');

    // Baseline 2: the pull load path, in-process, 1000 records per batch.
    t0 = performance.now();
    for (let r = 0; r < BULK_REQUESTS; r++) {
      const batch: RawRecord[] = deposits.slice(r * BULK_SIZE, (r + 1) * BULK_SIZE).map((value, k) => ({ position: k + 1, value }));
      await pullLoader.load({ partner: PARTNER, variant: 'igaming', entity: 'transactions', runId: 'bench-pull', records: batch });
    }
    const pullMs = performance.now() - t0;

    // The fixed cost of one load transaction: 1-record loads of the pull path (new deposits), with
    // the SQL statements each runs (what a group commit of a few single POSTs pays at least).
    const ONE = 50;
    let statements = 0;
    const onQuery = () => statements++;
    pullStore.knex.on('query', onQuery);
    t0 = performance.now();
    for (let k = 0; k < ONE; k++) {
      await pullLoader.load({ partner: PARTNER, variant: 'igaming', entity: 'transactions', runId: 'bench-one', records: [{ position: 1, value: deposit(records + k, customersN) }] });
    }
    const oneMs = (performance.now() - t0) / ONE;
    pullStore.knex.removeListener('query', onQuery);
    // Beside it, PostgreSQL's own floor: BEGIN, one INSERT, COMMIT (the commit waits for the WAL flush).
    await admin.query(`CREATE TABLE ${pull}.commit_probe (id int PRIMARY KEY)`);
    t0 = performance.now();
    for (let k = 0; k < ONE; k++) {
      await admin.query('BEGIN');
      await admin.query(`INSERT INTO ${pull}.commit_probe VALUES ($1)`, [k]);
      await admin.query('COMMIT');
    }
    const bareTxMs = (performance.now() - t0) / ONE;

    // Where the API's time goes: the push service (validation, group commit, Idempotency and push
    // bookkeeping, the same load path) in this process, without HTTP, JSON parsing or tokens; once
    // with groups of one bulk request (maxRecords 1000: one transaction per request, what group
    // commit saves), once as configured in the server (groups of up to 4000 records).
    const inProcess = async (loader: Loader, maxRecords?: number) => {
      const service = new PushService(loader, { logger: silentLogger(), ...(maxRecords ? { maxRecords } : {}) });
      const c = newCounts();
      let next = 0;
      const start = performance.now();
      await Promise.all(Array.from({ length: BULK_CONCURRENCY }, async () => {
        while (next < BULK_REQUESTS) {
          const r = next++;
          const answer = await service.push({ partner: PARTNER, variant: 'igaming', entity: 'transactions', clientId: 'bench', bulk: true,
            body: JSON.parse(bodies[r] as string) as unknown });
          count(c, answer.status, JSON.stringify(answer.body));
        }
      }));
      const ms = performance.now() - start;
      await service.close();
      return { ms, counts: c, transactions: service.queue.transactions };
    };
    const libRun = await inProcess(libLoader, BULK_SIZE);
    const libCounts = libRun.counts;
    const libMs = libRun.ms;
    const bigRun = await inProcess(bigLoader);

    // The API: a client, tokens, the bulk requests.
    const added = JSON.parse(cli(configDir, api, ['clients', 'add', PARTNER, '--variant', 'igaming', '--scope', 'read,write', '--json'])) as { client_id: string; client_secret: string };
    const server = await startApi(api, configDir);
    servers.push(server);
    const singlesTotal = 2 * SINGLE_REQUESTS + 2 * CONNECTIONS;
    const tokenList = await tokens(server.url, added.client_id, added.client_secret, Math.ceil((BULK_REQUESTS + singlesTotal) / PER_TOKEN) + 1);
    const bulkCounts = newCounts();
    // CPU of the bulk run: the server process, and the PostgreSQL backends of its connections.
    const apiBackends = async () => new Map((await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [API_APP])).rows
      .map(({ pid }) => [pid, procCpuMs(pid) ?? 0] as const));
    const backends0 = await apiBackends();
    const serverCpu0 = procCpuMs(server.child.pid as number) ?? 0;
    const generator0 = process.cpuUsage();
    const bulkMs = await pushBulk(server.url, bodies, tokenList, bulkCounts);
    const generator = process.cpuUsage(generator0);
    const generatorMs = (generator.user + generator.system) / 1000;
    const serverCpuMs = (procCpuMs(server.child.pid as number) ?? serverCpu0) - serverCpu0;
    let apiPgCpuMs = 0;
    for (const [pid, ms] of await apiBackends()) apiPgCpuMs += ms - (backends0.get(pid) ?? 0);
    const afterBulk = await pushTransactions(server.url);

    // Single records: warm-up, as fast as they go, then at a fixed rate.
    const singleCounts = newCounts();
    // PostgreSQL commits of the whole database while the single-record runs go (this bench's server
    // is most of them; other users of the database are counted too).
    const commits = async () => Number((await admin.query(`SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = current_database()`)).rows[0].n);
    const commitsBefore = await commits();
    let first = customersN;
    await singles(server.url, first, CONNECTIONS, tokenList, singleCounts);
    first += CONNECTIONS;
    const apiMax = await singles(server.url, first, SINGLE_REQUESTS, tokenList, singleCounts);
    first += SINGLE_REQUESTS;
    const apiFixed = await singles(server.url, first, SINGLE_REQUESTS, tokenList, singleCounts, FIXED_RATE);
    first += SINGLE_REQUESTS;
    const singleCommits = (await commits()) - commitsBefore;
    // The fraud rules and commissions evaluate behind the answers: how long after the last answer
    // the store holds nothing loaded and not evaluated (fraud_deferred, commission_pending).
    const waitingSince = performance.now();
    const unevaluatedRows = async () => Number((await admin.query(`SELECT (SELECT count(*) FROM ${api}.fraud_deferred) + (SELECT count(*) FROM ${api}.commission_pending) AS n`)).rows[0].n);
    const unevaluatedAtEnd = await unevaluatedRows();
    while ((await unevaluatedRows()) > 0 && performance.now() - waitingSince < 600_000) await new Promise((r) => setTimeout(r, 20));
    const caughtUpMs = performance.now() - waitingSince;
    const afterSingles = await pushTransactions(server.url);
    const serverRss = await server.stop();
    servers.pop();

    const bareServer = await startBare();
    servers.push(bareServer);
    // The bare route's CPU for the same bulk bodies: HTTP and JSON parsing, nothing else.
    const bareBulkCounts = newCounts();
    const bareCpu0 = procCpuMs(bareServer.child.pid as number) ?? 0;
    await pushBulk(`${bareServer.url}`, bodies, [''], bareBulkCounts, '/bulk');
    const bareBulkCpuMs = (procCpuMs(bareServer.child.pid as number) ?? bareCpu0) - bareCpu0;
    if (bareBulkCounts.accepted !== records) throw new Error(`bare route accepted ${bareBulkCounts.accepted} of ${records}`);
    const bareCounts = newCounts();
    await singles(bareServer.url, 0, CONNECTIONS, [], bareCounts);
    const bareMax = await singles(bareServer.url, 0, SINGLE_REQUESTS, [], bareCounts);
    const bareFixed = await singles(bareServer.url, 0, SINGLE_REQUESTS, [], bareCounts, FIXED_RATE);
    const bareRss = await bareServer.stop();
    servers.pop();

    const rows = async (entity: string) =>
      Number((await admin.query(`SELECT count(*)::int AS n FROM ${api}.${entity === 'transactions' ? table.name : entityTable('igaming', 'customers').name} WHERE partner_id = $1`, [PARTNER])).rows[0].n);
    const storedDeposits = await rows('transactions');
    const storedCustomers = (await rows('customers')) - customersN;
    const pulled = Number((await admin.query(`SELECT count(*)::int AS n FROM ${pull}.${table.name}`)).rows[0].n);

    const copyRate = rate(records, copyMs);
    const bulkLine = (name: string, n: number, ms: number) =>
      `${name.padEnd(46)} ${String(rate(n, ms)).padStart(9)} records/s   ${(rate(n, ms) / copyRate).toFixed(2)} x COPY   ${(ms / 1000).toFixed(2).padStart(6)} s`;
    console.log(`push benchmark: PostgreSQL store, server and load generator on this machine (loopback), after-load jobs ${JOBS ? "with the shipped plans and fraud rules (BENCH_JOBS=1)" : "without plans or fraud rules (BENCH_JOBS=1 adds them)"}, ${new Date().toISOString()}`);
    console.log(`\nbulk: ${BULK_REQUESTS} requests x ${BULK_SIZE} iGaming deposits, ${BULK_CONCURRENCY} at a time`);
    console.log(bulkLine('baseline: raw COPY into an identical table', records, copyMs));
    console.log(bulkLine(`floor: COPY to temp + upsert + COMMIT per ${BULK_SIZE}`, records, floorMs));
    console.log(bulkLine(`floor: the same per ${4 * BULK_SIZE} (a full group)`, records, floorGroupMs));
    const us = (ms: number) => `${((ms * 1000) / records).toFixed(1)} us`;
    for (const [name, f] of factsFloors) console.log(bulkLine(name, records, f.ms) + `   PostgreSQL CPU ${us(f.pgCpuMs)} a record`);
    console.log(bulkLine('baseline: pull load path (Loader.load, 1000)', records, pullMs));
    console.log(bulkLine('push service in-process, 1 request/transaction', libCounts.loaded, libMs) + `   ${(pullMs / libMs).toFixed(2)} x pull path   ${libRun.transactions} transactions`);
    console.log(bulkLine('push service in-process, as served (group commit)', bigRun.counts.loaded, bigRun.ms) + `   ${(pullMs / bigRun.ms).toFixed(2)} x pull path   ${bigRun.transactions} transactions`);
    console.log(bulkLine('API: POST .../transactions/bulk', bulkCounts.loaded, bulkMs) + `   ${(pullMs / bulkMs).toFixed(2)} x pull path`);
    const cores = availableParallelism();
    const budget = ((copyMs * 1000) / records) * 2 * cores;
    const lockedCpu = (factsFloors.at(-1) as [string, { pgCpuMs: number }])[1].pgCpuMs;
    console.log(`  CPU of the API's bulk run: server process ${us(serverCpuMs)} a record, its PostgreSQL backends ${us(apiPgCpuMs)}, the load generator ${us(generatorMs)} (${cores} cores)`);
    const least = bareBulkCpuMs + leastServiceMs;
    console.log(`  the least the service's process does: HTTP and JSON parsing (the bare route, same bodies) ${us(bareBulkCpuMs)} + validating and rendering COPY text ${us(leastServiceMs)} = ${us(least)} a record of CPU`);
    console.log(`  CPU budget of 0.5 x COPY on ${cores} cores: ${budget.toFixed(1)} us a record in all; the side-by-side floor with customers locked ${us(lockedCpu)} + the service's least ${us(least)} = ${((((lockedCpu + least) * 1000) / records / budget) * 100).toFixed(0)}% of it; with the load generator's ${us(generatorMs)}: ${((((lockedCpu + least + generatorMs) * 1000) / records / budget) * 100).toFixed(0)}%`);
    console.log(`  one load transaction of 1 record (pull path): ${oneMs.toFixed(1)} ms, ${(statements / ONE).toFixed(0)} SQL statements; a bare BEGIN/INSERT/COMMIT: ${bareTxMs.toFixed(1)} ms`);
    console.log(`  ${describeTransactions(afterBulk.transactions, emptyTransactions())}`);
    console.log(`  answers ${statusText(bulkCounts)}; accepted ${bulkCounts.accepted}, loaded ${bulkCounts.loaded}, waiting ${bulkCounts.waiting}; target >= 0.50 x COPY: ${rate(bulkCounts.loaded, bulkMs) / copyRate >= 0.5 ? 'met' : 'MISSED'}`);
    console.log(`\nsingle records: POST /api/v1/igaming/customers, ${CONNECTIONS} connections, ${SINGLE_REQUESTS} requests per run`);
    console.log(runLine('baseline: bare fastify route, max rate', bareMax));
    console.log(runLine('API, max rate', apiMax, bareMax));
    console.log(runLine(`baseline: bare fastify route, ${FIXED_RATE} req/s`, bareFixed));
    console.log(runLine(`API, ${FIXED_RATE} req/s`, apiFixed, bareFixed));
    console.log(`  ${describeTransactions(afterSingles.customers, afterBulk.customers)}`);
    console.log(`  PostgreSQL commits during the API's single-record runs: ${singleCommits} for ${CONNECTIONS + 2 * SINGLE_REQUESTS} requests (${(singleCommits / (CONNECTIONS + 2 * SINGLE_REQUESTS)).toFixed(2)} per request; statistics lag up to 0.5 s)`);
    console.log(`  fraud rules and commissions, evaluated behind the answers: ${unevaluatedAtEnd} scope rows waiting at the last answer, none ${(caughtUpMs / 1000).toFixed(2)} s after it`);
    console.log(`  answers ${statusText(singleCounts)}; target p99 < 50 ms at ${FIXED_RATE} req/s: ${apiFixed.p99 < 50 && apiFixed.rps >= FIXED_RATE * 0.95 ? 'met' : 'MISSED'}`);
    console.log('\nnothing lost:');
    console.log(`  deposits accepted (load generator) ${bulkCounts.accepted} = rows in the store ${storedDeposits}: ${bulkCounts.accepted === storedDeposits ? 'yes' : 'NO'}`);
    console.log(`  customers accepted (load generator) ${singleCounts.accepted} = rows in the store ${storedCustomers}: ${singleCounts.accepted === storedCustomers ? 'yes' : 'NO'}`);
    console.log(`  pull path rows ${pulled} of ${records + ONE}`);
    console.log(`peak RSS: API server ${serverRss} MB; bare fastify server ${bareRss} MB; this process (load generator, baselines) ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
  } finally {
    for (const s of servers) await s.stop().catch(() => 0);
    for (const s of stores) await s.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${api} CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${pull} CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${lib} CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${big} CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${floor} CASCADE`);
    await admin.end();
    rmSync(configDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--bare') await bare(Number(process.argv[3]));
else await main();
