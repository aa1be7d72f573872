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

/**
 * PostgreSQL: inserts rows given column by column, one array parameter per column (`columns`:
 * name → [SQL type, values], all of one length), with `constants` (name → [SQL type, value]) the
 * same in every row; `tail`: an ON CONFLICT clause. For rows of a few plain columns, cheaper to
 * send and parse than insertJson's JSON.
 */
export async function insertArrays(trx: Knex.Transaction, table: string, constants: Record<string, [string, unknown]>,
  columns: Record<string, [string, readonly unknown[]]>, tail = ''): Promise<void> {
  const arrays = Object.entries(columns);
  if ((arrays[0]?.[1][1].length ?? 0) === 0) return;
  const fixed = Object.entries(constants);
  await trx.raw(`INSERT INTO ${table} (${[...arrays, ...fixed].map(([c]) => c).join(', ')})
    SELECT u.*${fixed.map(([, [type]]) => `, ?::${type}`).join('')} FROM unnest(${arrays.map(([, [type]]) => `?::${type}[]`).join(', ')}) AS u${tail}`,
  [...fixed.map(([, [, value]]) => value), ...arrays.map(([, [, values]]) => arrayLiteral(values))] as Knex.RawBinding[]);
}

const QUOTED = /[\\"]/;

/**
 * An array parameter as PostgreSQL's array text (`{"a","b",NULL}`), for a `?::type[]` cast, when
 * every element is a string, a finite number, a boolean or null: the driver's own rendering escapes
 * every element with two regular expressions, a share of a month's settle (bench/README.md, the
 * whole pipeline). Other arrays (dates,
 * objects) are passed as they are, for the driver to render.
 *
 * Most arrays (keys, dates, counts) have no element to escape: their JSON text, brackets made
 * braces, is the array text (`null` reads as NULL), and JSON.stringify writes it faster than
 * quoting element by element. JSON text with a backslash (a quote, a backslash or a
 * control character escaped, which the array syntax escapes otherwise) is quoted element by element.
 */
export function arrayLiteral(values: readonly unknown[]): readonly unknown[] | string {
  let first: string | undefined;
  for (let i = 0; i < values.length; i += 1) {
    const v = values[i];
    const type = typeof v;
    if (type === 'string') first ??= v as string;
    else if (!(v === null || v === undefined || type === 'boolean' || (type === 'number' && Number.isFinite(v)))) return values;
  }
  // An array whose first text has a quote (JSON texts for a jsonb[] column) has more: no JSON text tried.
  const json = first !== undefined && QUOTED.test(first) ? undefined : JSON.stringify(values);
  if (json !== undefined && !json.includes('\\')) return `{${json.slice(1, -1)}}`;
  const parts: string[] = new Array<string>(values.length);
  for (let i = 0; i < values.length; i += 1) {
    const v = values[i];
    if (v === null || v === undefined) parts[i] = 'NULL';
    else if (typeof v === 'string') parts[i] = QUOTED.test(v) ? `"${v.replace(/[\\"]/g, '\\$&')}"` : `"${v}"`;
    else parts[i] = String(v);
  }
  return `{${parts.join(',')}}`;
}

/** insertArrays for rows given as objects, like insertJson (`types`: each column's SQL type; a missing key is NULL). */
export function insertRowArrays(trx: Knex.Transaction, table: string, types: Record<string, string>, rows: readonly Record<string, unknown>[], tail = ''): Promise<void> {
  return insertArrays(trx, table, {}, Object.fromEntries(Object.entries(types).map(([column, type]) => [column, [type, rows.map((r) => r[column] ?? null)]])), tail);
}
