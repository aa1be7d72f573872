/**
 * What `check` asks of a database stream before reading a sample: the table or view exists, and
 * every column the stream reads exists with a type that can feed its spec field. The columns are
 * those of a zero-row read (`LIMIT 0`), so their types are exactly the ones rows will carry, for a
 * table, a view or a stream's own query alike.
 *
 * A stream reads: the first segment of each mapping rule's source path (`from`, a rename, or the
 * field's own name), the spec fields that pass through unmapped (required ones must exist), and
 * its cursor, tie-breaker or day columns.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FieldRule, StreamBase } from '../../src/config/definition.js';
import { specFields, type SpecFieldKind } from '../../src/config/mapping-rules.js';
import { defaultSchemaDir } from '../../src/spec/validator.js';
import type { Variant } from '../../src/types.js';
import { incompatibility, type ResultColumn } from './column-types.js';
import { quoteIdentifier, type Identifier } from './identifiers.js';
import type { Bindings, SqlSession } from './session.js';

export interface ColumnNeed {
  /** The column of the source row. */
  column: string;
  /** Where the definition asks for it, for messages (`mapping.fields.amount`, `cursor_column`). */
  origin: string;
  /** A missing column is a problem (an optional passthrough field is only type-checked when present). */
  required: boolean;
  /** Why this column's type does not fit, or undefined. */
  check?: (column: ResultColumn) => string | undefined;
}

const requiredCache = new Map<string, ReadonlySet<string>>();

/** The required fields of a spec schema. */
function requiredFields(variant: Variant, entity: StreamBase['entity']): ReadonlySet<string> {
  const file = join(defaultSchemaDir(), variant, `${entity}.schema.json`);
  let required = requiredCache.get(file);
  if (required === undefined) {
    const schema = JSON.parse(readFileSync(file, 'utf8')) as { required?: unknown };
    required = new Set(Array.isArray(schema.required) ? schema.required.filter((f): f is string => typeof f === 'string') : []);
    requiredCache.set(file, required);
  }
  return required;
}

function specCheck(kind: SpecFieldKind | undefined, rule: FieldRule | undefined, field: string): ColumnNeed['check'] {
  if (kind === undefined) return undefined;
  return (column) => {
    const why = incompatibility(column, kind, rule);
    return why === undefined ? undefined : `${why} (${field} is a spec ${kind} field)`;
  };
}

/**
 * The columns a stream's mapping reads. Without the variant, only that mapped columns exist is
 * checked (no spec kinds, no required passthrough fields).
 */
export function mappingNeeds(stream: StreamBase, variant: Variant | undefined): ColumnNeed[] {
  const spec = variant === undefined ? undefined : specFields(variant, stream.entity);
  const needs: ColumnNeed[] = [];
  for (const [field, rule] of Object.entries(stream.mapping.fields)) {
    if (typeof rule === 'object' && rule !== null && Object.hasOwn(rule, 'const')) continue;
    const path = typeof rule === 'string' ? rule : (rule.from ?? field);
    const [column = path, ...nested] = path.split('.');
    const hasDefault = typeof rule === 'object' && rule !== null && Object.hasOwn(rule, 'default');
    needs.push({
      column,
      origin: `mapping.fields.${field}`,
      required: !hasDefault,
      // A nested path reads into a JSON column: its leaf's type is not the column's.
      check: nested.length > 0 ? undefined : specCheck(spec?.get(field), rule, field),
    });
  }
  if (stream.mapping.passthrough && spec !== undefined && variant !== undefined) {
    const required = requiredFields(variant, stream.entity);
    for (const [field, kind] of spec) {
      if (Object.hasOwn(stream.mapping.fields, field)) continue;
      needs.push({ column: field, origin: `spec field ${field} (passthrough)`, required: required.has(field), check: specCheck(kind, undefined, field) });
    }
  }
  return needs;
}

/** Whether a table or view exists and is visible to this user. */
export async function relationExists(session: SqlSession, relation: Identifier, what: string): Promise<boolean> {
  const [schema, name] = relation.parts.length === 2 ? relation.parts : [null, relation.parts[0]];
  const { rows } = await session.query(session.dialect.relationExistsSql, { schema, name: name ?? '', qualified: relation.sql }, what);
  return rows.length > 0;
}

/** The columns of a statement's result, from a read of no rows. */
export async function resultColumns(session: SqlSession, sql: string, bindings: Bindings, what: string): Promise<ResultColumn[]> {
  const { columns } = await session.query(`SELECT * FROM (${sql}) ps_probe LIMIT 0`, bindings, what);
  return columns;
}

/** Problems of a result's columns against what the stream needs; `where` names the table, view or query. */
export function columnProblems(columns: readonly ResultColumn[], needs: readonly ColumnNeed[], where: string): string[] {
  const byName = new Map(columns.map((c) => [c.name, c]));
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const need of needs) {
    const key = `${need.column}\u0000${need.origin}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const column = byName.get(need.column);
    if (column === undefined) {
      if (!need.required) continue;
      const other = columns.find((c) => c.name.toLowerCase() === need.column.toLowerCase());
      const hint = other === undefined ? `; its columns: ${columns.map((c) => c.name).join(', ') || '(none)'}` : `; did you mean ${other.name}? (names are case-sensitive in records)`;
      problems.push(`${where}: column ${need.column} (${need.origin}) does not exist${hint}`);
      continue;
    }
    const why = need.check?.(column);
    if (why !== undefined) problems.push(`${where}: column ${need.column} (${need.origin}) has type ${column.typeName}: ${why}`);
  }
  return problems;
}

/** At most this many values of a column are read to hold against its map. */
const MAP_VALUES_READ = 1000;

/**
 * The values of a table or view that a code `map` does not list (and the rule has no `default`):
 * one SELECT DISTINCT per mapped column over the whole relation, so a code used only in older
 * rows (a refund, a reset) fails `check` before a backfill rejects it. Values are compared as the
 * mapper compares them: as text, before any `case` rule.
 */
export async function codeMapProblems(session: SqlSession, stream: StreamBase, relation: Identifier, where: string, what: string): Promise<string[]> {
  const problems: string[] = [];
  for (const [field, rule] of Object.entries(stream.mapping.fields)) {
    if (typeof rule !== 'object' || rule === null || rule.map === undefined || Object.hasOwn(rule, 'default')) continue;
    const path = rule.from ?? field;
    if (path.includes('.')) continue;
    const column = quoteIdentifier(path, session.dialect);
    const { rows } = await session.query(`SELECT DISTINCT ${column} AS v FROM ${relation.sql} WHERE ${column} IS NOT NULL LIMIT ${MAP_VALUES_READ + 1}`, {}, what);
    const map = rule.map;
    const outside = rows.map((r) => r.v ?? r.V).map((v) => (v instanceof Date ? v.toISOString() : Buffer.isBuffer(v) ? v.toString('utf8') : String(v))).filter((v) => !Object.hasOwn(map, v));
    if (outside.length === 0) continue;
    const shown = outside.slice(0, 10).map((v) => JSON.stringify(v)).join(', ');
    problems.push(`${where}: mapping.fields.${field}.map: ${path} holds ${outside.length > MAP_VALUES_READ ? `more than ${MAP_VALUES_READ}` : outside.length} value(s) the map does not list (every value of the ${what.includes('view') ? 'view' : 'table'} read by SELECT DISTINCT): ${shown}${outside.length > 10 ? ', ...' : ''}; records holding them would be rejected: add them to the map, or give the rule a default`);
  }
  return problems;
}
