/**
 * Personal data on PostgreSQL (docs/personal-data.md): the time to erase one customer from a store
 * of N customers (its row, rejects, fraud keys and flags, postback events, the VACUUM after), and
 * the rate of `purge` removing a month of delivered postback events, beside a bare `DELETE` of the
 * same rows in one statement (the floor) measured in the same run.
 *
 *   node dist/bench/privacy.bench.js [customers] [events]      (default 20000 and 300000)
 */
import { eraseCustomers } from '../src/privacy/erase.js';
import { DEFAULT_RETENTION, purge } from '../src/privacy/retention.js';
import { dropBenchSchemas, openBenchStore } from './support/pg-bench.js';

const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CUSTOMERS = Number(process.argv[2] ?? 20000);
const EVENTS = Number(process.argv[3] ?? 300000);

async function main(): Promise<void> {
  const created: { schema: string }[] = [];
  try {
    const { store } = await openBenchStore(PG_URL, `bench_privacy_${process.pid}`, created);
    const knex = store.knex;
    await knex.raw(`INSERT INTO customers (partner_id, customer_id, affiliate_id, signup_date, email, first_name, last_name, country_code, run_id, loaded_at)
      SELECT 'p', 'c' || g, 'aff-' || (g % 50), now(), 'person' || g || '@example.org', 'First' || g, 'Last' || g, 'GB', 'r', now() FROM generate_series(1, ?) g`, [CUSTOMERS]);
    await knex.raw(`INSERT INTO fraud_identities (partner_id, customer_id, kind, value) SELECT 'p', 'c' || g, 'email', 'p*****' || g || '@example.org#' || md5(g::text) FROM generate_series(1, ?) g`, [CUSTOMERS]);
    await knex('postbacks').insert({ id: 'pb', affiliate_id: 'aff-1', events: 'ftd', method: 'GET', url: 'https://t.example/p', rate_per_second: 10, secret_salt: 's', created_at: '2026-01-01T00:00:00Z' });
    const events = async (n: number) => knex.raw(`INSERT INTO postback_events (event_id, postback_id, fact_key, kind, order_key, partner_id, customer_id, affiliate_id, data, state, next_attempt_at, window_start, created_at, delivered_at)
      SELECT 'e' || g || '-' || ?::text, 'pb', 'f' || g || '-' || ?::text, 'ftd', 'o' || g, 'p', 'c' || (g % ?), 'aff-1', json_build_object('url', 'https://t.example/p/c/' || g), 'delivered', '2026-01-01', '2026-01-01', '2026-01-01', timestamptz '2026-01-01' + (g % 31) * interval '1 day'
      FROM generate_series(1, ?) g`, [n, n, CUSTOMERS, n]);
    await events(EVENTS);
    await knex.raw('ANALYZE');

    const erase = [];
    for (const id of ['c17', 'c4242', `c${CUSTOMERS - 3}`]) {
      const started = performance.now();
      await eraseCustomers(store, { partner: 'p', customers: [id], by: 'bench', via: 'cli' });
      erase.push(performance.now() - started);
    }
    console.log(`store: ${CUSTOMERS} customers, ${EVENTS} delivered postback events of January 2026`);
    console.log(`erase one customer (with VACUUM of the tables touched): ${erase.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', ')}`);

    const started = performance.now();
    const result = await purge(store, DEFAULT_RETENTION, { budgetMs: 3_600_000, batch: 1000 });
    const purged = result.results.find((r) => r.kind === 'delivered_postback_events')!.purged;
    const ms = performance.now() - started;
    await knex('postback_events').delete();
    await events(EVENTS);
    const floorStarted = performance.now();
    await knex.raw("DELETE FROM postback_events WHERE state = 'delivered' AND delivered_at < ?", [result.results[0]!.before]);
    const floor = performance.now() - floorStarted;
    console.log(`purge (transactions of 1000): ${purged} events in ${(ms / 1000).toFixed(2)} s, ${Math.round(purged / ms * 1000)} rows/s; one DELETE of the same rows: ${(floor / 1000).toFixed(2)} s, ${Math.round(purged / floor * 1000)} rows/s; purge ${(floor / ms).toFixed(2)}x the floor`);
  } finally {
    await dropBenchSchemas(PG_URL, created);
  }
}

await main();
