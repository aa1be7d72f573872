/**
 * Table, view and column names from connector definitions. They are the only text of a
 * definition that becomes SQL (values are always bound), so each is checked against a strict
 * pattern before any statement is built, then quoted for its dialect. Anything else (a quote, a
 * space, a semicolon, a comment) is refused with the definition field that holds it.
 *
 * Quoting makes names case-sensitive on PostgreSQL: write them as stored (lower case for tables
 * created without quotes).
 */
import { SourceError } from '../source.js';
import type { SqlDialect } from './dialects.js';

const PART = '[A-Za-z_][A-Za-z0-9_]*';
const PLAIN = new RegExp(`^${PART}$`);
// Qualified at most once: schema.table, alias.column.
const QUALIFIED = new RegExp(`^${PART}(?:\\.${PART})?$`);

export interface Identifier {
  /** The name as written in the definition. */
  text: string;
  /** `[schema, name]` / `[alias, column]`, or `[name]`. */
  parts: readonly string[];
  /** Ready to splice into SQL for this dialect, qualified as written. */
  sql: string;
  /** The last part: a column's key in result rows (`a.updated_at` → `updated_at`). */
  name: string;
  /** The last part, quoted. */
  nameSql: string;
}

function refuse(field: string, value: unknown, why: string): never {
  const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
  throw new SourceError(`${field}: ${shown} ${why}; allowed: letters, digits and _, not starting with a digit, qualified at most once (schema.table, alias.column)`);
}

function identifier(value: unknown, field: string, dialect: SqlDialect): Identifier {
  if (typeof value !== 'string' || value === '') refuse(field, value, 'is not a name');
  if (!QUALIFIED.test(value)) refuse(field, value, 'is not a plain SQL identifier');
  const parts = value.split('.');
  if (parts.some((part) => part.length > dialect.maxIdentifierLength)) refuse(field, value, `is longer than ${dialect.maxIdentifierLength} characters, the most ${dialect.client} accepts`);
  const name = parts.at(-1) as string;
  return { text: value, parts, sql: parts.map((part) => quoteIdentifier(part, dialect)).join('.'), name, nameSql: quoteIdentifier(name, dialect) };
}

/** Quotes one already validated name part. */
export function quoteIdentifier(part: string, dialect: SqlDialect): string {
  if (!PLAIN.test(part)) throw new SourceError(`not a plain SQL identifier: ${JSON.stringify(part)}`);
  return `${dialect.quote}${part}${dialect.quote}`;
}

/** A table or view, optionally `schema.name`; `field` is where the definition holds it (`streams.customers.table`). */
export function relationIdentifier(value: unknown, field: string, dialect: SqlDialect): Identifier {
  return identifier(value, field, dialect);
}

/** A column, optionally `alias.column` (in a query); rows carry it under its last part. */
export function columnIdentifier(value: unknown, field: string, dialect: SqlDialect): Identifier {
  return identifier(value, field, dialect);
}
