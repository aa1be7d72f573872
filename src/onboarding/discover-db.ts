/**
 * Discovery of a partner database replica or warehouse: its tables and views, their columns with
 * the types rows carry, their indexes and which of them can serve as a keyset (a unique column
 * and a date-time column), row counts, and the value profile of a sample (values converted as the
 * source converts them for the mapping: BIGINT and DECIMAL as numbers or exact text, date-times
 * as UTC ISO 8601).
 */
import { openSqlConnection } from '../../connectors/sql/connection.js';
import { quoteIdentifier } from '../../connectors/sql/identifiers.js';
import { rowConverter } from '../../connectors/sql/rows.js';
import type { SqlSession } from '../../connectors/sql/session.js';
import { createRedactor } from '../config/redact.js';
import type { Logger } from '../log.js';
import type { IndexSeen, KeysetCandidate, TableDiscovery } from './discover.js';
import { profileRecords } from './profile.js';
import { secretFromEnv, type SqlOptions } from './source-options.js';

export interface DbDiscoverOptions {
  sample: number;
  logger: Logger;
  env: NodeJS.ProcessEnv;
}

const LIST: Record<SqlOptions['client'], string> = {
  mysql: 'SELECT table_name AS name, table_type AS kind FROM information_schema.tables WHERE table_schema = COALESCE(:schema, DATABASE()) ORDER BY table_name',
  postgres: 'SELECT table_name AS name, table_type AS kind FROM information_schema.tables WHERE table_schema = COALESCE(:schema, current_schema()) ORDER BY table_name',
  sqlite: "SELECT name, type AS kind FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name",
};

const INDEXES: Record<SqlOptions['client'], string> = {
  mysql: `SELECT index_name AS name, non_unique AS non_unique, column_name AS col, seq_in_index AS seq
            FROM information_schema.statistics
           WHERE table_schema = COALESCE(:schema, DATABASE()) AND table_name = :table
           ORDER BY index_name, seq_in_index`,
  postgres: `SELECT i.relname AS name, CASE WHEN ix.indisunique THEN 0 ELSE 1 END AS non_unique, a.attname AS col, k.n AS seq
               FROM pg_index ix
               JOIN pg_class t ON t.oid = ix.indrelid
               JOIN pg_class i ON i.oid = ix.indexrelid
               JOIN pg_namespace ns ON ns.oid = t.relnamespace
               CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, n)
               JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
              WHERE ns.nspname = COALESCE(:schema, current_schema()) AND t.relname = :table
              ORDER BY i.relname, k.n`,
  sqlite: `SELECT il.name AS name, CASE WHEN il."unique" = 1 THEN 0 ELSE 1 END AS non_unique, ii.name AS col, ii.seqno AS seq
             FROM pragma_index_list(:table) il JOIN pragma_index_info(il.name) ii
            UNION ALL
           SELECT 'PRIMARY', 0, name, pk FROM pragma_table_info(:table) WHERE pk > 0
            ORDER BY 1, 4`,
};

const CHANGE_NAME = /(updated|modified|changed|last_?update|lastupdate|updatedat|modifiedat)/i;

export async function discoverDb(options: SqlOptions, run: DbDiscoverOptions): Promise<TableDiscovery[]> {
  const url = secretFromEnv(options.urlEnv, run.env);
  const redact = createRedactor([url]);
  const db = openSqlConnection({ client: options.client, url, timezone: 'UTC', statementTimeoutMs: 60_000, redact, logger: run.logger, stats: { requests: 0, retries: 0, throttled: 0, waitedMs: 0 } });
  const session = await db.acquire('discover');
  try {
    const schema = options.schema ?? null;
    const { rows } = await session.query(LIST[options.client], { schema }, 'listing tables');
    const out: TableDiscovery[] = [];
    for (const row of rows) {
      const name = String(row.name ?? row.NAME);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) continue;
      out.push(await discoverTable(session, options, name, String(row.kind ?? row.KIND ?? ''), run.sample));
    }
    return out;
  } finally {
    await session.release();
    await db.close();
  }
}

async function discoverTable(session: SqlSession, options: SqlOptions, name: string, kind: string, sample: number): Promise<TableDiscovery> {
  const dialect = session.dialect;
  const qualified = (options.schema !== undefined && options.client !== 'sqlite' ? `${quoteIdentifier(options.schema, dialect)}.` : '') + quoteIdentifier(name, dialect);
  const count = await session.query(`SELECT COUNT(*) AS n FROM ${qualified}`, {}, `counting ${name}`);
  const rowCount = Number(count.rows[0]?.n ?? 0);
  const read = await session.query(`SELECT * FROM ${qualified} LIMIT ${Math.max(1, Math.floor(sample))}`, {}, `sampling ${name}`);
  const convert = rowConverter(read.columns, 'UTC');
  const records = read.rows.map((r) => convert(r));
  const types = new Map(read.columns.map((c) => [c.name, c.typeName]));
  const columns = read.columns.map((c) => ({ name: c.name, type: c.typeName, kind: c.type }));

  const indexRows = (await session.query(INDEXES[options.client], { schema: options.schema ?? null, table: name }, `indexes of ${name}`)).rows;
  const byName = new Map<string, IndexSeen>();
  for (const r of indexRows) {
    const index = String(r.name ?? r.NAME);
    const seen = byName.get(index) ?? { name: index, unique: Number(r.non_unique ?? r.NON_UNIQUE) === 0, columns: [] };
    seen.columns.push(String(r.col ?? r.COL));
    byName.set(index, seen);
  }
  const indexes = [...byName.values()];
  const kindOf = new Map(read.columns.map((c) => [c.name, c.type]));
  const isTime = (column: string) => ['timestamp', 'timestamptz'].includes(kindOf.get(column) ?? '');
  const uniques = indexes.filter((i) => i.unique && i.columns.length === 1).map((i) => i.columns[0] as string);
  const keyset: KeysetCandidate[] = [];
  for (const index of indexes) {
    const [first, second] = index.columns;
    if (first === undefined || !isTime(first)) continue;
    const tiebreak = second !== undefined && uniques.includes(second) ? second : uniques[0];
    if (tiebreak === undefined) continue;
    keyset.push({ cursor_column: first, tiebreak_column: tiebreak, index: index.name, change_column: CHANGE_NAME.test(first), exact: second === tiebreak });
  }
  keyset.sort((a, b) => Number(b.exact) - Number(a.exact) || Number(b.change_column) - Number(a.change_column));
  return {
    name,
    kind: /view/i.test(kind) ? 'view' : 'table',
    rows: rowCount,
    sampled: records.length,
    columns,
    indexes,
    keyset,
    date_columns: read.columns.filter((c) => c.type === 'date').map((c) => c.name),
    fields: profileRecords(records, types),
  };
}
