/**
 * Postback latency under push load: `partner-sync serve` (a child process, PostgreSQL store)
 * takes single pushed deposits at a fixed rate (the push benchmark's 1000 requests/s by default),
 * each the FTD of a customer pushed before, and delivers an `ftd` postback per deposit to a local
 * tracker. Per FTD: from the moment its push request is prepared (before its commit, so an upper
 * bound of commit → tracker) to the tracker receiving its postback; p50, p95, max; every FTD
 * must arrive once. Target (issue): p95 under 5 s.
 *
 *   npm run build && node dist/bench/postbacks.bench.js [ftds] [rate]   (defaults 5000 and 1000)
 *
 * BENCH_EVENT=registration pushes the push benchmark's own single-record load instead: single
 * customers (POST /api/v1/igaming/customers) at the rate, each announced by a `registration`
 * postback, timed the same way. BENCH_SERVER_NODE_ARGS adds node flags to the server (as in
 * push.bench.ts, e.g. "--cpu-prof --cpu-prof-dir=prof").
 */
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { packageRoot } from '../src/paths.js';
import { describeTransactions, freePort, pushTransactions, startChild, type Server } from './support/http-bench.js';
import { launcherFlags } from './support/launcher.js';

const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const FTDS = Number(process.argv[2] ?? 5000);
const RATE = Number(process.argv[3] ?? 1000);
const PER_TOKEN = 900;
const PARTNER = 'bench-postbacks';
const REGISTRATIONS = process.env.BENCH_EVENT === 'registration';
/** Customers spread over this many affiliates (a0, a1, ...), each with its own postback (BENCH_AFFILIATES; the push benchmark uses 20). */
const AFFILIATES = Number(process.env.BENCH_AFFILIATES ?? 1);
/** BENCH_CLICK_IDS=0 sends customers without a click id, as the push benchmark's are. */
const CLICK_IDS = process.env.BENCH_CLICK_IDS !== '0';
const customerBody = (k: number) => ({ customer_id: `c${k}`, signup_date: '2026-11-01T00:00:00Z', affiliate_id: `a${k % AFFILIATES}`, ...(CLICK_IDS ? { click_id: `clk${k}` } : {}) });
const CLI = join(packageRoot(), 'bin', 'partner-sync.js');
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
const storeUrl = (schema: string) => `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
process.env.POSTBACK_SECRET_KEY ??= 'bench-postbacks-key-0123456789abcdef0123456789';

function cli(schema: string, args: string[]): string {
  const r = spawnSync(process.execPath, [CLI, '--config', join(packageRoot(), 'config'), '--store', storeUrl(schema), ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`partner-sync ${args.join(' ')}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

async function tokens(url: string, clientId: string, secret: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret, scope: 'write' }).toString() });
    if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
    out.push(((await res.json()) as { access_token: string }).access_token);
  }
  return out;
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

interface Outcome { rate: number; p99: number; transactions: string; arrived: number; duplicates: number; latencies: number[] }

/** One run on a fresh schema: with `postbacks`, a postback per event to the local tracker; without, the same pushes alone (the baseline). */
async function run(postbacks: boolean): Promise<Outcome> {
  const schema = `ps_bench_postbacks_${process.pid}_${postbacks ? 'on' : 'off'}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const sent = new Map<string, number>();
  const arrived = new Map<string, number>();
  let duplicates = 0;
  const tracker = http.createServer((req, res) => {
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('t') ?? '';
    if (arrived.has(id)) duplicates += 1;
    else arrived.set(id, Date.now());
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => tracker.listen(0, '127.0.0.1', resolve));
  const trackerPort = (tracker.address() as { port: number }).port;
  let server: Server | undefined;
  try {
    cli(schema, ['migrate']);
    const client = JSON.parse(cli(schema, ['clients', 'add', PARTNER, '--variant', 'igaming', '--scope', 'read,write', '--json'])) as { client_id: string; client_secret: string };
    for (let a = 0; postbacks && a < AFFILIATES; a++) cli(schema, ['postbacks', 'add', '--affiliate', `a${a}`, '--events', REGISTRATIONS ? 'registration' : 'ftd', '--url', `http://127.0.0.1:${trackerPort}/pb?t=${REGISTRATIONS ? '{customer_id}' : '{transaction_id}'}&c={click_id}`, '--allow-private', '--rate', '1000']);
    const port = await freePort();
    server = await startChild([...launcherFlags(), ...SERVER_NODE_ARGS, CLI, '--config', join(packageRoot(), 'config'), '--store', storeUrl(schema), 'serve', '--host', '127.0.0.1', '--port', String(port)], port, '/healthz');
    const tokenList = await tokens(server.url, client.client_id, client.client_secret, Math.ceil((FTDS + 100) / PER_TOKEN) + 1);
    // The customers first, in bulk: each deposit below is then its customer's FTD.
    for (let i = 0; i < (REGISTRATIONS ? 0 : FTDS); i += 1000) {
      const body = Array.from({ length: Math.min(1000, FTDS - i) }, (_, k) => customerBody(i + k));
      const res = await fetch(`${server.url}/api/v1/igaming/customers/bulk`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tokenList[0] as string}` }, body: JSON.stringify(body) });
      if (res.status >= 300) throw new Error(`customers: ${res.status} ${await res.text()}`);
    }
    let i = 0;
    const entity = REGISTRATIONS ? 'customers' : 'transactions';
    const before = (await pushTransactions(server.url))[entity];
    const result = await autocannon({
      url: `${server.url}/api/v1/igaming/${REGISTRATIONS ? 'customers' : 'transactions'}`, connections: 50, amount: FTDS, overallRate: RATE, timeout: 30,
      requests: [{
        method: 'POST',
        setupRequest: (req: autocannon.Request) => {
          const k = i++;
          sent.set(REGISTRATIONS ? `c${k}` : `t${k}`, Date.now());
          const body = REGISTRATIONS
            ? customerBody(k)
            : { transaction_id: `t${k}`, customer_id: `c${k}`, transaction_type: 'deposit', amount_currency: 50, currency: 'USD', transaction_date: '2026-11-02T12:00:00Z', status: 'approved' };
          return { ...req, headers: { 'content-type': 'application/json', authorization: `Bearer ${tokenList[1 + Math.floor(k / PER_TOKEN)] as string}` }, body: JSON.stringify(body) };
        },
      }],
    });
    const transactions = describeTransactions((await pushTransactions(server.url))[entity], before);
    const deadline = Date.now() + 120_000;
    while (postbacks && arrived.size < FTDS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const latencies = [...sent].flatMap(([id, at]) => (arrived.has(id) ? [(arrived.get(id) as number) - at] : [])).sort((a, b) => a - b);
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`pushes failed: non-2xx ${result.non2xx}, errors ${result.errors}`);
    return { rate: result.requests.total / (result.duration || 1), p99: result.latency.p99, transactions, arrived: latencies.length, duplicates, latencies };
  } finally {
    await server?.stop();
    tracker.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

async function main(): Promise<void> {
  const what = REGISTRATIONS ? 'customers (registration postbacks)' : 'FTDs';
  const base = await run(false);
  console.log(`baseline, no postback defined: pushed ${FTDS} ${what} at ${RATE}/s asked: ${Math.round(base.rate)} req/s, push p99 ${base.p99} ms\n  ${base.transactions}`);
  const on = await run(true);
  const l = on.latencies;
  console.log(`with postbacks delivered by serve: ${Math.round(on.rate)} req/s (${(on.rate / base.rate).toFixed(2)}x the baseline), push p99 ${on.p99} ms\n  ${on.transactions}`);
  console.log(`postbacks: ${on.arrived} of ${FTDS} arrived, duplicates ${on.duplicates}`);
  console.log(`push prepared → tracker: p50 ${pct(l, 50)} ms, p95 ${pct(l, 95)} ms, p99 ${pct(l, 99)} ms, max ${l[l.length - 1]} ms (target p95 < 5000 ms)`);
}

await main();
