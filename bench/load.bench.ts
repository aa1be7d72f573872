/**
 * Load benchmark: N gaming-activity rows (default 200,000) through the full load path
 * (validate, convert, COPY into staging, upsert, checkpoint) into the PostgreSQL store, beside a
 * raw COPY of the same rows into an identical table measured in the same run. Also the rerun
 * over a full store (nothing changed: no row written) and a rerun where every row is an update.
 * BENCH_ENTITY=transactions loads deposits instead, each with its source change time beside it
 * (a versioned table: the rerun where every row is an update carries a newer version).
 *
 *   node dist/bench/load.bench.js [rows] [batch]      (TEST_PG_URL overrides the server)
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Loader } from '../src/pipeline/load.js';
import { createSpecValidator } from '../src/spec/validator.js';
import { recordToRow } from '../src/store/rows.js';
import { openStore } from '../src/store/store.js';
import { entityTable } from '../src/store/tables.js';
import type { RawRecord, SpecRecord } from '../src/types.js';

const ROWS = Number(process.argv[2] ?? 200_000);
const BATCH = Number(process.argv[3] ?? 5_000);
const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const GAMES = ['slots', 'live_casino', 'table_games', 'sportsbook', 'poker'];
const ENTITY = process.env.BENCH_ENTITY === 'transactions' ? 'transactions' : 'activity';

function activity(i: number, bump = 0): SpecRecord {
  const customer = `c${Math.floor(i / 50)}`;
  const day = 1 + ((i % 50) % 28);
  const totalBets = Math.round((((i * 7919) % 100_000) / 100 + bump) * 100) / 100;
  const wins = Math.round(totalBets * 0.93 * 100) / 100;
  return {
    date: `2026-${String(1 + ((i % 50) >= 28 ? 1 : 0)).padStart(2, '0')}-${String(day).padStart(2, '0')}`,
    customer_id: customer,
    game_type: GAMES[i % GAMES.length],
    currency: 'EUR',
    bets_count: (i % 300) + 1,
    total_bets: totalBets,
    wins,
    ggr: Math.round((totalBets - wins) * 100) / 100,
    ngr: Math.round((totalBets - wins) * 90) / 100,
  };
}

function deposit(i: number, bump = 0): SpecRecord {
  return {
    transaction_id: `t${i}`,
    customer_id: `c${Math.floor(i / 50)}`,
    transaction_type: 'deposit',
    amount_currency: Math.round((((i * 7919) % 100_000) / 100 + bump) * 100) / 100,
    currency: 'EUR',
    transaction_date: `2026-01-${String(1 + (i % 28)).padStart(2, '0')}T12:00:00Z`,
    status: bump > 0 ? 'reversed' : 'approved',
  };
}

/** A record as handed to the loader; a transaction with its change time as a cursor stream would hand it over. */
const rawRecord = (i: number, bump: number, value = ENTITY === 'activity' ? activity(i, bump) : deposit(i, bump)): RawRecord =>
  ENTITY === 'activity' ? { position: i + 1, value } : { position: i + 1, value, version: `2026-02-0${1 + bump}T00:00:00Z` };

const rate = (rows: number, ms: number) => Math.round(rows / (ms / 1000));
const peakRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);

async function main(): Promise<void> {
  const schema = `bench_load_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const store = await openStore({ url });
  try {
    const loader = new Loader({ store, validator: createSpecValidator() });
    const customers = Math.ceil(ROWS / 50);
    for (let start = 0; start < customers; start += 1000) {
      const records = Array.from({ length: Math.min(1000, customers - start) }, (_, k) => ({
        position: k + 1,
        value: { customer_id: `c${start + k}`, signup_date: '2025-12-01T00:00:00Z', affiliate_id: 'a1' },
      }));
      await loader.load({ partner: 'bench', variant: 'igaming', entity: 'customers', runId: 'bench', records });
    }
    const records: SpecRecord[] = Array.from({ length: ROWS }, (_, i) => rawRecord(i, 0).value as SpecRecord);

    // Baseline: raw COPY of the same rows (already rendered) into an identical table.
    const table = entityTable('igaming', ENTITY);
    const now = store.now();
    const text = records.map((r) => recordToRow(table, 'bench', r, 'bench', now).map((v) => (v === null ? '\\N' : String(v))).join('\t')).join('\n') + '\n';
    await admin.query(`CREATE TABLE ${schema}.baseline (LIKE ${schema}.${table.name} INCLUDING ALL)`);
    let t0 = performance.now();
    await pipeline(Readable.from([text]), admin.query(copyFrom(`COPY ${schema}.baseline FROM STDIN`)));
    const copyMs = performance.now() - t0;

    const runLoad = async (bump: number): Promise<number> => {
      const start = performance.now();
      for (let offset = 0; offset < ROWS; offset += BATCH) {
        const batch: RawRecord[] = [];
        for (let i = offset; i < Math.min(ROWS, offset + BATCH); i++) batch.push(bump === 0 ? rawRecord(i, 0, records[i]) : rawRecord(i, bump));
        await loader.load({ partner: 'bench', variant: 'igaming', entity: ENTITY, runId: 'bench', records: batch,
          checkpoint: { stream: ENTITY, state: { offset } } });
      }
      return performance.now() - start;
    };
    t0 = performance.now();
    const firstMs = await runLoad(0);
    const unchangedMs = await runLoad(0);
    const updateMs = await runLoad(1);
    const loaded = await admin.query(`SELECT count(*)::int AS n FROM ${schema}.${table.name}`);
    if (loaded.rows[0].n !== ROWS) throw new Error(`expected ${ROWS} rows in the store, found ${loaded.rows[0].n}`);

    const copyRate = rate(ROWS, copyMs);
    const line = (name: string, ms: number) => {
      const r = rate(ROWS, ms);
      return `${name.padEnd(44)} ${String(r).padStart(9)} rows/s   ${(r / copyRate).toFixed(2)} x COPY   ${(ms / 1000).toFixed(2)} s`;
    };
    console.log(`load benchmark: ${ROWS} ${ENTITY === 'activity' ? 'gaming activity' : 'transaction'} rows, batches of ${BATCH}, PostgreSQL store`);
    console.log(line('baseline: raw COPY into an identical table', copyMs));
    console.log(line('load path, empty store (all inserts)', firstMs));
    console.log(line('load path, rerun, nothing changed', unchangedMs));
    console.log(line('load path, rerun, every row an update', updateMs));
    console.log(`peak RSS ${peakRssMb()} MB (includes the ${ROWS} generated records held in memory)`);
  } finally {
    await store.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

await main();
