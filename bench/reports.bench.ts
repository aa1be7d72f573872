/**
 * Reports benchmark (docs/reports.md): on a PostgreSQL store of N customers, 2N transactions and
 * 10N gaming-activity rows (N = 1,000,000 by default: 10,000,000 activity rows), a month's
 * affiliate report from the report facts, p50/p95, beside the same figures computed by a plain
 * GROUP BY over the raw tables in the same run; the funnel report over 0.1N prop-trading
 * customers; and what the facts add to each loaded 1000-record batch (the Loader with and without
 * the report-facts hook, same batches).
 *
 *   node dist/bench/reports.bench.js [customers=1000000] [repeats=20] [cost]     (TEST_PG_URL overrides the server;
 *   `cost`: only the per-batch cost, on the same store)
 *
 * Set-up writes the history with COPY straight into the store's tables (the Loader would take
 * hours for 13,000,000 records), then builds the facts once with `rebuildFacts`, the function
 * that rebuilds them from the raw tables, and the funnel rows with the phase history's seeding
 * (`seedPhaseHistory`). The report's figures are checked against the raw GROUP BY's before timing.
 */
import pg from 'pg';
import { copyLines } from './support/pg-bench.js';
import { addDays } from '../src/kernel/dates.js';
import { money } from '../src/kernel/money.js';
import { Loader } from '../src/pipeline/load.js';
import { affiliateReport } from '../src/reports/affiliates.js';
import { COUNT_COLUMNS, MONEY_COLUMNS } from '../src/reports/facts-columns.js';
import { rebuildFacts } from '../src/reports/facts.js';
import { funnelReport } from '../src/reports/funnel.js';
import { reportFactsJob } from '../src/reports/hook.js';
import { seedPhaseHistory008 as seedPhaseHistory } from '../src/store/migrations/008-phase-history-seed.js';
import { createSpecValidator } from '../src/spec/validator.js';
import { openStore, type Store } from '../src/store/store.js';
import type { RawRecord, SpecRecord } from '../src/types.js';

const N = Number(process.argv[2] ?? 1_000_000);
const REPEATS = Number(process.argv[3] ?? 20);
/** `cost`: only the per-batch cost of the facts (the store is built all the same). */
const ONLY_COST = process.argv[4] === 'cost';
const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const AFFILIATES = 1000;
const YEAR_START = '2026-01-01';
const DAYS = 365;
const MONTH = { from: '2026-10-01', to: '2026-10-31' };
const BATCH = 1000;
const BATCHES = Number(process.env.BENCH_BATCHES ?? 10);
const GAMES = ['slots', 'live_casino', 'poker', 'sportsbook', 'table_games'];

const customerId = (i: number) => `c${String(i).padStart(8, '0')}`;
const affiliateOf = (i: number) => `aff-${String((i * 7) % AFFILIATES).padStart(4, '0')}`;
const campaignOf = (i: number) => (i % 10 === 0 ? '\\N' : `${affiliateOf(i)}-c${i % 3}`);
const dayOf = (n: number) => addDays(YEAR_START, ((n % DAYS) + DAYS) % DAYS);
const cents = (n: number) => (n / 100).toFixed(2);

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
const stats = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: Number(pct(s, 50).toFixed(1)), p95: Number(pct(s, 95).toFixed(1)), n: s.length };
};
const median = (ms: number[]) => stats(ms).p50;

async function time<T>(work: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const value = await work();
  return [performance.now() - started, value];
}

async function build(client: pg.Client, now: string): Promise<void> {
  const t0 = performance.now();
  await client.query(`INSERT INTO partners (partner_id, variant, created_at) VALUES ('bench', 'igaming', '${now}'), ('bench-prop', 'prop-trading', '${now}')`);
  await copyLines(client, 'COPY customers (partner_id, customer_id, signup_date, affiliate_id, campaign_id, country_code, loaded_at) FROM STDIN', function* () {
    for (let i = 0; i < N; i++) yield `bench\t${customerId(i)}\t${dayOf(i)}T${String(i % 24).padStart(2, '0')}:15:00Z\t${affiliateOf(i)}\t${campaignOf(i)}\tDE\t${now}\n`;
  });
  const phases = ['phase_1', 'phase_1', 'phase_2', 'funded', 'failed'];
  await copyLines(client, 'COPY customers (partner_id, customer_id, signup_date, affiliate_id, campaign_id, challenge_type, account_size, phase, last_modified_date, loaded_at) FROM STDIN', function* () {
    for (let i = 0; i < N / 10; i++) {
      yield `bench-prop\t${customerId(i)}\t${dayOf(i)}T08:00:00Z\t${affiliateOf(i)}\t${campaignOf(i)}\t${i % 2 ? 'standard' : 'rapid'}\t${[10000, 50000, 100000][i % 3]}\t${phases[i % 5]}\t${addDays(dayOf(i), 20 + (i % 30))}T08:00:00Z\t${now}\n`;
    }
  });
  console.log(`customers: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const t1 = performance.now();
  const types = ['deposit', 'deposit', 'deposit', 'deposit', 'deposit', 'deposit', 'withdrawal', 'withdrawal', 'bonus', 'adjustment'];
  await copyLines(client, 'COPY transactions (partner_id, transaction_id, customer_id, transaction_type, amount_currency, currency, transaction_date, status, loaded_at) FROM STDIN', function* () {
    for (let i = 0; i < 2 * N; i++) {
      const status = i % 20 === 0 ? 'declined' : i % 31 === 0 ? 'reversed' : 'approved';
      yield `bench\tt${i}\t${customerId((i * 7919) % N)}\t${types[i % 10]}\t${cents(1000 + ((i * 37) % 50000))}\t${i % 4 === 0 ? 'EUR' : 'USD'}\t${dayOf(i * 13)}T${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00Z\t${status}\t${now}\n`;
    }
  });
  await copyLines(client, 'COPY fx_rates (currency, date, rate, source, loaded_at) FROM STDIN', function* () {
    for (let d = 0; d < DAYS + 60; d++) yield `EUR\t${addDays(YEAR_START, d)}\t${(1.05 + (d % 10) / 100).toFixed(4)}\tbench\t${now}\n`;
  });
  console.log(`transactions: ${((performance.now() - t1) / 1000).toFixed(1)} s`);
  const t2 = performance.now();
  await copyLines(client, 'COPY gaming_activity (partner_id, date, customer_id, game_type, currency, bets_count, total_bets, wins, ggr, ngr, loaded_at) FROM STDIN', function* () {
    for (let i = 0; i < N; i++) {
      for (let j = 0; j < 10; j++) {
        const bets = 500 + ((i * 31 + j * 17) % 100000);
        const wins = (bets * ((i + j) % 97)) / 100;
        const ggr = bets - Math.round(wins);
        yield `bench\t${dayOf(i * 7 + j * 37)}\t${customerId(i)}\t${GAMES[j % 5]}\t${i % 5 === 0 ? 'EUR' : 'USD'}\t${1 + (j % 9)}\t${cents(bets)}\t${cents(Math.round(wins))}\t${cents(ggr)}\t${cents(Math.round(ggr * 0.8))}\t${now}\n`;
      }
    }
  });
  console.log(`activity: ${((performance.now() - t2) / 1000).toFixed(1)} s`);
  await client.query('ANALYZE');
}

/** The month's figures per affiliate by a plain GROUP BY over the raw tables (what the facts spare). */
async function rawGroupBy(client: pg.Client): Promise<Map<string, Record<string, string>>> {
  const start = `${MONTH.from}T00:00:00Z`;
  const end = `${addDays(MONTH.to, 1)}T00:00:00Z`;
  const usd = "COALESCE(t.amount_usd, t.amount_currency * (CASE WHEN t.currency = 'USD' THEN 1 ELSE r.rate END))";
  const join = `FROM transactions t JOIN customers c ON c.partner_id = t.partner_id AND c.customer_id = t.customer_id
    LEFT JOIN fx_rates r ON r.currency = t.currency AND r.date = (t.transaction_date AT TIME ZONE 'UTC')::date`;
  const [regs, txs, ftds, acts] = await Promise.all([
    client.query(`SELECT affiliate_id AS aff, COUNT(*)::text AS registrations FROM customers WHERE partner_id = 'bench' AND signup_date >= $1 AND signup_date < $2 GROUP BY 1`, [start, end]),
    client.query(`SELECT c.affiliate_id AS aff, SUM(CASE WHEN t.transaction_type = 'deposit' THEN ${usd} END)::text AS deposits_usd,
        COUNT(DISTINCT CASE WHEN t.transaction_type = 'deposit' THEN t.customer_id END)::text AS depositors,
        SUM(CASE WHEN t.transaction_type = 'withdrawal' THEN ${usd} END)::text AS withdrawals_usd, SUM(CASE WHEN t.transaction_type = 'bonus' THEN ${usd} END)::text AS bonuses_usd
      ${join} WHERE t.partner_id = 'bench' AND t.status = 'approved' AND t.transaction_date >= $1 AND t.transaction_date < $2 GROUP BY 1`, [start, end]),
    client.query(`SELECT c.affiliate_id AS aff, COUNT(*)::text AS ftd_count, SUM(${usd})::text AS ftd_usd ${join}
      WHERE t.partner_id = 'bench' AND t.transaction_type = 'deposit' AND t.status = 'approved' AND t.transaction_date >= $1 AND t.transaction_date < $2 AND NOT EXISTS (
        SELECT 1 FROM transactions e WHERE e.partner_id = t.partner_id AND e.customer_id = t.customer_id AND e.transaction_type = 'deposit' AND e.status = 'approved'
        AND (e.transaction_date < t.transaction_date OR (e.transaction_date = t.transaction_date AND e.transaction_id < t.transaction_id))) GROUP BY 1`, [start, end]),
    client.query(`SELECT c.affiliate_id AS aff, SUM(a.total_bets * (CASE WHEN a.currency = 'USD' THEN 1 ELSE r.rate END))::text AS bets_usd,
        SUM(COALESCE(a.ggr, a.total_bets - a.wins, 0) * (CASE WHEN a.currency = 'USD' THEN 1 ELSE r.rate END))::text AS ggr_usd,
        SUM(COALESCE(a.ngr, 0) * (CASE WHEN a.currency = 'USD' THEN 1 ELSE r.rate END))::text AS ngr_usd
      FROM gaming_activity a JOIN customers c ON c.partner_id = a.partner_id AND c.customer_id = a.customer_id LEFT JOIN fx_rates r ON r.currency = a.currency AND r.date = a.date
      WHERE a.partner_id = 'bench' AND a.date >= $1 AND a.date <= $2 GROUP BY 1`, [MONTH.from, MONTH.to]),
  ]);
  const out = new Map<string, Record<string, string>>();
  for (const result of [regs, txs, ftds, acts]) {
    for (const row of result.rows as Record<string, string>[]) out.set(row.aff as string, { ...(out.get(row.aff as string) ?? {}), ...row });
  }
  return out;
}

/**
 * What the facts add to each loaded batch: 1000-record batches of every kind, the Loader without
 * and with the report-facts hook, same run, alternating which goes first. Batches are spread over
 * the 1000 affiliates of a few days (every one touches about a thousand cells).
 */
async function loadCost(store: Store): Promise<void> {
  const validator = createSpecValidator();
  const plain = new Loader({ store, validator });
  const withFacts = new Loader({ store, validator, jobs: [reportFactsJob(store)] });
  const rawRecords = (records: SpecRecord[]): RawRecord[] => records.map((value, i) => ({ position: i + 1, value }));
  const someone = (k: number, i: number) => customerId((k * 104729 + i * 7907) % N);
  const txBatch = (k: number): SpecRecord[] => Array.from({ length: BATCH }, (_, i) => ({
    transaction_id: `new-${k}-${i}`, customer_id: someone(k, i), transaction_type: i % 3 === 0 ? 'withdrawal' : 'deposit',
    amount_currency: 25 + (i % 100), currency: i % 4 === 0 ? 'EUR' : 'USD', transaction_date: `${addDays('2026-12-01', k % 20)}T10:${String(i % 60).padStart(2, '0')}:00Z`, status: 'approved',
  }));
  const actBatch = (k: number): SpecRecord[] => Array.from({ length: BATCH }, (_, i) => ({
    date: addDays('2026-12-01', k % 20), customer_id: customerId((k * 15485863 + i * 7919) % N), game_type: `bingo-${k}`, currency: 'USD', total_bets: 100 + i, wins: 50, ggr: 50 + i, ngr: 40 + i,
  }));
  const custBatch = (k: number): SpecRecord[] => Array.from({ length: BATCH }, (_, i) => ({
    customer_id: `new-${k}-${i}`, signup_date: `${addDays('2026-12-01', k % 20)}T09:${String(i % 60).padStart(2, '0')}:00Z`, affiliate_id: affiliateOf(i), campaign_id: `${affiliateOf(i)}-c1`, country_code: 'DE',
  }));
  // Another affiliate and campaign for the same customers: every cell of their history moves.
  const moveCust = (records: SpecRecord[]): SpecRecord[] => records.map((r, i) => ({ ...r, affiliate_id: affiliateOf(i + 1), campaign_id: `${affiliateOf(i + 1)}-c2` }));
  // The same transactions reversed: their amounts leave their cells, their customers' FTDs and depositor days are looked at again.
  const reverse = (records: SpecRecord[]): SpecRecord[] => records.map((r) => ({ ...r, status: 'reversed' }));
  const kinds = ['customers, new', 'customers, re-sent', 'customers, moved', 'transactions, new', 'transactions, re-sent', 'transactions, reversed', 'activity, new', 'activity, re-sent'];
  const cost = new Map(kinds.map((k) => [k, { plain: [] as number[], facts: [] as number[] }]));
  let run = 0;
  const load = async (loader: Loader, entity: 'customers' | 'transactions' | 'activity', records: SpecRecord[]) =>
    (await time(() => loader.load({ partner: 'bench', variant: 'igaming', entity, runId: `bench-${++run}`, records: rawRecords(records) })))[0];
  /** One batch kind: `a` through the Loader alone, `b` (same shape) through the Loader with the facts. */
  const pair = async (kind: string, k: number, entity: 'customers' | 'transactions' | 'activity', a: SpecRecord[], b: SpecRecord[]) => {
    const c = cost.get(kind)!;
    if (k % 2 === 0) {
      c.plain.push(await load(plain, entity, a));
      c.facts.push(await load(withFacts, entity, b));
    } else {
      c.facts.push(await load(withFacts, entity, b));
      c.plain.push(await load(plain, entity, a));
    }
  };
  for (let k = 0; k < BATCHES; k++) {
    const [ca, cb] = [custBatch(2 * k + 100), custBatch(2 * k + 101)];
    await pair('customers, new', k, 'customers', ca, cb);
    await pair('customers, re-sent', k, 'customers', ca, cb);
    await pair('customers, moved', k, 'customers', moveCust(ca), moveCust(cb));
    const [ta, tb] = [txBatch(2 * k + 100), txBatch(2 * k + 101)];
    await pair('transactions, new', k, 'transactions', ta, tb);
    await pair('transactions, re-sent', k, 'transactions', ta, tb);
    await pair('transactions, reversed', k, 'transactions', reverse(ta), reverse(tb));
    const [aa, ab] = [actBatch(2 * k + 100), actBatch(2 * k + 101)];
    await pair('activity, new', k, 'activity', aa, ab);
    await pair('activity, re-sent', k, 'activity', aa, ab);
  }
  // Batches loaded without the hook leave their cells stale: a store used afterwards needs rebuildFacts.
  console.log(`load cost per ${BATCH}-record batch, median of ${BATCHES}, ms:`);
  for (const [k, v] of cost) {
    const p = median(v.plain);
    const f = median(v.facts);
    console.log(`  ${k.padEnd(24)} Loader ${String(p).padStart(7)}  Loader + facts ${String(f).padStart(7)}  facts add ${String((f - p).toFixed(1)).padStart(7)} ms = ${(((f - p) / p) * 100).toFixed(0)}%`);
  }
  await factsFloor(store, Math.min(...[...cost.values()].map((v) => median(v.plain))));
}

/**
 * The floor of any facts update that is exact when its batch commits (point 7), measured on the
 * same store: the two statements it cannot do without for a batch like the ones above, each
 * alone, in PostgreSQL, nothing else. (1) Reading the stored versions of the batch's 1000 records
 * by key (what they counted in must be taken out: PostgreSQL 15 cannot return a row's old values
 * from the upsert that replaces it); (2) adding to the 1000 day cells such a batch touches, in one
 * statement (existing cells, updated in place). Each rolled back; median of BATCHES.
 */
async function factsFloor(store: Store, loaderMs: number): Promise<void> {
  const knex = store.knex;
  const read: number[] = [];
  const write: number[] = [];
  const cellRows: Record<string, unknown>[] = await knex('report_cells').where('partner_id', 'bench').where('day', '>=', MONTH.from)
    .orderBy(['day', 'affiliate_id', 'campaign_id']).limit(BATCH * BATCHES).select('day', 'affiliate_id', 'campaign_id');
  const columns = [...COUNT_COLUMNS, ...MONEY_COLUMNS];
  for (let k = 0; k < BATCHES; k++) {
    const ids = Array.from({ length: BATCH }, (_, i) => customerId((k * 7919 + i * 104723) % N));
    const keys = cellRows.slice(k * BATCH, (k + 1) * BATCH).map((r) => ({ day: String(r.day instanceof Date ? r.day.toISOString() : r.day).slice(0, 10), affiliate_id: r.affiliate_id, campaign_id: r.campaign_id, registrations: 1 }));
    await knex.transaction(async (trx) => {
      read.push((await time(() => trx.raw("SELECT * FROM customers WHERE partner_id = 'bench' AND customer_id = ANY(?::text[])", [ids])))[0]);
      write.push((await time(() => trx.raw(`INSERT INTO report_cells (partner_id, day, affiliate_id, campaign_id, ${columns.join(', ')})
        SELECT 'bench', k.day, k.affiliate_id, k.campaign_id, ${columns.map((c) => (c === 'registrations' ? 'k.registrations' : '0')).join(', ')}
        FROM json_to_recordset(?::json) AS k(day date, affiliate_id text, campaign_id text, registrations bigint)
        ON CONFLICT (partner_id, day, affiliate_id, campaign_id) DO UPDATE SET registrations = report_cells.registrations + excluded.registrations`, [JSON.stringify(keys)])))[0]);
      await trx.rollback();
    }).catch(() => undefined);
  }
  const r = median(read);
  const w = median(write);
  console.log(`floor of an exact facts update per ${BATCH}-record batch (PostgreSQL alone, median of ${BATCHES}): read ${BATCH} stored versions by key ${r.toFixed(1)} ms + add to ${BATCH} day cells ${w.toFixed(1)} ms = ${(r + w).toFixed(1)} ms = ${(((r + w) / loaderMs) * 100).toFixed(0)}% of the fastest Loader batch above (${loaderMs} ms); the cell write alone ${((w / loaderMs) * 100).toFixed(0)}%`);
}

async function main(): Promise<void> {
  const schema = `bench_reports_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  let store: Store | undefined;
  const client = new pg.Client({ connectionString: url });
  try {
    store = await openStore({ url });
    await client.connect();
    await client.query("SET TIME ZONE 'UTC'");
    const now = store.now();
    console.log(`reports benchmark: ${N} customers (+${N / 10} prop-trading), ${2 * N} transactions, ${10 * N} gaming activity rows; ${AFFILIATES} affiliates; PostgreSQL ${(await client.query('SHOW server_version')).rows[0].server_version}`);
    await build(client, now);

    const [rebuildMs, cells] = await time(() => rebuildFacts(store!, 'bench', 'igaming'));
    console.log(`facts rebuilt from the raw tables once: ${cells} cells in ${(rebuildMs / 1000).toFixed(1)} s`);
    const [seedMs] = await time(() => seedPhaseHistory(store!.knex, store!.clock));
    console.log(`funnel rows seeded from ${N / 10} prop-trading customers: ${(seedMs / 1000).toFixed(1)} s`);
    await client.query('ANALYZE');

    if (ONLY_COST) {
      await loadCost(store);
      return;
    }
    // The facts' figures equal the raw GROUP BY's.
    const filter = { partner: 'bench', ...MONTH };
    const report = await affiliateReport(store, filter, 'month');
    const raw = await rawGroupBy(client);
    let checked = 0;
    for (const row of report.rows) {
      const r = raw.get(row.affiliate) ?? {};
      for (const c of ['registrations', 'ftd_count', 'depositors'] as const) if (String(row[c]) !== String(r[c] ?? 0)) throw new Error(`${row.affiliate} ${c}: report ${row[c]}, raw ${r[c]}`);
      for (const c of ['ftd_usd', 'deposits_usd', 'withdrawals_usd', 'bonuses_usd', 'bets_usd', 'ggr_usd', 'ngr_usd'] as const) {
        if (!money(row[c]).equals(money(r[c] ?? 0))) throw new Error(`${row.affiliate} ${c}: report ${row[c]}, raw ${r[c]}`);
      }
      checked += 1;
    }
    if (checked !== raw.size) throw new Error(`report has ${checked} affiliates, raw ${raw.size}`);
    console.log(`check: the month's report equals the raw GROUP BY for all ${checked} affiliates (10 figures each)`);

    const timings: Record<string, number[]> = { facts_month: [], facts_month_by_campaign: [], facts_one_affiliate_by_day: [], funnel_month_by_affiliate: [], raw_group_by: [] };
    for (let i = 0; i < REPEATS; i++) {
      timings.facts_month!.push((await time(() => affiliateReport(store!, filter, 'month')))[0]);
      timings.facts_month_by_campaign!.push((await time(() => affiliateReport(store!, filter, 'campaign')))[0]);
      timings.facts_one_affiliate_by_day!.push((await time(() => affiliateReport(store!, { ...filter, affiliate: 'aff-0007' }, 'day')))[0]);
      timings.funnel_month_by_affiliate!.push((await time(() => funnelReport(store!.knex, { partner: 'bench-prop', ...MONTH, by: 'affiliate' })))[0]);
    }
    for (let i = 0; i < Math.max(3, Math.min(REPEATS, 5)); i++) timings.raw_group_by!.push((await time(() => rawGroupBy(client)))[0]);
    const summary = Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, stats(v)]));
    console.log('answer times, ms (a month: 2026-10, partner bench):');
    for (const [k, v] of Object.entries(summary)) console.log(`  ${k.padEnd(28)} p50 ${String(v.p50).padStart(9)}  p95 ${String(v.p95).padStart(9)}  (n=${v.n})`);
    const facts = summary.facts_month!;
    const rawStats = summary.raw_group_by!;
    console.log(`  raw GROUP BY p50 / facts p50 = ${(rawStats.p50 / facts.p50).toFixed(1)}x; raw p50 / facts p95 = ${(rawStats.p50 / facts.p95).toFixed(1)}x`);

    await loadCost(store);
  } finally {
    await client.end().catch(() => undefined);
    await store?.close();
    if (!process.env.KEEP_BENCH_SCHEMA) await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    else console.log(`kept schema ${schema}`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
