/**
 * Web console benchmark: server time of every console page on a PostgreSQL store of N customers,
 * 2N transactions and 10N gaming-activity rows (N = 100,000 by default: 1,000,000 activity rows;
 * N = 1,000,000 for the 10,000,000-row figure), plus what a busy console sees beside them: a year
 * of runs, open and resolved rejects, a commission ledger (a CPA line for every fourth customer,
 * a revenue-share line per affiliate and month), open fraud flags, a console audit log, 0.1N
 * prop-trading customers for the funnel; and one affiliate (`aff-big`, signed in as the affiliate)
 * with BENCH_AFFILIATE_CUSTOMERS customers (default 100,000) over the last 60 days, two deposits
 * and a day of activity each, a CPA line for every second one, for the affiliate's own pages
 * (BENCH_AFFILIATE_ONLY=1: those pages alone).
 *
 *   node dist/bench/console.bench.js [customers=100000] [repeats=20]     (TEST_PG_URL overrides the server)
 *
 * Set-up writes the rows with COPY straight into the store's tables, then builds the report facts
 * once with `rebuildFacts` and the funnel rows with `seedPhaseHistory` (as bench/reports.bench.ts).
 * Each page is then requested `repeats` times with a signed-in session through app.inject; the
 * figures are the page's own Server-Timing (`app;dur=`, the handler's time in the server), p50
 * and p95, and the time around inject.
 */
import { join } from 'node:path';
import pg from 'pg';
import { buildApi } from '../src/cli/server.js';
import type { KdfParams } from '../src/access/secret-hash.js';
import { loadConfig } from '../src/cli/definitions.js';
import { addDays } from '../src/kernel/dates.js';
import { addUser } from '../src/access/console-users.js';
import { silentLogger } from '../src/log.js';
import { packageRoot } from '../src/paths.js';
import { Loader } from '../src/pipeline/load.js';
import { rebuildFacts } from '../src/reports/facts.js';
import { seedPhaseHistory008 as seedPhaseHistory } from '../src/store/migrations/008-phase-history-seed.js';
import { createSpecValidator } from '../src/spec/validator.js';
import { openStore, type Store } from '../src/store/store.js';
import { copyLines, dropBenchSchemas } from './support/pg-bench.js';

const N = Number(process.argv[2] ?? 100_000);
const REPEATS = Number(process.argv[3] ?? 20);
const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const AFFILIATES = 1000;
/** The affiliate of the affiliate's own pages, and its customers (BENCH_AFFILIATE_CUSTOMERS, default 100,000). */
const BIG_AFFILIATE = 'aff-big';
const BIG = Number(process.env.BENCH_AFFILIATE_CUSTOMERS ?? 100_000);
const DAYS = 365;
const GAMES = ['slots', 'live_casino', 'poker', 'sportsbook', 'table_games'];
const CASINO = 'sandbox-casino';
const PROP = 'sandbox-prop';
const KDF: KdfParams = { alg: 'scrypt', N: 1024, r: 8, p: 1, keylen: 32 };
const PASSWORD = 'benchmark-password';

const customerId = (i: number) => `c${String(i).padStart(8, '0')}`;
const affiliateOf = (i: number) => `aff-${String((i * 7) % AFFILIATES).padStart(4, '0')}`;
const cents = (n: number) => (n / 100).toFixed(2);
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;

async function build(client: pg.Client, now: string, today: string): Promise<void> {
  const first = addDays(today, -DAYS);
  const dayOf = (n: number) => addDays(first, ((n % DAYS) + DAYS) % DAYS);
  const started = performance.now();
  const lap = (what: string) => console.log(`  ${what}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await client.query(`INSERT INTO partners (partner_id, variant, created_at) VALUES ('${CASINO}', 'igaming', '${now}'), ('${PROP}', 'prop-trading', '${now}')`);
  await copyLines(client, 'COPY customers (partner_id, customer_id, signup_date, affiliate_id, country_code, email, loaded_at) FROM STDIN', function* () {
    for (let i = 0; i < N; i++) yield `${CASINO}\t${customerId(i)}\t${dayOf(i)}T${String(i % 24).padStart(2, '0')}:10:00Z\t${affiliateOf(i)}\tDE\tplayer${i}@example.com\t${now}\n`;
  });
  const phases = ['phase_1', 'phase_1', 'phase_2', 'funded', 'failed'];
  await copyLines(client, 'COPY customers (partner_id, customer_id, signup_date, affiliate_id, challenge_type, account_size, phase, last_modified_date, loaded_at) FROM STDIN', function* () {
    for (let i = 0; i < N / 10; i++) {
      yield `${PROP}\t${customerId(i)}\t${dayOf(i)}T08:00:00Z\t${affiliateOf(i)}\t${i % 2 ? 'standard' : 'rapid'}\t${[10000, 50000, 100000][i % 3]}\t${phases[i % 5]}\t${addDays(dayOf(i), 20 + (i % 30))}T08:00:00Z\t${now}\n`;
    }
  });
  lap('customers');
  const types = ['deposit', 'deposit', 'deposit', 'deposit', 'deposit', 'deposit', 'withdrawal', 'withdrawal', 'bonus', 'adjustment'];
  await copyLines(client, 'COPY transactions (partner_id, transaction_id, customer_id, transaction_type, amount_currency, currency, transaction_date, status, loaded_at) FROM STDIN', function* () {
    for (let i = 0; i < 2 * N; i++) {
      const status = i % 20 === 0 ? 'declined' : i % 31 === 0 ? 'reversed' : 'approved';
      yield `${CASINO}\tt${i}\t${customerId((i * 7919) % N)}\t${types[i % 10]}\t${cents(1000 + ((i * 37) % 50000))}\tUSD\t${dayOf(i * 13)}T${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00Z\t${status}\t${now}\n`;
    }
  });
  lap('transactions');
  await copyLines(client, 'COPY gaming_activity (partner_id, date, customer_id, game_type, currency, bets_count, total_bets, wins, ggr, ngr, loaded_at) FROM STDIN', function* () {
    for (let i = 0; i < N; i++) {
      for (let j = 0; j < 10; j++) {
        const bets = 500 + ((i * 31 + j * 17) % 100000);
        const wins = Math.round((bets * ((i + j) % 97)) / 100);
        yield `${CASINO}\t${dayOf(i * 7 + j * 37)}\t${customerId(i)}\t${GAMES[j % 5]}\tUSD\t${1 + (j % 9)}\t${cents(bets)}\t${cents(wins)}\t${cents(bets - wins)}\t${cents(Math.round((bets - wins) * 0.8))}\t${now}\n`;
      }
    }
  });
  lap(`${10 * N} activity rows`);
  // A year of runs: every stream of both partners every 4 minutes would be 790,000; one an hour each is enough to be big.
  const streams = ['customers', 'transactions', 'activity'];
  await copyLines(client, 'COPY runs (id, partner_id, stream, kind, status, started_at, finished_at, pulled, valid, rejected, loaded, waiting, released, retries, throttled, duration_ms, stale, error) FROM STDIN', function* () {
    let k = 0;
    for (let h = DAYS * 24; h > 0; h--) {
      const at = new Date(Date.parse(`${today}T00:00:00Z`) - h * 3600_000);
      for (const p of [CASINO, PROP]) {
        for (const s of streams) {
          k += 1;
          const failed = k % 97 === 0;
          yield `run-${k}\t${p}\t${s}\trun\t${failed ? 'failed' : 'succeeded'}\t${at.toISOString()}\t${new Date(at.getTime() + 2000).toISOString()}\t${k % 500}\t${k % 500}\t${k % 3}\t${k % 500}\t0\t0\t0\t0\t${1500 + (k % 900)}\t0\t${failed ? 'HTTP 503 from the partner' : '\\N'}\n`;
        }
      }
    }
  });
  lap('runs');
  const rules = [['country_code', 'enum'], ['email', 'format'], ['signup_date', 'date-time'], ['affiliate_id', 'required']];
  await copyLines(client, 'COPY rejects (partner_id, variant, entity, payload_hash, payload, errors, position, run_id, status, first_seen_at, last_seen_at, origin, record_key) FROM STDIN', function* () {
    for (let i = 0; i < N / 5; i++) {
      const [field, rule] = rules[i % rules.length]!;
      const payload = JSON.stringify({ customer_id: `bad-${i}`, email: `someone${i}@example.com`, country_code: 'XX', signup_date: '2026-13-01' }).replace(/\\/g, '\\\\');
      const errors = JSON.stringify([{ field, rule, message: `${field}: does not satisfy ${rule}` }]);
      yield `${CASINO}\tigaming\tcustomers\th${i}\t${payload}\t${errors}\t${i}\trun-${i}\t${i % 2 === 0 ? 'open' : 'resolved'}\t${now}\t${now}\tspec\tbad-${i}\n`;
    }
  });
  lap('rejects');
  // The ledger: a CPA line for every fourth customer in its signup month; a revenue share per affiliate and month.
  await copyLines(client, 'COPY commission_ledger (line_key, plan_id, plan_kind, partner_id, affiliate_id, customer_id, period, reason, amount_usd, total_usd, sources, basis, created_at) FROM STDIN', function* () {
    for (let i = 0; i < N; i += 4) {
      const day = dayOf(i);
      yield `cpa:${i}\tcasino-cpa-2026\tcpa\t${CASINO}\t${affiliateOf(i)}\t${customerId(i)}\t${day.slice(0, 7)}\tqualified\t${i % 40 === 0 ? '-150.00' : '150.00'}\t150.00\t["transactions:t${i}"]\t{}\t${now}\n`;
    }
    for (let m = 0; m < 12; m++) {
      const month = addDays(first, m * 31).slice(0, 7);
      for (let a = 0; a < AFFILIATES; a++) {
        const affiliate = `aff-${String(a).padStart(4, '0')}`;
        yield `rs:${affiliate}:${month}\tcasino-revshare-2026\trevshare\t${CASINO}\t${affiliate}\t\\N\t${month}\trevenue share\t${cents(10000 + a * 13)}\t${cents(10000 + a * 13)}\t["activity:${customerId(a)}@${month}-01"]\t{}\t${now}\n`;
      }
    }
  });
  lap('ledger');
  const flagRows = Math.max(100, N / 100);
  await copyLines(client, 'COPY fraud_flags (id, partner_id, variant, rule, instance_key, affiliate_id, severity, status, evidence, first_seen, last_seen) FROM STDIN', function* () {
    for (let i = 1; i <= flagRows; i++) {
      yield `${i}\t${CASINO}\tigaming\tduplicate_identity\tk${i}\t${affiliateOf(i)}\thigh\t${i % 3 === 0 ? 'dismissed' : 'open'}\t${JSON.stringify({ key: 'email', value: `x${i}@example.com` })}\t${now}\t${now}\n`;
    }
  });
  await client.query(`SELECT setval(pg_get_serial_sequence('fraud_flags', 'id'), ${flagRows})`);
  await copyLines(client, 'COPY fraud_flag_customers (flag_id, partner_id, customer_id) FROM STDIN', function* () {
    for (let i = 1; i <= flagRows; i++) for (const c of [i, i + 1]) yield `${i}\t${CASINO}\t${customerId(c)}\n`;
  });
  await copyLines(client, 'COPY console_audit (at, user_name, action, target, detail) FROM STDIN', function* () {
    for (let i = 0; i < 20_000; i++) yield `${new Date(Date.parse(now) - i * 60_000).toISOString()}\tolga\trun now\t${CASINO}\tcustomers succeeded: ${i} loaded\n`;
  });
  lap('flags and audit');
  // The affiliate's own view: one affiliate with BIG customers over the last 60 days, each with a
  // deposit (its FTD) and a second one, a CPA line for every second one, activity on its signup day.
  const big = (i: number) => `b${String(i).padStart(8, '0')}`;
  const bigDay = (i: number) => addDays(today, -(i % 60));
  await copyLines(client, 'COPY customers (partner_id, customer_id, signup_date, affiliate_id, country_code, campaign_id, click_id, email, loaded_at) FROM STDIN', function* () {
    for (let i = 0; i < BIG; i++) yield `${CASINO}\t${big(i)}\t${bigDay(i)}T${String(i % 24).padStart(2, '0')}:05:00Z\t${BIG_AFFILIATE}\t${['DE', 'GB', 'SE', 'CA'][i % 4]}\t${BIG_AFFILIATE}-c${i % 7}\tclk-${i}\tbig${i}@example.com\t${now}\n`;
  });
  await copyLines(client, 'COPY transactions (partner_id, transaction_id, customer_id, transaction_type, amount_currency, currency, amount_usd, transaction_date, status, loaded_at) FROM STDIN', function* () {
    for (let i = 0; i < BIG; i++) {
      for (const k of [0, 1]) yield `${CASINO}\tbt${i}-${k}\t${big(i)}\tdeposit\t${cents(2000 + ((i * 37) % 20000))}\tUSD\t${cents(2000 + ((i * 37) % 20000))}\t${bigDay(i)}T${String(i % 24).padStart(2, '0')}:${k ? 40 : 20}:00Z\tapproved\t${now}\n`;
    }
  });
  await copyLines(client, 'COPY gaming_activity (partner_id, date, customer_id, game_type, currency, bets_count, total_bets, wins, ggr, ngr, loaded_at) FROM STDIN', function* () {
    for (let i = 0; i < BIG; i++) yield `${CASINO}\t${bigDay(i)}\t${big(i)}\tslots\tUSD\t3\t100.00\t80.00\t20.00\t16.00\t${now}\n`;
  });
  await copyLines(client, 'COPY commission_ledger (line_key, plan_id, plan_kind, partner_id, affiliate_id, customer_id, period, reason, amount_usd, total_usd, sources, basis, created_at) FROM STDIN', function* () {
    for (let i = 0; i < BIG; i += 2) yield `cpa:big:${i}\tcasino-cpa-2026\tcpa\t${CASINO}\t${BIG_AFFILIATE}\t${big(i)}\t${bigDay(i).slice(0, 7)}\tcpa_ftd\t100.00\t100.00\t["transactions:bt${i}-0"]\t{}\t${bigDay(i)}T23:00:00Z\n`;
  });
  lap(`the affiliate's ${BIG} customers`);
  await client.query('ANALYZE');
}

async function main(): Promise<void> {
  const schema = `bench_console_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const created: { schema: string; store?: Store }[] = [{ schema }];
  const client = new pg.Client({ connectionString: url });
  try {
    const store = await openStore({ url });
    created[0]!.store = store;
    await client.connect();
    await client.query("SET TIME ZONE 'UTC'");
    const today = store.clock().toISOString().slice(0, 10);
    console.log(`console benchmark: ${N} customers (+${N / 10} prop-trading), ${2 * N} transactions, ${10 * N} gaming activity rows; PostgreSQL ${(await client.query('SHOW server_version')).rows[0].server_version}`);
    await build(client, store.now(), today);
    const t0 = performance.now();
    await rebuildFacts(store, CASINO, 'igaming');
    await rebuildFacts(store, PROP, 'prop-trading');
    await seedPhaseHistory(store.knex, store.clock);
    await client.query('ANALYZE');
    console.log(`  report facts and funnel rows: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const sizes = (await client.query("SELECT relname, reltuples::bigint AS n FROM pg_class WHERE relkind = 'r' AND relnamespace = current_schema()::regnamespace AND relname IN ('gaming_activity', 'transactions', 'customers', 'runs', 'rejects', 'commission_ledger', 'fraud_flags', 'report_cells', 'report_month_cells') ORDER BY n DESC")).rows as { relname: string; n: string }[];
    console.log(`  rows (planner estimates after ANALYZE): ${sizes.map((r) => `${r.relname} ${Number(r.n).toLocaleString('en')}`).join(', ')}`);
    process.env.SANDBOX_CLIENT_SECRET ??= 'sandbox-secret';
    const configDir = join(packageRoot(), 'config');
    const config = await loadConfig({ config: configDir, store: url });
    const app = await buildApi({ store, loader: new Loader({ store, validator: createSpecValidator() }), logger: silentLogger(), config: { dir: configDir, definitions: config.definitions, redact: config.redact } }, { env: { PARTNER_SYNC_JWT_SECRET: 'x'.repeat(40) } });
    await addUser(store, 'olga', 'operator', PASSWORD, KDF);
    await addUser(store, 'max', 'manager', PASSWORD, KDF);
    const cookieOf = async (name: string) => {
      const res = await app.inject({ method: 'POST', url: '/console/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `name=${name}&password=${PASSWORD}` });
      if (res.statusCode !== 303) throw new Error(`sign-in of ${name}: ${res.statusCode}`);
      return String(res.headers['set-cookie']).split(';')[0]!;
    };
    await addUser(store, 'ana', 'affiliate', PASSWORD, KDF, [BIG_AFFILIATE]);
    const manager = await cookieOf('max');
    const affiliate = await cookieOf('ana');
    const operator = await cookieOf('olga');
    const pages: [string, string, string][] = [
      ['Partners', '/console/partners', operator],
      ['Runs', '/console/runs', operator],
      ['Runs, one partner', `/console/runs?partner=${CASINO}&status=failed`, operator],
      ['Rejects', '/console/rejects', operator],
      ['Commissions', '/console/commissions', manager],
      ['Commissions, drill-down', `/console/commissions/lines?affiliate=aff-0007&month=${addDays(today, -40).slice(0, 7)}&partner=${CASINO}&plan=casino-cpa-2026`, manager],
      ['Source record', `/console/records/transactions?partner=${CASINO}&id=t4`, manager],
      ['Reports', '/console/reports', manager],
      ['Reports, by day', '/console/reports?by=day', manager],
      ['Funnel', `/console/reports?partner=${PROP}`, manager],
      ['Fraud queue', '/console/fraud', manager],
      ['Fraud flag', '/console/fraud/7', manager],
      ['Onboarding', '/console/onboarding', operator],
      ['Activity', '/console/activity', operator],
      [`Affiliate: dashboard`, '/console/affiliate', affiliate],
      ['Affiliate: players', '/console/affiliate/players', affiliate],
      ['Affiliate: players, deep', `/console/affiliate/players?after=${encodeURIComponent(`${CASINO}|b${String(Math.floor(BIG * 0.9)).padStart(8, '0')}`)}`, affiliate],
      ['Affiliate: players, month', `/console/affiliate/players?month=${today.slice(0, 7)}&country=GB`, affiliate],
      ['Affiliate: statement', '/console/affiliate/statements', affiliate],
      ['Affiliate: postbacks', '/console/affiliate/postbacks', affiliate],
    ];
    if (process.env.BENCH_AFFILIATE_ONLY) pages.splice(0, pages.length - 6);
    console.log(`server time per page, ms, ${REPEATS} requests each (Server-Timing app;dur / around inject):`);
    console.log(`  ${'page'.padEnd(26)} ${'p50'.padStart(7)} ${'p95'.padStart(7)}   ${'inject p50'.padStart(10)} ${'p95'.padStart(7)}  bytes`);
    for (const [name, path, cookie] of REPEATS > 0 ? pages : []) {
      const server: number[] = [];
      const around: number[] = [];
      let bytes = 0;
      for (let i = 0; i < REPEATS; i++) {
        const began = performance.now();
        const res = await app.inject({ method: 'GET', url: path, headers: { cookie } });
        around.push(performance.now() - began);
        if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body.slice(0, 300)}`);
        server.push(Number(/dur=([\d.]+)/.exec(String(res.headers['server-timing']))?.[1]));
        bytes = res.body.length;
      }
      const s = [...server].sort((a, b) => a - b);
      const w = [...around].sort((a, b) => a - b);
      console.log(`  ${name.padEnd(26)} ${pct(s, 50).toFixed(1).padStart(7)} ${pct(s, 95).toFixed(1).padStart(7)}   ${pct(w, 50).toFixed(1).padStart(10)} ${pct(w, 95).toFixed(1).padStart(7)}  ${bytes}`);
    }
    await app.close();
  } finally {
    await client.end().catch(() => undefined);
    await dropBenchSchemas(PG_URL, created);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
