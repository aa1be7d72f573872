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
 * postback, timed the same way.
 */
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { packageRoot } from '../src/paths.js';
import { freePort, startChild, type Server } from './support/http-bench.js';

const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const FTDS = Number(process.argv[2] ?? 5000);
const RATE = Number(process.argv[3] ?? 1000);
const PER_TOKEN = 900;
const PARTNER = 'bench-postbacks';
const REGISTRATIONS = process.env.BENCH_EVENT === 'registration';
const CLI = join(packageRoot(), 'bin', 'partner-sync.js');
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

async function main(): Promise<void> {
  const schema = `ps_bench_postbacks_${process.pid}`;
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
    cli(schema, ['postbacks', 'add', '--affiliate', 'a0', '--events', REGISTRATIONS ? 'registration' : 'ftd', '--url', `http://127.0.0.1:${trackerPort}/pb?t=${REGISTRATIONS ? '{customer_id}' : '{transaction_id}'}&c={click_id}`, '--allow-private', '--rate', '1000']);
    const port = await freePort();
    server = await startChild([CLI, '--config', join(packageRoot(), 'config'), '--store', storeUrl(schema), 'serve', '--host', '127.0.0.1', '--port', String(port)], port, '/healthz');
    const tokenList = await tokens(server.url, client.client_id, client.client_secret, Math.ceil((FTDS + 100) / PER_TOKEN) + 1);
    // The customers first, in bulk: each deposit below is then its customer's FTD.
    for (let i = 0; i < (REGISTRATIONS ? 0 : FTDS); i += 1000) {
      const body = Array.from({ length: Math.min(1000, FTDS - i) }, (_, k) => ({ customer_id: `c${i + k}`, signup_date: '2026-11-01T00:00:00Z', affiliate_id: 'a0', click_id: `clk${i + k}` }));
      const res = await fetch(`${server.url}/api/v1/igaming/customers/bulk`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tokenList[0] as string}` }, body: JSON.stringify(body) });
      if (res.status >= 300) throw new Error(`customers: ${res.status} ${await res.text()}`);
    }
    const registered = arrived.size;
    let i = 0;
    const started = Date.now();
    const result = await autocannon({
      url: `${server.url}/api/v1/igaming/${REGISTRATIONS ? 'customers' : 'transactions'}`, connections: 50, amount: FTDS, overallRate: RATE, timeout: 30,
      requests: [{
        method: 'POST',
        setupRequest: (req: autocannon.Request) => {
          const k = i++;
          sent.set(REGISTRATIONS ? `c${k}` : `t${k}`, Date.now());
          const body = REGISTRATIONS
            ? { customer_id: `c${k}`, signup_date: '2026-11-01T00:00:00Z', affiliate_id: 'a0', click_id: `clk${k}` }
            : { transaction_id: `t${k}`, customer_id: `c${k}`, transaction_type: 'deposit', amount_currency: 50, currency: 'USD', transaction_date: '2026-11-02T12:00:00Z', status: 'approved' };
          return { ...req, headers: { 'content-type': 'application/json', authorization: `Bearer ${tokenList[1 + Math.floor(k / PER_TOKEN)] as string}` }, body: JSON.stringify(body) };
        },
      }],
    });
    const deadline = Date.now() + 120_000;
    while (arrived.size < FTDS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const latencies = [...sent].flatMap(([id, at]) => (arrived.has(id) ? [(arrived.get(id) as number) - at] : [])).sort((a, b) => a - b);
    const what = REGISTRATIONS ? 'customers (registration postbacks)' : 'FTDs';
    console.log(`pushed ${FTDS} ${what} at ${RATE}/s target: ${Math.round(result.requests.total / (result.duration || 1))} req/s, non-2xx ${result.non2xx}, push p99 ${result.latency.p99} ms, ${((Date.now() - started) / 1000).toFixed(1)} s in all`);
    console.log(`postbacks: ${latencies.length} of ${FTDS} arrived (registrations before: ${registered}), duplicates ${duplicates}`);
    console.log(`push prepared → tracker: p50 ${pct(latencies, 50)} ms, p95 ${pct(latencies, 95)} ms, p99 ${pct(latencies, 99)} ms, max ${latencies[latencies.length - 1]} ms (target p95 < 5000 ms)`);
  } finally {
    await server?.stop();
    tracker.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

await main();
