/**
 * The value profile of a sample of partner records: per field (dot paths into nested objects)
 * the JSON types seen, how often it is absent or null, the format its values share (ISO
 * date-times with or without an offset, `dd/MM/yyyy HH:mm`, epoch seconds or milliseconds,
 * decimal strings, amounts that look like minor units), and its distinct values when few.
 */

/** Formats a value can be recognised in. */
export type ValueFormat =
  | 'iso-datetime-offset'
  | 'iso-datetime-local'
  | 'sql-datetime'
  | 'date'
  | 'dd/MM/yyyy HH:mm'
  | 'epoch-millis'
  | 'epoch-seconds'
  | 'integer'
  | 'decimal'
  | 'integer-string'
  | 'decimal-string'
  | 'boolean'
  | 'text';

export interface FieldProfile {
  /** Dot path in the record (a column name for a database). */
  name: string;
  /** JSON types seen (`integer` for whole numbers), or the column's type for a database column. */
  types: string[];
  /** Records where the field is present and not null. */
  present: number;
  nulls: number;
  /** Records without the field. */
  absent: number;
  /** The format every non-null value has, `mixed` when they differ, undefined when there is no value. */
  format?: ValueFormat | 'mixed';
  /** Whether the values look like an amount in minor units (cents), and why. */
  minor_units?: { guess: true; reason: string };
  /** Distinct values (as JSON values) when there are at most DISTINCT_LIMIT of them over at least two records. */
  distinct?: unknown[];
  /**
   * Where `distinct` comes from: `table` when a database's SELECT DISTINCT over the whole table
   * gave it (the full set of values); `history` when a REST list was read whole, or sampled over
   * its history until the set stopped growing (discover-history.ts); else a sample that cannot be
   * shown complete (`sample`, or undefined: the records read).
   */
  distinct_from?: 'table' | 'history' | 'sample';
  /** `history` and `sample` of a REST list: where the values were read, and for `sample` why they may not be all. */
  distinct_note?: string;
  /** How many distinct non-null values the sample holds. */
  distinct_count: number;
  /** Every record holds a value and no two are equal (over at least two records): a key candidate. */
  unique: boolean;
  /** A few example values. */
  examples: unknown[];
  /** The smallest and greatest value for dates, times and numbers, as text. */
  min?: string;
  max?: string;
}

export const DISTINCT_LIMIT = 10;

const ISO_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})$/;
const ISO_LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;
const SQL_DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DMY_HM = /^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}$/;
const INTEGER_TEXT = /^-?\d+$/;
const DECIMAL_TEXT = /^-?\d+\.\d+$/;
// Epoch times between 2001-09-09 and 2286: 10 digits of seconds, 13 of milliseconds.
const EPOCH_SECONDS = [1e9, 1e10] as const;
const EPOCH_MILLIS = [1e12, 1e13] as const;

export const MINOR_NAME = /(_cents|_minor|cents|minor|_pence|incents|x100)$/i;
const AMOUNT_NAME = /(amount|bet|win|ggr|ngr|pnl|profit|balance|deposit|withdraw|fee|stake|payout|total)/i;

/** The format of one non-null value. */
export function valueFormat(value: unknown): ValueFormat {
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number' || typeof value === 'bigint') {
    const n = Number(value);
    if (!Number.isInteger(n)) return 'decimal';
    const abs = Math.abs(n);
    if (abs >= EPOCH_MILLIS[0] && abs < EPOCH_MILLIS[1]) return 'epoch-millis';
    if (abs >= EPOCH_SECONDS[0] && abs < EPOCH_SECONDS[1]) return 'epoch-seconds';
    return 'integer';
  }
  if (typeof value !== 'string') return 'text';
  if (ISO_OFFSET.test(value)) return 'iso-datetime-offset';
  if (ISO_LOCAL.test(value)) return 'iso-datetime-local';
  if (SQL_DATETIME.test(value)) return 'sql-datetime';
  if (DATE.test(value)) return 'date';
  if (DMY_HM.test(value)) return 'dd/MM/yyyy HH:mm';
  if (INTEGER_TEXT.test(value)) return 'integer-string';
  if (DECIMAL_TEXT.test(value)) return 'decimal-string';
  return 'text';
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'bigint') return 'integer';
  return typeof value;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Leaf fields of a record as dot paths (nested objects flattened; arrays are leaves). */
export function leaves(record: Record<string, unknown>, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  for (const [key, value] of Object.entries(record)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (isObject(value) && Object.keys(value).length > 0) leaves(value, path, out);
    else out.set(path, value);
  }
  return out;
}

// Formats that may be mixed within one field and still name one (an integer field with a few small values).
const WIDER: Partial<Record<ValueFormat, ValueFormat>> = { integer: 'decimal', 'epoch-seconds': 'integer', 'epoch-millis': 'integer', 'integer-string': 'decimal-string' };

function commonFormat(formats: Set<ValueFormat>): ValueFormat | 'mixed' | undefined {
  if (formats.size === 0) return undefined;
  if (formats.size === 1) return [...formats][0];
  // Whole and fractional numbers: decimal; whole and fractional numeric text: decimal-string.
  const widened = new Set([...formats].map((f) => (f === 'epoch-millis' || f === 'epoch-seconds' ? 'integer' : f)));
  if (widened.size === 1) return [...widened][0];
  if ([...widened].every((f) => f === 'integer' || f === 'decimal')) return 'decimal';
  if ([...widened].every((f) => f === 'integer-string' || f === 'decimal-string')) return 'decimal-string';
  void WIDER;
  return 'mixed';
}

/**
 * The profile of every field of `records`; `columnTypes` gives a database column's declared type
 * (shown instead of JSON types, beside them).
 */
export function profileRecords(records: readonly unknown[], columnTypes?: ReadonlyMap<string, string>): FieldProfile[] {
  const fields = new Map<string, { types: Set<string>; present: number; nulls: number; formats: Set<ValueFormat>; values: Map<string, unknown>; all: Set<string>; examples: unknown[]; min?: string; max?: string; allWhole: boolean; numeric: boolean }>();
  const rows = records.filter(isObject);
  const flat = rows.map((r) => leaves(r));
  for (const name of columnTypes?.keys() ?? []) if (!fields.has(name)) fields.set(name, { types: new Set(), present: 0, nulls: 0, formats: new Set(), values: new Map(), all: new Set(), examples: [], allWhole: true, numeric: true });
  for (const record of flat) {
    for (const [name, value] of record) {
      let f = fields.get(name);
      if (f === undefined) {
        f = { types: new Set(), present: 0, nulls: 0, formats: new Set(), values: new Map(), all: new Set(), examples: [], allWhole: true, numeric: true };
        fields.set(name, f);
      }
      f.types.add(jsonType(value));
      if (value === null || value === undefined) {
        f.nulls += 1;
        continue;
      }
      f.present += 1;
      const format = valueFormat(value);
      f.formats.add(format);
      const key = JSON.stringify(typeof value === 'bigint' ? value.toString() : value) ?? String(value);
      f.all.add(key);
      if (f.values.size <= DISTINCT_LIMIT) f.values.set(key, typeof value === 'bigint' ? value.toString() : value);
      if (f.examples.length < 3 && !f.examples.some((e) => JSON.stringify(e) === key)) f.examples.push(typeof value === 'bigint' ? value.toString() : value);
      const isNumber = typeof value === 'number' || typeof value === 'bigint';
      if (!isNumber) f.numeric = false;
      if (!(isNumber && Number.isInteger(Number(value)))) f.allWhole = false;
      if (format !== 'text' && format !== 'boolean') {
        const sortable = isNumber ? Number(value) : String(value);
        const text = String(sortable);
        if (f.min === undefined || less(sortable, f.min)) f.min = text;
        if (f.max === undefined || less(f.max, sortable)) f.max = text;
      }
    }
  }
  const out: FieldProfile[] = [];
  for (const [name, f] of fields) {
    const present = f.present;
    const absent = rows.length - present - f.nulls;
    const format = commonFormat(f.formats);
    const profile: FieldProfile = {
      name,
      types: columnTypes?.has(name) ? [columnTypes.get(name) as string, ...[...f.types].filter((t) => t !== 'null')] : [...f.types].sort(),
      present,
      nulls: f.nulls,
      absent,
      ...(format !== undefined ? { format } : {}),
      distinct_count: f.all.size,
      unique: present >= 2 && f.nulls === 0 && present === rows.length && f.all.size === present,
      examples: f.examples,
      ...(f.min !== undefined ? { min: f.min, max: f.max } : {}),
    };
    if (f.values.size <= DISTINCT_LIMIT && present >= 2 && f.values.size < present) profile.distinct = [...f.values.values()].sort(compareValues);
    const leaf = name.split('.').pop() ?? name;
    if (present > 0 && f.numeric && f.allWhole && format !== 'epoch-millis' && format !== 'epoch-seconds') {
      if (MINOR_NAME.test(leaf)) profile.minor_units = { guess: true, reason: `the name ${leaf} says minor units` };
      else if (AMOUNT_NAME.test(leaf) && !/count|id$/i.test(leaf)) profile.minor_units = { guess: true, reason: `an amount whose ${present} values are all whole numbers (the spec's amounts have 2 decimals)` };
    }
    out.push(profile);
  }
  return out;
}

function less(a: string | number, b: string | number): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a < b;
  if (typeof a === 'number' || typeof b === 'number') return Number(a) < Number(b);
  return a < b;
}

/** The order of distinct values in a profile: numbers by value, the rest as text. */
export function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}
