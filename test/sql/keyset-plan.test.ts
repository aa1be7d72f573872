/**
 * The keyset page statement the db source runs, EXPLAINed with ANALYZE on a 200,000-row table with
 * an index on (updated_at, id): how many rows one page reads. The figures are printed beside the
 * assertions (they are what connectors/sql/dialects.ts cites).
 */
import assert from 'node:assert/strict';
import { keysetStatement, keysetWindow, tableKeyset, type KeysetPosition } from '../../connectors/db/keyset.js';
import { openSqlConnection, type SqlConnection } from '../../connectors/sql/connection.js';
import { SQL_DIALECTS, type KeysetForm, type SqlDialect } from '../../connectors/sql/dialects.js';
import { columnIdentifier, relationIdentifier } from '../../connectors/sql/identifiers.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import { SERVER_DATABASES, useDatabase, type TestDatabase } from './databases.js';

const ROWS = 200_000;
const PAGE = 1000;
/** What one page may read: its rows, the row past it (keyset.ts reads one more to see ties), and the 3 rows of one cursor value. */
const PAGE_READ = PAGE + 1 + 3;

/** Every object in a JSON plan. */
function* nodes(value: unknown): Generator<Record<string, unknown>> {
  if (Array.isArray(value)) for (const item of value) yield* nodes(item);
  else if (typeof value === 'object' && value !== null) {
    yield value as Record<string, unknown>;
    for (const child of Object.values(value)) yield* nodes(child);
  }
}

/** Rows the scan of table t read for one page (MariaDB r_rows; PostgreSQL actual rows + rows removed by its filter). */
async function rowsRead(connection: SqlConnection, db: TestDatabase, form: KeysetForm, after: KeysetPosition, guard = true): Promise<{ read: number; plan: string }> {
  const dialect: SqlDialect = { ...connection.dialect, keyset: form };
  const source = tableKeyset(relationIdentifier('t', 'table', dialect), columnIdentifier('updated_at', 'cursor_column', dialect), columnIdentifier('id', 'tiebreak_column', dialect));
  const window = keysetWindow('2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z', 'UTC', 'plan');
  const statement = keysetStatement(source, dialect, window, PAGE, 'UTC', after);
  const bindings = statement.bindings;
  // The plain expanded form, without the `c >= :cursor` that starts the range at the cursor.
  let sql = statement.sql;
  if (!guard) sql = sql.replace(/"updated_at" >= :cursor AND |`updated_at` >= :cursor AND /, '');
  const session = await connection.acquire('explain');
  try {
    if (db.client === 'mysql') {
      const { rows } = await session.query(`ANALYZE FORMAT=JSON ${sql}`, bindings, 'explain');
      const plan = JSON.parse(String(rows[0]?.ANALYZE)) as unknown;
      const table = [...nodes(plan)].find((n) => n.table_name === 't');
      return { read: Number(table?.r_rows), plan: `key ${String(table?.key)} (${String(table?.used_key_parts)}), r_rows ${String(table?.r_rows)}` };
    }
    const { rows } = await session.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, bindings, 'explain');
    const plan = rows[0]?.['QUERY PLAN'];
    const scan = [...nodes(plan)].find((n) => n['Relation Name'] === 't');
    const read = Number(scan?.['Actual Rows']) + Number(scan?.['Rows Removed by Filter'] ?? 0);
    return { read, plan: `${String(scan?.['Node Type'])} ${String(scan?.['Index Name'])}, actual rows ${String(scan?.['Actual Rows'])}, removed by filter ${String(scan?.['Rows Removed by Filter'] ?? 0)}` };
  } finally {
    await session.release();
  }
}

for (const backend of SERVER_DATABASES) {
  describe(`db source, keyset page plan: ${backend.client}`, function () {
    this.timeout(120_000);
    const db = useDatabase(backend);

    it(`a keyset page reads one page's worth of rows (${ROWS} rows, index on (updated_at, id), 3 rows per cursor value)`, async () => {
      const { sql } = db();
      await db().exec(`CREATE TABLE t (id ${sql.bigint} NOT NULL PRIMARY KEY, updated_at ${sql.datetime6} NOT NULL, payload ${sql.text})`);
      const third = backend.client === 'mysql' ? 'seq DIV 3' : 'seq / 3';
      await db().exec(`INSERT INTO t SELECT seq, ${sql.plusSeconds('2024-01-01 00:00:00', third)}, 'x' FROM ${sql.series(ROWS)}`);
      await db().exec('CREATE INDEX t_keyset ON t (updated_at, id)');
      await db().exec(backend.client === 'mysql' ? 'ANALYZE TABLE t' : 'ANALYZE t');
      const stats = { requests: 0, retries: 0, throttled: 0, waitedMs: 0 };
      const connection = openSqlConnection({ client: backend.client, url: db().url, timezone: 'UTC', statementTimeoutMs: 60_000, redact: noRedaction, logger: silentLogger(), stats });
      try {
        // The position after half the table, as a previous page would leave it: raw driver values.
        const session = await connection.acquire('position');
        let after: KeysetPosition;
        try {
          const { rows } = await session.query(`SELECT updated_at, id FROM t ORDER BY updated_at, id LIMIT 1 OFFSET ${ROWS / 2}`, {}, 'position');
          after = { cursor: rows[0]?.updated_at, id: rows[0]?.id };
        } finally {
          await session.release();
        }
        const used = await rowsRead(connection, db(), SQL_DIALECTS[backend.client].keyset, after);
        console.log(`      ${backend.client} ${SQL_DIALECTS[backend.client].keyset} form (the source's): ${used.plan}`);
        assert.ok(used.read <= PAGE_READ, `one page reads ${used.read} rows`);

        if (backend.client === 'mysql') {
          // The contrast: MariaDB does not turn the row-value form into an index range on (c, id).
          const rowValue = await rowsRead(connection, db(), 'row-value', after);
          console.log(`      mysql row-value form: ${rowValue.plan}`);
          assert.ok(rowValue.read > 50 * PAGE, `the row-value form reads ${rowValue.read} rows`);
        } else {
          const expanded = await rowsRead(connection, db(), 'expanded', after);
          const unguarded = await rowsRead(connection, db(), 'expanded', after, false);
          console.log(`      postgres expanded form with c >= :cursor: ${expanded.plan}`);
          console.log(`      postgres expanded form without it: ${unguarded.plan}`);
          assert.ok(expanded.read <= PAGE_READ, `expanded with the guard reads ${expanded.read}`);
          assert.ok(unguarded.read > 50 * PAGE, `expanded without the guard reads ${unguarded.read}`);
        }
      } finally {
        await connection.close();
      }
    });
  });
}
