/**
 * Column types as the drivers report them with every result (mysql2 field types, PostgreSQL type
 * OIDs, SQLite declared types), folded into the few kinds that decide how a value becomes part of
 * a partner record and whether a column can feed a spec field.
 */
import type { FieldRule } from '../../src/config/definition.js';
import type { SpecFieldKind } from '../../src/config/mapping-rules.js';

export type ColumnType =
  /** A zone-less local date-time, read in the source's zone (MySQL DATETIME, PostgreSQL timestamp). */
  | 'timestamp'
  /**
   * An instant: PostgreSQL timestamptz (written with its offset) and MySQL TIMESTAMP (stored in
   * UTC and written in the session's zone, which is UTC).
   */
  | 'timestamptz'
  | 'date'
  | 'integer'
  /** Exact decimal (DECIMAL, NUMERIC), read as text. */
  | 'decimal'
  | 'float'
  | 'string'
  | 'boolean'
  | 'json'
  | 'binary'
  /** SQLite expressions carry no declared type; their values decide. */
  | 'untyped'
  | 'other';

/** A column of a result: its name, its kind, and the database's own name for its type (for messages). */
export interface ResultColumn {
  name: string;
  type: ColumnType;
  typeName: string;
}

// mysql2 field types (mysql2/lib/constants/types.js).
const MYSQL_TYPES: Record<number, [ColumnType, string]> = {
  0x00: ['decimal', 'DECIMAL'],
  0x01: ['integer', 'TINYINT'],
  0x02: ['integer', 'SMALLINT'],
  0x03: ['integer', 'INT'],
  0x04: ['float', 'FLOAT'],
  0x05: ['float', 'DOUBLE'],
  0x07: ['timestamptz', 'TIMESTAMP'],
  0x08: ['integer', 'BIGINT'],
  0x09: ['integer', 'MEDIUMINT'],
  0x0a: ['date', 'DATE'],
  0x0b: ['string', 'TIME'],
  0x0c: ['timestamp', 'DATETIME'],
  0x0d: ['integer', 'YEAR'],
  0x0e: ['date', 'DATE'],
  0x0f: ['string', 'VARCHAR'],
  0x10: ['other', 'BIT'],
  0x11: ['timestamptz', 'TIMESTAMP'],
  0x12: ['timestamp', 'DATETIME'],
  0xf5: ['json', 'JSON'],
  0xf6: ['decimal', 'DECIMAL'],
  0xf7: ['string', 'ENUM'],
  0xf8: ['string', 'SET'],
  0xf9: ['string', 'TINYTEXT'],
  0xfa: ['string', 'MEDIUMTEXT'],
  0xfb: ['string', 'LONGTEXT'],
  0xfc: ['string', 'TEXT'],
  0xfd: ['string', 'VARCHAR'],
  0xfe: ['string', 'CHAR'],
  0xff: ['other', 'GEOMETRY'],
};
const MYSQL_BINARY_CHARSET = 63;
const MYSQL_TEXTUAL = new Set([0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe]);

export function mysqlColumn(field: { name: string; columnType?: number; type?: number; characterSet?: number }): ResultColumn {
  const code = field.columnType ?? field.type ?? -1;
  const [type, typeName] = MYSQL_TYPES[code] ?? ['other', `type ${code}`];
  if (MYSQL_TEXTUAL.has(code) && field.characterSet === MYSQL_BINARY_CHARSET) return { name: field.name, type: 'binary', typeName: 'BLOB' };
  return { name: field.name, type, typeName };
}

// PostgreSQL type OIDs (pg_type).
const PG_TYPES: Record<number, [ColumnType, string]> = {
  16: ['boolean', 'boolean'],
  17: ['binary', 'bytea'],
  18: ['string', 'char'],
  19: ['string', 'name'],
  20: ['integer', 'bigint'],
  21: ['integer', 'smallint'],
  23: ['integer', 'integer'],
  25: ['string', 'text'],
  26: ['integer', 'oid'],
  114: ['json', 'json'],
  700: ['float', 'real'],
  701: ['float', 'double precision'],
  790: ['string', 'money'],
  1042: ['string', 'character'],
  1043: ['string', 'character varying'],
  1082: ['date', 'date'],
  1083: ['string', 'time'],
  1114: ['timestamp', 'timestamp without time zone'],
  1184: ['timestamptz', 'timestamp with time zone'],
  1266: ['string', 'time with time zone'],
  1700: ['decimal', 'numeric'],
  2950: ['string', 'uuid'],
  3802: ['json', 'jsonb'],
};

/** The OIDs whose text pg would otherwise turn into millisecond Dates or binary floats: read as text. */
export const PG_TEXT_OIDS: ReadonlySet<number> = new Set([20, 1082, 1114, 1184, 1700]);

export function pgColumn(field: { name: string; dataTypeID: number }): ResultColumn {
  const [type, typeName] = PG_TYPES[field.dataTypeID] ?? ['other', `type oid ${field.dataTypeID}`];
  return { name: field.name, type, typeName };
}

/** SQLite: the declared type of a table column (affinity rules, plus DATE/TIME names); none for expressions. */
export function sqliteColumn(column: { name: string; type: string | null }): ResultColumn {
  const declared = column.type;
  if (declared === null || declared.trim() === '') return { name: column.name, type: 'untyped', typeName: 'no declared type' };
  const upper = declared.toUpperCase();
  const type: ColumnType =
    upper === 'DATE' ? 'date'
    : /DATETIME|TIMESTAMP/.test(upper) ? 'timestamp'
    : upper.includes('INT') ? 'integer'
    : /CHAR|CLOB|TEXT/.test(upper) ? 'string'
    : /REAL|FLOA|DOUB/.test(upper) ? 'float'
    : /DECIMAL|NUMERIC/.test(upper) ? 'decimal'
    : upper.includes('BOOL') ? 'boolean'
    : upper.includes('BLOB') ? 'binary'
    : 'other';
  return { name: column.name, type, typeName: declared };
}

/** `a DATE column`, `an INTEGER column`. */
const a = (column: ResultColumn): string => `${/^[aeiou]/i.test(column.typeName) ? 'an' : 'a'} ${column.typeName} column`;

const DATE_LIKE: ReadonlySet<ColumnType> = new Set(['timestamp', 'timestamptz', 'date']);
const NUMERIC: ReadonlySet<ColumnType> = new Set(['integer', 'decimal', 'float']);

/**
 * Why a column of this type cannot feed a spec field of this kind through this rule, or undefined
 * when it can. Loose where the rule converts (a `datetime` rule reads text and epoch numbers, a
 * `map` can turn anything into anything) and where the database cannot tell (SQLite expressions).
 */
export function incompatibility(column: ResultColumn, kind: SpecFieldKind, rule: FieldRule | undefined): string | undefined {
  const type = column.type;
  if (type === 'untyped' || type === 'other' || kind === 'other') return undefined;
  const ruleObject = typeof rule === 'object' && rule !== null ? rule : undefined;
  if (ruleObject?.map !== undefined) return undefined;
  if (ruleObject?.datetime !== undefined) {
    return DATE_LIKE.has(type) || type === 'string' || NUMERIC.has(type) ? undefined : `${a(column)} cannot hold a date-time`;
  }
  if (ruleObject?.number === true || ruleObject?.minor_units !== undefined || ruleObject?.multiply !== undefined) {
    return NUMERIC.has(type) || type === 'string' ? undefined : `${a(column)} cannot hold a number`;
  }
  switch (kind) {
    case 'date-time':
      if (type === 'timestamp' || type === 'timestamptz' || type === 'string') return undefined;
      return type === 'date' ? `${a(column)} has no time of day; the field needs a date-time` : `${a(column)} cannot hold a date-time`;
    case 'date':
      if (type === 'date' || type === 'string') return undefined;
      return DATE_LIKE.has(type)
        ? `${a(column)} gives a date-time; the field needs a date: add datetime: {} to the rule, or select a DATE`
        : `${a(column)} cannot hold a date`;
    case 'number':
      if (NUMERIC.has(type)) return undefined;
      return type === 'string' ? `${a(column)} gives text; the field needs a number: add number: true to the rule` : `${a(column)} cannot hold a number`;
    case 'integer':
      if (type === 'integer' || type === 'decimal') return undefined;
      return type === 'string' ? `${a(column)} gives text; the field needs an integer: add number: true to the rule` : `${a(column)} cannot hold an integer`;
    case 'string':
      // Integers become their exact decimal text in the mapping (ids kept in BIGINT or INT columns).
      if (type === 'string' || type === 'json' || type === 'integer') return undefined;
      return NUMERIC.has(type)
        ? `${a(column)} gives numbers with a fraction; the field needs text: select it cast to text in a query (CAST(col AS CHAR) on MySQL, col::text on PostgreSQL)`
        : `${a(column)} cannot hold text`;
  }
}
