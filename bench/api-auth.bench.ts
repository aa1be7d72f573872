/**
 * Cost of the API's authentication and rate limit per request: autocannon against routes of one
 * app on a PostgreSQL store, each beside the same route without them, in the same run:
 * - bare:        GET answering {"ok":true}, no token;
 * - readyz:      /readyz (`select 1` and the applied migrations, in the store);
 * - token:       the bare route behind requireToken('read') (JWT verify, revocation cache), limit
 *                out of reach, in-memory counting;
 * - token+store: the same with the store-shared rate limiter (leases of 20 requests, as a 1000
 *                per minute limit claims them);
 * - refused:     every request over the limit (429).
 *
 *   node dist/bench/api-auth.bench.js [seconds] [connections]      (TEST_PG_URL overrides the server)
 */
import autocannon from 'autocannon';
import pg from 'pg';
import { Authenticator, requireToken } from '../src/api/auth.js';
import { issueToken, signingKey, verifyToken } from '../src/api/tokens.js';
import { createClient } from '../src/access/api-clients.js';
import { MemoryRateLimiter, StoreRateLimiter, type RateLimiter } from '../src/api/rate-limit.js';
import { buildApi } from '../src/api/server.js';
import type { RouteModule } from '../src/api/types.js';
import { silentLogger } from '../src/log.js';
import { Loader } from '../src/pipeline/load.js';
import { specValidator } from '../src/spec/validator.js';
import { openStore, type Store } from '../src/store/store.js';
import type { AddressInfo } from 'node:net';

const SECONDS = Number(process.argv[2] ?? 5);
const CONNECTIONS = Number(process.argv[3] ?? 50);
const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const routes: RouteModule = (app) => {
  app.get('/bench/bare', async () => ({ ok: true }));
  app.get('/bench/token', { onRequest: requireToken('read') }, async () => ({ ok: true }));
};

async function withApp<T>(store: Store, limiter: RateLimiter, work: (url: string, token: string) => Promise<T>): Promise<T> {
  const logger = silentLogger();
  const app = await buildApi({ store, logger, loader: new Loader({ store, validator: specValidator() }) }, { routes: [routes], limiter });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  try {
    const client = await createClient(store, { partner: 'bench', variant: 'igaming' });
    const res = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }) });
    const { access_token: token } = (await res.json()) as { access_token: string };
    return await work(url, token);
  } finally {
    await app.close();
  }
}

interface Figure {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  statuses: string;
}

async function measure(name: string, url: string, headers: Record<string, string> = {}): Promise<Figure> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  const statuses = `2xx ${result['2xx']}, 4xx ${result['4xx']}, 5xx ${result['5xx']}, errors ${result.errors}`;
  return { name, rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, statuses };
}

async function main(): Promise<void> {
  const schema = `ps_bench_api_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const store = await openStore({ url });
  const figures: Figure[] = [];
  let micro: Record<string, number>;
  try {
    micro = await perRequestCost(store);
    await withApp(store, new MemoryRateLimiter(1e12), async (base, token) => {
      figures.push(await measure('bare', `${base}/bench/bare`));
      figures.push(await measure('readyz', `${base}/readyz`));
      figures.push(await measure('token', `${base}/bench/token`, { authorization: `Bearer ${token}` }));
    });
    await withApp(store, new StoreRateLimiter(store, { limit: 1e12, chunk: 20 }), async (base, token) => {
      figures.push(await measure('token+store', `${base}/bench/token`, { authorization: `Bearer ${token}` }));
    });
    await withApp(store, new MemoryRateLimiter(1), async (base, token) => {
      figures.push(await measure('refused', `${base}/bench/token`, { authorization: `Bearer ${token}` }));
    });
  } finally {
    await store.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
  const bare = figures[0]!;
  console.log(`${CONNECTIONS} connections, ${SECONDS} s each, one process (server and load generator on this machine)`);
  for (const f of figures) {
    const costUs = f.name === 'bare' ? '' : `  ${(1e6 / f.rps - 1e6 / bare.rps).toFixed(0)} µs/request more than bare`;
    console.log(`${f.name.padEnd(12)} ${String(f.rps).padStart(7)} req/s  p50 ${f.p50} ms  p99 ${f.p99} ms  (${f.statuses})${costUs}`);
  }
  console.log('In process, without HTTP (time per call, averaged):');
  for (const [name, us] of Object.entries(micro)) console.log(`  ${name.padEnd(44)} ${us.toFixed(1)} µs`);
}

/** Per-call time of each step of the authentication, measured in this process without HTTP. */
async function perRequestCost(store: Store): Promise<Record<string, number>> {
  const N = 20_000;
  const key = await signingKey(store, {});
  const client = await createClient(store, { partner: 'bench-micro', variant: 'igaming' });
  const { accessToken } = await issueToken(key, client, store.clock);
  const memory = new MemoryRateLimiter(1e12);
  const shared = new StoreRateLimiter(store, { limit: 1e12, chunk: 20 });
  const auth = new Authenticator({ store, key, clock: store.clock, limiter: memory });
  const time = async (work: (i: number) => unknown): Promise<number> => {
    for (let i = 0; i < 1000; i++) await work(i); // warm up
    const start = process.hrtime.bigint();
    for (let i = 0; i < N; i++) await work(i);
    return Number(process.hrtime.bigint() - start) / 1000 / N;
  };
  try {
    return {
      'verify the JWT (jose, HS256)': await time(() => verifyToken(key, accessToken, store.clock)),
      'authenticate a token seen before (+ revocation)': await time(() => auth.authenticate(accessToken)),
      'rate limit, in memory': await time(() => memory.take('t')),
      'rate limit, store leases of 20 (amortised)': await time(() => shared.take('t')),
    };
  } finally {
    await shared.close();
  }
}

await main();
