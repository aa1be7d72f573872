/**
 * Funnel benchmark on PostgreSQL, two parts:
 * 1. What the phase history costs a load: N prop-trading customers (default 100,000) loaded in
 *    batches (default 1,000) through the Loader with the after-load jobs, beside the same load with
 *    the phase-history job left out, in the same run; then a second pass where every customer moves
 *    to its next phase (a newer last_modified_date), and a third with the same records again.
 * 2. What `funnelReport` costs on a large store: M customers' funnel rows (default 1,000,000,
 *    one partner, 500 affiliates, signups over a year) written straight into `funnel_customers`;
 *    p50/p95 answer time of a month, a month by affiliate, the year by cohort, and one affiliate's year.
 *
 *   node dist/bench/funnel.bench.js [customers] [batch] [funnel rows]   (customers 0 skips part 1; TEST_PG_URL overrides the server)
 */
import pg from 'pg';
import { phaseHistoryJob } from '../jobs/phase-history.js';
import { commissionJob } from '../jobs/commission.js';
import { silentLogger } from '../src/log.js';
import { Loader } from '../src/pipeline/load.js';
import { funnelReport, type FunnelFilters } from '../src/reports/funnel.js';
import { createSpecValidator } from '../src/spec/validator.js';
import { openStore, type Store } from '../src/store/store.js';
import type { SpecRecord } from '../src/types.js';

const CUSTOMERS = Number(process.argv[2] ?? 100_000);
const BATCH = Number(process.argv[3] ?? 1_000);
const FUNNEL_ROWS = Number(process.argv[4] ?? 1_000_000);
const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PHASES = ['phase_1', 'phase_2', 'funded', 'failed'];

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function withSchema<T>(name: string, work: (store: Store) => Promise<T>): Promise<T> {
  const schema = `funnel_bench_${name}_${process.pid}`;
  await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  const store = await openStore({ url: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}` });
  try {
    return await work(store);
  } finally {
    await store.close();
    await admin(`DROP SCHEMA ${schema} CASCADE`);
  }
}

function trader(i: number, pass: number): SpecRecord {
  const signup = Date.UTC(2026, 0, 1) + (i % 300) * 86_400_000;
  return {
    customer_id: `c${i}`,
    signup_date: new Date(signup).toISOString(),
    affiliate_id: `aff-${i % 500}`,
    challenge_type: ['standard', 'rapid', 'aggressive'][i % 3],
    account_size: [10000, 50000, 100000][i % 3],
    phase: PHASES[(i + pass) % PHASES.length],
    last_modified_date: new Date(signup + (pass + 1) * 3 * 86_400_000).toISOString(),
  };
}

async function timeLoads(store: Store, withHistory: boolean): Promise<number[]> {
  const logger = silentLogger();
  // The commission job alone, or with the phase-history job after it (as jobs/load-hooks.ts composes them).
  const commission = commissionJob(store, [], logger);
  const jobs = withHistory ? [commission, phaseHistoryJob(store)] : [commission];
  const loader = new Loader({ store, validator: createSpecValidator(), jobs });
  const times: number[] = [];
  for (const pass of [0, 1, 1]) {
    const started = performance.now();
    for (let start = 0; start < CUSTOMERS; start += BATCH) {
      const records = [];
      for (let i = start; i < Math.min(CUSTOMERS, start + BATCH); i++) records.push({ position: i - start + 1, value: trader(i, pass) });
      await loader.load({ partner: 'firm', variant: 'prop-trading', entity: 'customers', runId: `pass-${pass}`, records });
    }
    times.push(performance.now() - started);
  }
  return times;
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;

async function timeQuery(store: Store, label: string, filters: FunnelFilters, runs = 20): Promise<void> {
  await funnelReport(store.knex, filters); // warm
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    rows = (await funnelReport(store.knex, filters)).length;
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(`  ${label.padEnd(34)} p50 ${pct(times, 50).toFixed(1).padStart(7)} ms   p95 ${pct(times, 95).toFixed(1).padStart(7)} ms   (${rows} row(s))`);
}

console.log(`funnel benchmark on ${PG_URL.replace(/\/\/[^@]*@/, '//')}`);
if (CUSTOMERS > 0) {
console.log(`\n1. load cost: ${CUSTOMERS} prop-trading customers in batches of ${BATCH}, three passes (new customers; every customer's next phase; the same records re-sent)`);
const without = await withSchema('plain', (store) => timeLoads(store, false));
const withHistory = await withSchema('history', (store) => timeLoads(store, true));
for (const [i, pass] of ['new customers', 'phase changes', 're-sent'].entries()) {
  const a = without[i] as number;
  const b = withHistory[i] as number;
  console.log(`  ${pass.padEnd(14)} without phase history ${(a / 1000).toFixed(2)} s, with ${(b / 1000).toFixed(2)} s: +${(((b - a) / a) * 100).toFixed(1)}%`);
}
}

console.log(`\n2. funnelReport over ${FUNNEL_ROWS} customers' funnel rows`);
await withSchema('query', async (store) => {
  // Rows as the load would write them: 80% reach phase_1, 40% phase_2, 20% funded; 30% failed;
  // in signup order, as customers arrive (a new customer is loaded soon after it signs up).
  await store.knex.raw(`
    INSERT INTO funnel_customers
    SELECT 'firm', 'c' || g, 'aff-' || (g % 500), 'camp-' || (g % 40),
      (ARRAY['standard','rapid','aggressive','instant_funding'])[1 + g % 4],
      (ARRAY['10000','25000','50000','100000'])[1 + (g / 7) % 4],
      to_char(d, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), to_char(d, 'YYYY-MM-DD'), to_char(d, 'YYYY-MM'),
      (ARRAY['phase_1','phase_2','funded','failed'])[1 + g % 4],
      1 + g % 4,
      CASE WHEN g % 10 < 8 THEN 1 ELSE 0 END, CASE WHEN g % 10 < 4 THEN 1 ELSE 0 END, CASE WHEN g % 10 < 2 THEN 1 ELSE 0 END,
      NULL, NULL, NULL,
      CASE WHEN g % 10 BETWEEN 5 AND 7 THEN (ARRAY['phase_1','phase_2','funded','unknown'])[1 + g % 4] END,
      CASE WHEN g % 10 < 8 AND g % 13 <> 0 THEN (g % 997) / 97.0 END,
      CASE WHEN g % 10 < 4 AND g % 13 <> 0 THEN (g % 991) / 61.0 END,
      CASE WHEN g % 10 < 2 AND g % 13 <> 0 THEN (g % 983) / 43.0 END,
      '2026-11-23T00:00:00.000000Z'
    FROM (SELECT g, timestamp '2025-12-01' + (g % 365) * interval '1 day' + (g % 86400) * interval '1 second' AS d
          FROM generate_series(1, ${FUNNEL_ROWS}) AS g) AS s
    ORDER BY d`);
  await store.knex.raw('ANALYZE funnel_customers');
  await timeQuery(store, 'one month', { partner: 'firm', from: '2026-10-01', to: '2026-10-31' });
  await timeQuery(store, 'one month by affiliate', { partner: 'firm', from: '2026-10-01', to: '2026-10-31', by: 'affiliate' });
  await timeQuery(store, 'one month by account_size', { partner: 'firm', from: '2026-10-01', to: '2026-10-31', by: 'account_size' });
  await timeQuery(store, 'one affiliate, the whole year', { partner: 'firm', affiliate: 'aff-107' });
  await timeQuery(store, 'the whole year by cohort', { partner: 'firm', by: 'cohort' }, 5);
});
