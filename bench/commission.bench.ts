/**
 * Commission job benchmark: the time the commission job takes per 1000-record batch, on a
 * PostgreSQL store holding 5,000,000 gaming-activity rows beside one holding 50,000 (same
 * 10,000 customers and 100 affiliates; the big store has 500 days of history, the small 5).
 * Incremental means the ratio stays near 1: a batch's cost follows the batch, not the history.
 *
 *   node dist/bench/commission.bench.js [bigRows] [smallRows] [repeats]     (TEST_PG_URL overrides the server)
 *
 * Set-up writes the history with COPY and derives commission_customer_days and
 * commission_affiliate_months from it in SQL (NUMERIC, exact), which is not what is measured;
 * `commissions recompute --repair` then checks both stores' derived state against a rebuild, so the
 * shortcut cannot flatter the figures, and books the ledger the history earns (the steady state
 * a batch meets). Measured, per store, each batch kind `repeats` times
 * (median): the job alone (its in-transaction scope record and its evaluation after the commit)
 * and the whole load including it.
 */
import pg from 'pg';
import { copyLines, dropBenchSchemas, openBenchStore, printCostTable, type Timing } from './support/pg-bench.js';
import { commissionJob } from '../jobs/commission.js';
import { recompute } from '../src/commission/recompute.js';
import { addDays } from '../src/kernel/dates.js';
import { parsePlans } from '../src/commission/load-plans.js';
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
/** The last day of history; batches bring the days after it. */
const LAST_DAY = '2026-05-15';

const { plans, errors } = parsePlans(`plans:
  - id: cpa
    kind: cpa_ftd
    partner: bench
    affiliates: all
    effective: { from: 2020-01-01 }
    qualification: { window_days: 30, min_first_deposit_usd: 20, wagering: { min_usd: 100, within_days: 30 } }
    amount_usd: { default: 100, by_country: { DE: 150 } }
  - id: revshare
    kind: revshare
    partner: bench
    affiliates: all
    effective: { from: 2020-01-01 }
    revenue: ngr
    tiers: { mode: ladder, bands: [{ from_usd: 0, rate: 0.25 }, { from_usd: 50000, rate: 0.3 }] }
    negative_carryover: true
`, 'bench.yaml');
if (errors.length > 0) throw new Error(JSON.stringify(errors));

const customerId = (i: number) => `c${String(i).padStart(5, '0')}`;
const affiliateOf = (i: number) => `aff-${String(i % AFFILIATES).padStart(3, '0')}`;
const cents = (n: number) => (n / 100).toFixed(2);
/**
 * Signups in the last days of the history, so that the CPA wagering windows (30 days from
 * signup) hold the same days in both stores: they differ only in how much older history lies
 * behind, which is what the ratio is about.
 */
const signupOf = (i: number) => `${addDays(LAST_DAY, -(i % 5))}T10:00:00Z`;

/** Deterministic activity of customer i on day index d: bets, wins, ggr and ngr in USD. */
function activityValues(i: number, d: number): { bets: string; wins: string; ggr: string; ngr: string } {
  const bets = 1000 + ((i * 7919 + d * 104729) % 90000);
  const wins = Math.floor(bets * (0.8 + ((i + d) % 30) / 100));
  const ggr = bets - wins;
  return { bets: cents(bets), wins: cents(wins), ggr: cents(ggr), ngr: cents(Math.floor(ggr * 0.9)) };
}

/** Schemas this run created, dropped at the end whatever happens. */
const created: { schema: string; store?: Store }[] = [];

async function buildStore(rows: number): Promise<{ store: Store; schema: string; url: string; days: number; setupMs: number }> {
  const started = performance.now();
  const schema = `bench_commission_${process.pid}_${rows}`;
  const { store, url } = await openBenchStore(PG_URL, schema, created);
  const days = Math.ceil(rows / CUSTOMERS);
  const firstDay = addDays(LAST_DAY, -(days - 1));
  const now = store.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`INSERT INTO partners VALUES ('bench', 'igaming', '${now}')`);
    await copyLines(client, 'COPY customers (partner_id, customer_id, signup_date, affiliate_id, country_code, loaded_at) FROM STDIN', function* () {
      for (let i = 0; i < CUSTOMERS; i++) yield `bench\t${customerId(i)}\t${signupOf(i)}\t${affiliateOf(i)}\t${i % 3 === 0 ? 'DE' : 'GB'}\t${now}\n`;
    });
    await copyLines(client, 'COPY transactions (partner_id, transaction_id, customer_id, transaction_type, amount_currency, currency, transaction_date, status, amount_usd, loaded_at) FROM STDIN', function* () {
      for (let i = 0; i < CUSTOMERS; i++) yield `bench\tftd-${i}\t${customerId(i)}\tdeposit\t50.00\tUSD\t${signupOf(i).slice(0, 10)}T11:00:00Z\tapproved\t50.00\t${now}\n`;
    });
    await copyLines(client, 'COPY gaming_activity (partner_id, date, customer_id, game_type, currency, total_bets, wins, ggr, ngr, loaded_at) FROM STDIN', function* () {
      let n = 0;
      for (let d = 0; d < days; d++) {
        const date = addDays(firstDay, d);
        for (let i = 0; i < CUSTOMERS && n < rows; i++, n++) {
          const v = activityValues(i, d);
          yield `bench\t${date}\t${customerId(i)}\tslots\tUSD\t${v.bets}\t${v.wins}\t${v.ggr}\t${v.ngr}\t${now}\n`;
        }
      }
    });
    // Derived state in SQL (exact NUMERIC): every row carries ngr, so a day's NGR is Σ ngr.
    await client.query(`INSERT INTO commission_customer_days (partner_id, customer_id, date, affiliate_id, ggr_usd, ngr_usd, bets_usd, missing, updated_at)
      SELECT a.partner_id, a.customer_id, a.date, c.affiliate_id, SUM(a.ggr), SUM(a.ngr), SUM(a.total_bets), NULL, '${now}'
      FROM gaming_activity a JOIN customers c USING (partner_id, customer_id) GROUP BY a.partner_id, a.customer_id, a.date, c.affiliate_id`);
    await client.query(`INSERT INTO commission_customers (partner_id, customer_id, affiliate_id, updated_at)
      SELECT DISTINCT partner_id, customer_id, affiliate_id, '${now}'::timestamptz FROM commission_customer_days`);
    await client.query(`INSERT INTO commission_affiliate_months (partner_id, affiliate_id, month, ggr_usd, ngr_usd, days, missing_days, updated_at)
      SELECT partner_id, affiliate_id, to_char(date, 'YYYY-MM'), SUM(ggr_usd), SUM(ngr_usd), COUNT(*), 0, '${now}'
      FROM commission_customer_days GROUP BY partner_id, affiliate_id, to_char(date, 'YYYY-MM')`);
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
  return { store, schema, url, days, setupMs: performance.now() - started };
}



/** PROFILE=1: the slowest statements of the job per batch kind (total ms over the counted rounds). */
function profiler(store: Store): { start(name: string): void; report(): void } {
  const totals = new Map<string, Map<string, number>>();
  const started = new Map<string, number>();
  let current = '';
  if (!process.env.PROFILE) return { start: () => {}, report: () => {} };
  store.knex.on('query', (q: { __knexQueryUid: string }) => started.set(q.__knexQueryUid, performance.now()));
  store.knex.on('query-response', (_r: unknown, q: { __knexQueryUid: string; sql: string }) => {
    const t = started.get(q.__knexQueryUid);
    if (t === undefined) return;
    const byStatement = totals.get(current) ?? new Map<string, number>();
    const sql = q.sql.replace(/\$\d+(, \$\d+)*/g, '?').slice(0, 110);
    byStatement.set(sql, (byStatement.get(sql) ?? 0) + performance.now() - t);
    totals.set(current, byStatement);
  });
  return {
    start: (name) => { current = name; },
    report: () => {
      for (const [name, byStatement] of totals) {
        console.log(`  ${name}:`);
        for (const [sql, ms] of [...byStatement].sort((a, b) => b[1] - a[1]).slice(0, 6)) console.log(`    ${ms.toFixed(0).padStart(6)} ms  ${sql}`);
      }
    },
  };
}

async function measure(store: Store): Promise<Map<string, Timing>> {
  const profile = profiler(store);
  const job = commissionJob(store, plans, silentLogger());
  let jobMs = 0;
  const timed = async (work: () => Promise<void>) => {
    const t0 = performance.now();
    await work();
    jobMs += performance.now() - t0;
  };
  // The job's time: its in-transaction scope record and its evaluation after the commit.
  const loader = new Loader({
    store,
    validator: createSpecValidator(),
    jobs: [{ ...job, mark: (tx, change) => timed(() => job.mark!(tx, change)), evaluate: (ctx) => timed(() => job.evaluate!(ctx)) }],
  });
  const results = new Map<string, Timing>();
  let warmUp = true;
  const run = async (name: string, entity: 'customers' | 'transactions' | 'activity', records: SpecRecord[]) => {
    const raw: RawRecord[] = records.map((value, k) => ({ position: k + 1, value }));
    jobMs = 0;
    profile.start(warmUp ? 'warm-up' : name);
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
  // The first round warms up (JIT, connection pool, plan caches) and is not counted.
  for (let r = 0; r <= REPEATS; r++) {
    const day = addDays(LAST_DAY, r + 1);
    warmUp = r === 0;
    const offset = (r * BATCH) % CUSTOMERS;
    const ids = Array.from({ length: BATCH }, (_, k) => offset + k);
    // A new day of activity for 1000 customers (the nightly delivery, in 1000-record batches).
    await run('activity, new day', 'activity', ids.map((i) => {
      const v = activityValues(i, 10_000 + r);
      return { date: day, customer_id: customerId(i), game_type: 'slots', currency: 'USD', total_bets: Number(v.bets), wins: Number(v.wins), ggr: Number(v.ggr), ngr: Number(v.ngr) };
    }));
    // The last day of history re-sent with other values (a late correction).
    await run('activity, corrected day', 'activity', ids.map((i) => {
      const v = activityValues(i, 20_000 + r);
      return { date: LAST_DAY, customer_id: customerId(i), game_type: 'slots', currency: 'USD', total_bets: Number(v.bets), wins: Number(v.wins), ggr: Number(v.ggr), ngr: Number(v.ngr) };
    }));
    // 1000 deposits and bonuses of existing customers.
    await run('transactions', 'transactions', ids.map((i) => ({
      transaction_id: `tx-${r}-${i}`, customer_id: customerId(i), transaction_type: i % 4 === 0 ? 'bonus' : 'deposit', amount_currency: 25 + (i % 50),
      currency: 'USD', amount_usd: 25 + (i % 50), transaction_date: `${day}T12:00:00Z`, status: 'approved',
    })));
    // 1000 customer records re-sent (a country change).
    await run('customers', 'customers', ids.map((i) => ({
      customer_id: customerId(i), signup_date: signupOf(i), affiliate_id: affiliateOf(i),
      country_code: i % 3 === 0 ? 'GB' : 'DE', last_modified_date: `${day}T00:00:00Z`,
    })));
    // 1000 customer records, 10 of them moved to another affiliate: their whole history moves
    // with them, so this one grows with those 10 customers' history by design.
    await run('customers, 10 re-attributed', 'customers', ids.map((i) => ({
      customer_id: customerId(i), signup_date: signupOf(i), affiliate_id: i % 100 === 0 ? affiliateOf(i + 1 + r) : affiliateOf(i),
      country_code: i % 3 === 0 ? 'GB' : 'DE', last_modified_date: `${day}T00:00:01Z`,
    })));
  }
  profile.report();
  return results;
}

async function main(): Promise<void> {
  console.log(`commission job benchmark: PostgreSQL, ${CUSTOMERS} customers, ${AFFILIATES} affiliates, batches of ${BATCH} records, median of ${REPEATS}`);
  const stores = [];
  for (const rows of [SMALL, BIG]) {
    const built = await buildStore(rows);
    console.log(`store with ${rows.toLocaleString('en')} activity rows (${built.days} days of history): set up in ${(built.setupMs / 1000).toFixed(1)} s`);
    stores.push({ rows, ...built });
  }
  // The ledger as the job would have left it after the history: recompute --repair books every
  // key, and checks the SQL-built derived state against its own rebuild on the way.
  for (const s of stores) {
    const t0 = performance.now();
    const [check] = await recompute(s.store, plans, { runId: 'bench-setup', repair: true });
    const ms = performance.now() - t0;
    const drift = (check?.derived.customer_days ?? 0) + (check?.derived.affiliate_months ?? 0) + (check?.derived.attributions ?? 0);
    console.log(`recompute --repair of the ${s.rows.toLocaleString('en')}-row store: ${(ms / 1000).toFixed(1)} s, ${check?.keys ?? 0} keys, ${check?.repaired?.lines ?? 0} lines booked; derived state differing from the rebuild: ${drift} (must be 0)`);
    if (drift > 0) throw new Error('the SQL set-up does not match the engine');
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
