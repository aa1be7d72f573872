/**
 * Planner statistics during bulk loads. A table that grows by a large share between two ANALYZEs
 * keeps the row estimates of its smaller self until autovacuum catches up, and the planner then
 * picks plans for the small table: a day's keyed probe became a bitmap scan of the whole day
 * (bench/README.md, Replica load), which made a replica backfill's cost per row grow with the size
 * of its days. Bulk runs call this between groups (Loader.settle).
 */
import type { Store } from './store.js';

/** Rows changed since the last ANALYZE, at least, before a table counts as stale. */
const MIN_CHANGED = 10_000;
/** ...and this share of its estimated rows (autovacuum's default analyze scale factor is 0.1). */
const SHARE = 0.2;
/** The statistics target of these ANALYZEs (a column's own target, when set, wins). */
const BULK_STATISTICS_TARGET = 30;

/**
 * ANALYZEs the store's tables (leaf partitions included) that changed by more than MIN_CHANGED
 * rows and SHARE of their size since their last ANALYZE; returns their names. PostgreSQL only:
 * SQLite's planner does not lean on row estimates this way.
 */
export async function refreshStaleStatistics(store: Store): Promise<string[]> {
  if (!store.dialect.plannerStatistics) return [];
  const result = (await store.knex.raw(`SELECT s.relid::regclass::text AS name FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
    WHERE s.schemaname = current_schema() AND s.n_mod_since_analyze > GREATEST(?::bigint, ?::float8 * GREATEST(c.reltuples, 0)) ORDER BY 1`, [MIN_CHANGED, SHARE])) as { rows: { name: string }[] };
  const names = result.rows.map((r) => r.name);
  // The names come from the catalog, quoted by regclass. Two at a time, on two connections: one
  // after the other, a month's import's six tables kept every other job waiting.
  // Sampled at a lower target than the server's default (100): what the run's plans lean on is a
  // table's size and its values' ranges (a histogram that ends before the rows just loaded makes
  // their ranges look empty), which a smaller sample gives as well, in less of the settle's time
  // (bench/README.md, the whole pipeline).
  // Autovacuum's next analyze samples at the default.
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < names.length) {
      const name = names[next++]!;
      await store.knex.transaction(async (trx) => {
        await trx.raw(`SET LOCAL default_statistics_target = ${BULK_STATISTICS_TARGET}`);
        await trx.raw(`ANALYZE ${name}`);
      });
    }
  };
  await Promise.all([lane(), lane()]);
  return names;
}
