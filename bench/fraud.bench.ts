/**
 * Fraud job benchmark: the time the fraud job takes per 1000-record batch, on a PostgreSQL store
 * holding 5,000,000 gaming-activity rows beside one holding 50,000 (same 10,000 customers and 100
 * affiliates; the big store has 500 days of history, the small 5). The method of
 * bench/commission.bench.ts: the ratio stays near 1 when a batch's cost follows the batch, not the
 * history.
 *
 *   node dist/bench/fraud.bench.js [bigRows] [smallRows] [repeats]     (TEST_PG_URL overrides the server)
 *
 * Set-up writes the history with COPY (customers with e-mails and click ids, one first deposit
 * each in the last days of history, the activity) and the days with activity in SQL; then the
 * detection itself derives every customer's facts and flags (detect over all customers, in
 * chunks), the steady state a batch meets. Measured, per store, each batch kind `repeats` times
 * (median, after one warm-up round): the job alone (its in-transaction hook) and the whole load
 * including it.
 */
import pg from 'pg';
import { copyLines, dropBenchSchemas, openBenchStore, printCostTable, type Timing } from './support/pg-bench.js';
import { fraudJob } from '../jobs/fraud.js';
import { addDays } from '../src/kernel/dates.js';
import { defaultConfig } from '../src/fraud/config.js';
import { detect } from '../src/fraud/detect.js';
import { silentLogger } from '../src/log.js';
import { Loader } from '../src/pipeline/load.js';
import { createSpecValidator } from '../src/spec/validator.js';
import type { Store } from '../src/store/store.js';
import type { RawRecord, SpecRecord } from '../src/types.js';

const BIG = Number(process.argv[2] ?? 5_000_000);
const SMALL = Number(process.argv[3] ?? 50_000);
const REPEATS = Number(process.argv[4] ?? 5);
const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CUSTOMERS = 10_000;
const AFFILIATES = 100;
const BATCH = 1000;
const LAST_DAY = '2026-05-15';
const config = defaultConfig();

const customerId = (i: number) => `c${String(i).padStart(5, '0')}`;
const affiliateOf = (i: number) => `aff-${String(i % AFFILIATES).padStart(3, '0')}`;
const signupOf = (i: number) => `${addDays(LAST_DAY, -(i % 5))}T10:00:00Z`;
// Every 50th customer shares an e-mail with the next one: identity groups exist in both stores.
const emailOf = (i: number) => `player${i - (i % 50 === 1 ? 1 : 0)}@example.com`;
const cents = (n: number) => (n / 100).toFixed(2);
const betsOf = (i: number, d: number) => cents(1000 + ((i * 7919 + d * 104729) % 90000));

const created: { schema: string; store?: Store }[] = [];

async function buildStore(rows: number): Promise<{ store: Store; days: number; setupMs: number; flags: number }> {
  const started = performance.now();
  const schema = `bench_fraud_${process.pid}_${rows}`;
  const { store, url } = await openBenchStore(PG_URL, schema, created);
  const days = Math.ceil(rows / CUSTOMERS);
  const firstDay = addDays(LAST_DAY, -(days - 1));
  const now = store.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`INSERT INTO partners VALUES ('bench', 'igaming', '${now}')`);
    await copyLines(client, 'COPY customers (partner_id, customer_id, signup_date, affiliate_id, country_code, email, click_id, first_name, last_name, loaded_at) FROM STDIN', function* () {
      for (let i = 0; i < CUSTOMERS; i++) yield `bench\t${customerId(i)}\t${signupOf(i)}\t${affiliateOf(i)}\t${i % 3 === 0 ? 'DE' : 'GB'}\t${emailOf(i)}\tclick-${i}\tName${i}\tLast${i}\t${now}\n`;
    });
    await copyLines(client, 'COPY transactions (partner_id, transaction_id, customer_id, transaction_type, amount_currency, currency, transaction_date, status, amount_usd, loaded_at) FROM STDIN', function* () {
      for (let i = 0; i < CUSTOMERS; i++) yield `bench\tftd-${i}\t${customerId(i)}\tdeposit\t50.00\tUSD\t${signupOf(i).slice(0, 10)}T11:00:00Z\tapproved\t50.00\t${now}\n`;
    });
    await copyLines(client, 'COPY gaming_activity (partner_id, date, customer_id, game_type, currency, total_bets, wins, loaded_at) FROM STDIN', function* () {
      let n = 0;
      for (let d = 0; d < days; d++) {
        const date = addDays(firstDay, d);
        for (let i = 0; i < CUSTOMERS && n < rows; i++, n++) yield `bench\t${date}\t${customerId(i)}\tslots\tUSD\t${betsOf(i, d)}\t0\t${now}\n`;
      }
    });
    await client.query(`INSERT INTO fraud_loaded_days (partner_id, date) SELECT DISTINCT partner_id, to_char(date, 'YYYY-MM-DD') FROM gaming_activity`);
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
  // The steady state: detection's own facts and flags for every customer.
  const ids = Array.from({ length: CUSTOMERS }, (_, i) => customerId(i));
  for (let i = 0; i < ids.length; i += 1000) {
    await store.transaction((trx) => detect(trx, store, config, { partner: 'bench', variant: 'igaming', customers: new Set(ids.slice(i, i + 1000)) }));
  }
  await store.knex.raw('ANALYZE');
  const [{ n }] = (await store.knex('fraud_flags').count({ n: '*' })) as [{ n: number }];
  return { store, days, setupMs: performance.now() - started, flags: Number(n) };
}


/** PROFILE=1: the slowest statements of the job (total ms over the counted rounds). */
function profiler(store: Store): () => void {
  if (!process.env.PROFILE) return () => {};
  const totals = new Map<string, number>();
  const started = new Map<string, number>();
  store.knex.on('query', (q: { __knexQueryUid: string }) => started.set(q.__knexQueryUid, performance.now()));
  store.knex.on('query-response', (_r: unknown, q: { __knexQueryUid: string; sql: string }) => {
    const t = started.get(q.__knexQueryUid);
    if (t === undefined) return;
    const sql = q.sql.replace(/\$\d+(, \$\d+)*/g, '?').slice(0, 110);
    totals.set(sql, (totals.get(sql) ?? 0) + performance.now() - t);
  });
  return () => { for (const [sql, ms] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`    ${ms.toFixed(0).padStart(6)} ms  ${sql}`); };
}

async function measure(store: Store): Promise<Map<string, Timing>> {
  const report = profiler(store);
  const job = fraudJob(store, config, silentLogger());
  let jobMs = 0;
  const loader = new Loader({
    store,
    validator: createSpecValidator(),
    jobs: [{
      ...job,
      async mark(tx, change) {
        const t0 = performance.now();
        await job.mark!(tx, change);
        jobMs += performance.now() - t0;
      },
    }],
  });
  const results = new Map<string, Timing>();
  let warmUp = true;
  const run = async (name: string, entity: 'customers' | 'transactions' | 'activity', records: SpecRecord[]) => {
    const raw: RawRecord[] = records.map((value, k) => ({ position: k + 1, value }));
    jobMs = 0;
    const t0 = performance.now();
    const result = await loader.load({ partner: 'bench', variant: 'igaming', entity, runId: `bench-${name}`, records: raw });
    const loadMs = performance.now() - t0;
    if (result.loaded !== records.length) throw new Error(`${name}: loaded ${result.loaded} of ${records.length}`);
    if (warmUp) return;
    const timing = results.get(name) ?? { job: [], load: [] };
    timing.job.push(jobMs);
    timing.load.push(loadMs);
    results.set(name, timing);
  };
  for (let r = 0; r <= REPEATS; r++) {
    const day = addDays(LAST_DAY, r + 1);
    warmUp = r === 0;
    const offset = (r * BATCH) % CUSTOMERS;
    const ids = Array.from({ length: BATCH }, (_, k) => offset + k);
    await run('activity, new day', 'activity', ids.map((i) => ({ date: day, customer_id: customerId(i), game_type: 'slots', currency: 'USD', total_bets: Number(betsOf(i, 10_000 + r)), wins: 0 })));
    await run('activity, corrected day', 'activity', ids.map((i) => ({ date: LAST_DAY, customer_id: customerId(i), game_type: 'slots', currency: 'USD', total_bets: Number(betsOf(i, 20_000 + r)), wins: 0 })));
    await run('transactions', 'transactions', ids.map((i) => ({
      transaction_id: `tx-${r}-${i}`, customer_id: customerId(i), transaction_type: i % 4 === 0 ? 'bonus' : i % 4 === 1 ? 'withdrawal' : 'deposit', amount_currency: 25 + (i % 50),
      currency: 'USD', amount_usd: 25 + (i % 50), transaction_date: `${day}T12:00:00Z`, status: i % 40 === 0 ? 'reversed' : 'approved',
    })));
    await run('customers', 'customers', ids.map((i) => ({
      customer_id: customerId(i), signup_date: signupOf(i), affiliate_id: affiliateOf(i), email: emailOf(i), click_id: `click-${i}`,
      country_code: i % 3 === 0 ? 'GB' : 'DE', last_modified_date: `${day}T00:00:00Z`,
    })));
    await run('customers, 10 re-attributed', 'customers', ids.map((i) => ({
      customer_id: customerId(i), signup_date: signupOf(i), affiliate_id: i % 100 === 0 ? affiliateOf(i + 1 + r) : affiliateOf(i), email: emailOf(i), click_id: `click-${i}`,
      country_code: i % 3 === 0 ? 'GB' : 'DE', last_modified_date: `${day}T00:00:01Z`,
    })));
  }
  report();
  return results;
}

async function main(): Promise<void> {
  console.log(`fraud job benchmark: PostgreSQL, ${CUSTOMERS} customers, ${AFFILIATES} affiliates, batches of ${BATCH} records, median of ${REPEATS}, rules of config/fraud.yaml's defaults`);
  const stores = [];
  for (const rows of [SMALL, BIG]) {
    const built = await buildStore(rows);
    console.log(`store with ${rows.toLocaleString('en')} activity rows (${built.days} days of history): set up in ${(built.setupMs / 1000).toFixed(1)} s, ${built.flags} flags`);
    stores.push({ rows, ...built });
  }
  const timings = [];
  for (const s of stores) timings.push(await measure(s.store));
  const [a, b] = timings;
  printCostTable(SMALL, BIG, a, b);
}

try {
  await main();
} finally {
  await dropBenchSchemas(PG_URL, created);
}
