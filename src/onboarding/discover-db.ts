/**
 * Discovery of a partner database replica or warehouse: its tables and views, their columns with
 * the types rows carry, their primary and foreign keys, the columns whose sampled values all lie
 * in a customers table's key, their indexes and which of them can serve as a keyset (a unique
 * column and a date-time column), row counts, and the value profile of a sample (values converted as the
 * source converts them for the mapping: BIGINT and DECIMAL as numbers or exact text, date-times
 * as UTC ISO 8601).
 */
import { openSqlConnection } from '../../connectors/sql/connection.js';
import { quoteIdentifier } from '../../connectors/sql/identifiers.js';
import { rowConverter } from '../../connectors/sql/rows.js';
import type { SqlSession } from '../../connectors/sql/session.js';
import { createRedactor } from '../config/redact.js';
import type { Logger } from '../log.js';
import type { IndexSeen, KeysetCandidate, ReferenceSeen, SourceClock, TableDiscovery } from './discovery.js';
import { compareValues, profileRecords } from './profile.js';
import { secretFromEnv, type SqlOptions } from './source-options.js';
import { CHANGE, tableNamePattern } from './vocabulary.js';

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

const PRIMARY_KEY: Record<SqlOptions['client'], string> = {
  mysql: `SELECT column_name AS col FROM information_schema.key_column_usage
           WHERE table_schema = COALESCE(:schema, DATABASE()) AND table_name = :table AND constraint_name = 'PRIMARY'
           ORDER BY ordinal_position`,
  postgres: `SELECT a.attname AS col
               FROM pg_constraint c
               JOIN pg_class t ON t.oid = c.conrelid
               JOIN pg_namespace ns ON ns.oid = t.relnamespace
               CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
               JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
              WHERE c.contype = 'p' AND ns.nspname = COALESCE(:schema, current_schema()) AND t.relname = :table
              ORDER BY k.n`,
  sqlite: 'SELECT name AS col FROM pragma_table_info(:table) WHERE pk > 0 ORDER BY pk',
};

// Single-column foreign keys: the column, the table and column it refers to.
const FOREIGN_KEYS: Record<SqlOptions['client'], string> = {
  mysql: `SELECT column_name AS col, referenced_table_name AS ref_table, referenced_column_name AS ref_col
            FROM information_schema.key_column_usage
           WHERE table_schema = COALESCE(:schema, DATABASE()) AND table_name = :table AND referenced_table_name IS NOT NULL`,
  postgres: `SELECT a.attname AS col, rt.relname AS ref_table, ra.attname AS ref_col
               FROM pg_constraint c
               JOIN pg_class t ON t.oid = c.conrelid
               JOIN pg_namespace ns ON ns.oid = t.relnamespace
               JOIN pg_class rt ON rt.oid = c.confrelid
               JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
               JOIN pg_attribute ra ON ra.attrelid = c.confrelid AND ra.attnum = c.confkey[1]
              WHERE c.contype = 'f' AND cardinality(c.conkey) = 1 AND ns.nspname = COALESCE(:schema, current_schema()) AND t.relname = :table`,
  sqlite: 'SELECT "from" AS col, "table" AS ref_table, "to" AS ref_col FROM pragma_foreign_key_list(:table)',
};

/** Column kinds a key can have: values compared for containment only between the same kind. */
const KEY_KINDS = new Set(['integer', 'string', 'untyped']);
/** At most this many containment probes per discovery (a wide schema is probed on its likeliest pairs only). */
const MAX_PROBES = 200;

/** The source's clock in UTC (and, on MySQL/MariaDB, its server's zone setting). */
const CLOCK: Record<SqlOptions['client'], string> = {
  mysql: "SELECT DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%dT%H:%i:%sZ') AS utc, @@global.time_zone AS tz, @@system_time_zone AS sys",
  postgres: "SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS utc",
  sqlite: "SELECT strftime('%Y-%m-%dT%H:%M:%SZ', 'now') AS utc",
};

async function readClock(session: SqlSession, client: SqlOptions['client']): Promise<SourceClock | undefined> {
  try {
    const row = (await session.query(CLOCK[client], {}, 'reading the source clock')).rows[0];
    if (row === undefined) return undefined;
    const tz = row.tz ?? row.TZ;
    const sys = row.sys ?? row.SYS;
    const zone = tz === 'SYSTEM' ? sys : tz;
    return { utc: String(row.utc ?? row.UTC), ...(zone !== undefined && zone !== null ? { server_zone: String(zone) } : {}) };
  } catch {
    return undefined;
  }
}

export async function discoverDb(options: SqlOptions, run: DbDiscoverOptions): Promise<{ tables: TableDiscovery[]; clock?: SourceClock }> {
  const url = secretFromEnv(options.urlEnv, run.env);
  const redact = createRedactor([url]);
  const db = openSqlConnection({ client: options.client, url, timezone: 'UTC', statementTimeoutMs: 60_000, redact, logger: run.logger, stats: { requests: 0, retries: 0, throttled: 0, waitedMs: 0 } });
  const session = await db.acquire('discover');
  try {
    const schema = options.schema ?? null;
    const { rows } = await session.query(LIST[options.client], { schema }, 'listing tables');
    const out: TableDiscovery[] = [];
    const samples = new Map<string, Record<string, unknown>[]>();
    for (const row of rows) {
      const name = String(row.name ?? row.NAME);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) continue;
      const { table, records } = await discoverTable(session, options, name, String(row.kind ?? row.KIND ?? ''), run.sample);
      out.push(table);
      samples.set(name, records);
    }
    await measureContainment(session, options, out, samples);
    const clock = await readClock(session, options.client);
    return { tables: out, ...(clock ? { clock } : {}) };
  } finally {
    await session.release();
    await db.close();
  }
}

const qualify = (session: SqlSession, options: SqlOptions, name: string): string =>
  (options.schema !== undefined && options.client !== 'sqlite' ? `${quoteIdentifier(options.schema, session.dialect)}.` : '') + quoteIdentifier(name, session.dialect);

const text = (row: Record<string, unknown>, key: string): string => String(row[key] ?? row[key.toUpperCase()]);

async function discoverTable(session: SqlSession, options: SqlOptions, name: string, kind: string, sample: number): Promise<{ table: TableDiscovery; records: Record<string, unknown>[] }> {
  const qualified = qualify(session, options, name);
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
    keyset.push({ cursor_column: first, tiebreak_column: tiebreak, index: index.name, change_column: CHANGE.test(first), exact: second === tiebreak });
  }
  keyset.sort((a, b) => Number(b.exact) - Number(a.exact) || Number(b.change_column) - Number(a.change_column));
  const bind = { schema: options.schema ?? null, table: name };
  const primaryKey = (await session.query(PRIMARY_KEY[options.client], bind, `primary key of ${name}`)).rows.map((r) => text(r, 'col'));
  const references: ReferenceSeen[] = (await session.query(FOREIGN_KEYS[options.client], bind, `foreign keys of ${name}`)).rows.map((r) => ({ column: text(r, 'col'), table: text(r, 'ref_table'), key: text(r, 'ref_col'), how: 'declared' }));
  const table: TableDiscovery = {
    name,
    kind: /view/i.test(kind) ? 'view' : 'table',
    rows: rowCount,
    sampled: records.length,
    columns,
    primary_key: primaryKey,
    references,
    indexes,
    keyset,
    date_columns: read.columns.filter((c) => c.type === 'date').map((c) => c.name),
    fields: profileRecords(records, types),
  };
  await fullValueSets(session, qualified, table, records.length);
  await newestZoneless(session, qualified, table, read.columns);
  return { table, records };
}

/**
 * The table's zone-less date-time columns (a MySQL DATETIME, a PostgreSQL timestamp without time
 * zone; a MySQL TIMESTAMP is stored in UTC, a timestamptz carries its offset) and, for those an
 * index starts with or named like a change column, the newest value read as if UTC.
 */
async function newestZoneless(session: SqlSession, qualified: string, table: TableDiscovery, columns: readonly { name: string; type: string; typeName: string }[]): Promise<void> {
  const zoneless = columns.filter((c) => c.type === 'timestamp' && !/^TIMESTAMP$/i.test(c.typeName));
  if (zoneless.length === 0) return;
  const leading = new Set(table.indexes.map((i) => i.columns[0]));
  table.zoneless = [];
  for (const c of zoneless) {
    if (!leading.has(c.name) && !CHANGE.test(c.name)) {
      table.zoneless.push({ column: c.name });
      continue;
    }
    const read = await session.query(`SELECT MAX(${quoteIdentifier(c.name, session.dialect)}) AS newest FROM ${qualified}`, {}, `the newest ${table.name}.${c.name}`);
    const row = rowConverter(read.columns, 'UTC')(read.rows[0] ?? {});
    const newest = row.newest ?? row.NEWEST;
    table.zoneless.push({ column: c.name, ...(typeof newest === 'string' ? { newest } : {}) });
  }
}

/** A code list longer than this is not a code list: the draft maps none of it. */
export const CODE_LIST_LIMIT = 50;
const CODE_KINDS = new Set(['integer', 'string', 'untyped', 'boolean']);

/**
 * The full set of values of every column whose sample holds few (codes: statuses, types, KYC
 * states), by SELECT DISTINCT over the whole table, so that a code map is built from every value
 * the partner has, not from the first rows (whose transactions may all be deposits). A column
 * with more than CODE_LIST_LIMIT values keeps no list. When the table is no larger than the sample,
 * the sample is the table.
 */
async function fullValueSets(session: SqlSession, qualified: string, table: TableDiscovery, sampled: number): Promise<void> {
  const kinds = new Map(table.columns.map((c) => [c.name, c.kind]));
  for (const field of table.fields) {
    if (field.distinct === undefined || !CODE_KINDS.has(kinds.get(field.name) ?? '')) continue;
    if (table.rows <= sampled) {
      field.distinct_from = 'table';
      continue;
    }
    const column = quoteIdentifier(field.name, session.dialect);
    const read = await session.query(`SELECT DISTINCT ${column} AS v FROM ${qualified} WHERE ${column} IS NOT NULL LIMIT ${CODE_LIST_LIMIT + 1}`, {}, `values of ${table.name}.${field.name}`);
    const convert = rowConverter(read.columns, 'UTC');
    const values = read.rows.map((r) => {
      const row = convert(r);
      const v = row.v ?? row.V;
      return typeof v === 'bigint' ? v.toString() : v;
    });
    field.distinct_count = values.length;
    if (values.length > CODE_LIST_LIMIT) {
      delete field.distinct;
      continue;
    }
    field.distinct = values.sort(compareValues);
    field.distinct_from = 'table';
  }
}

/**
 * The keys other tables may refer to: of a table named like customers, its single-column primary
 * key, its single-column unique indexes, and columns unique in its sample (a view has no
 * constraints); of the others too when no table is named so.
 */
function keysOf(tables: readonly TableDiscovery[], named: string | undefined): { table: TableDiscovery; key: string }[] {
  const customers = tables.filter((t) => (named !== undefined ? t.name === named : tableNamePattern('customers', 'igaming').test(t.name)));
  const out: { table: TableDiscovery; key: string }[] = [];
  for (const table of customers.length > 0 ? customers : tables) {
    const keys = new Set<string>();
    if (table.primary_key.length === 1) keys.add(table.primary_key[0] as string);
    for (const index of table.indexes) if (index.unique && index.columns.length === 1) keys.add(index.columns[0] as string);
    for (const f of table.fields) if (f.unique) keys.add(f.name);
    for (const key of keys) out.push({ table, key });
  }
  return out;
}

/**
 * Value containment measured on the sample: a column whose sampled values are all values of a
 * key (by SQL on the whole key, not on the key's sample) is recorded as a reference. Columns of
 * another kind than the key, the table's own primary key, and declared references are not probed.
 */
async function measureContainment(session: SqlSession, options: SqlOptions, tables: TableDiscovery[], samples: ReadonlyMap<string, Record<string, unknown>[]>): Promise<void> {
  let probes = 0;
  const keys = keysOf(tables, options.tables.customers);
  for (const t of tables) {
    const kinds = new Map(t.columns.map((c) => [c.name, c.kind]));
    for (const column of t.columns) {
      if (!KEY_KINDS.has(column.kind) || (t.primary_key.length === 1 && t.primary_key[0] === column.name) || t.references.some((r) => r.column === column.name)) continue;
      const values = [...new Set((samples.get(t.name) ?? []).map((r) => r[column.name]).filter((v) => v !== null && v !== undefined).map(String))];
      if (values.length === 0) continue;
      for (const { table, key } of keys) {
        if (table === t || kinds.get(column.name) !== table.columns.find((c) => c.name === key)?.kind || probes >= MAX_PROBES) continue;
        probes += 1;
        const names = values.map((_, i) => `:v${i}`).join(', ');
        const bindings = Object.fromEntries(values.map((v, i) => [`v${i}`, v]));
        const found = await session.query(`SELECT COUNT(DISTINCT ${quoteIdentifier(key, session.dialect)}) AS n FROM ${qualify(session, options, table.name)} WHERE ${quoteIdentifier(key, session.dialect)} IN (${names})`, bindings, `values of ${t.name}.${column.name} in ${table.name}.${key}`);
        if (Number(found.rows[0]?.n ?? found.rows[0]?.N ?? 0) === values.length) t.references.push({ column: column.name, table: table.name, key, how: 'contained', values: values.length, found: values.length });
      }
    }
  }
}
