/**
 * PostgreSQL: inserts rows given as one JSON parameter (`types`: each column's SQL type; `tail`:
 * an ON CONFLICT clause). Knex's insert builder is not used for a batch's rows: compiling
 * thousands of placeholders costs more than the statement.
 */
import type { Knex } from 'knex';

export async function insertJson(trx: Knex.Transaction, table: string, types: Record<string, string>, rows: readonly Record<string, unknown>[], tail = ''): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(types);
  await trx.raw(`INSERT INTO ${table} (${columns.join(', ')}) SELECT ${columns.join(', ')} FROM json_to_recordset(?::json) AS r(${columns.map((c) => `${c} ${types[c] as string}`).join(', ')})${tail}`,
    [JSON.stringify(rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c] ?? null]))))]);
}
