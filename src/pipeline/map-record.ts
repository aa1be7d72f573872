/**
 * Field mapping: a partner's source record → a record with the spec's field names, types and
 * units (UTC date-times, amounts in units, spec statuses). The result is validated against the
 * spec afterwards; the mapper only fails where it cannot do its own job (a date it cannot parse, a
 * non-numeric amount, an unmapped affiliate code under `unmapped: reject`), and never throws on
 * partner data.
 *
 * Rule order for one field: `from` (or `const`), `default` when absent or null, `map` (a value it
 * does not list takes `default`, else is a violation), `case`, `number`, `minor_units`, `multiply`,
 * `datetime`.
 *
 * Ids meet real schemas: an integer (a BIGINT or INT column, a numeric JSON id) for a string spec
 * field becomes its decimal text. Only when that text is the value the source holds: MySQL and
 * PostgreSQL sources hand integers beyond 2^53 as exact text already, but a JSON number (or a
 * SQLite integer) that large was rounded when read, so it is refused with a message naming the
 * field rather than stored as another customer's id. A non-integer number stays a type error of
 * the validator.
 *
 * What the source record's JSON text hid (src/kernel/strict-json.ts: a field given twice, a number
 * a double cannot keep, bytes not UTF-8) rejects the record when a field the mapping reads holds
 * it, with the spec field, the source field and the rule named (src/spec/json-issues.ts); in a
 * source field nothing reads it changes nothing loaded.
 */
import { Decimal } from 'decimal.js';
import { DateTime } from 'luxon';
import type { FieldRule, PartnerDefinition, StreamMapping } from '../config/definition.js';
import { Exact, isPlainObject, NUMERIC, show, specFields, type SpecFieldKind } from '../config/mapping-rules.js';
import { issueField, jsonIssuesOf, type JsonIssue } from '../kernel/strict-json.js';
import { issueViolations } from '../spec/json-issues.js';
import type { Entity, Variant, Violation } from '../types.js';

export type MapResult = { record: Record<string, unknown> } | { error: Violation };
export type Mapper = (source: unknown) => MapResult;


/** The rule name of every mapping violation (and `affiliate` for an unmapped affiliate code). */
export const MAPPING_RULE = 'mapping';
export const AFFILIATE_RULE = 'affiliate';


// The fraction of the seconds in an ISO 8601 or SQL date-time (after T or a space): parsed here, not by luxon.
const SECONDS_FRACTION = /^(.*[T ]\d{2}:?\d{2}:?\d{2})[.,](\d+)(.*)$/;

const MAX_SAFE = String(Number.MAX_SAFE_INTEGER);


/**
 * The mapper of one stream. The mapping is assumed checked (`mappingProblems`); a rule it still
 * cannot apply turns into a violation of the record, never an exception.
 */
export function createMapper(variant: Variant, entity: Entity, mapping: StreamMapping, affiliates: PartnerDefinition['affiliates']): Mapper {
  const spec = specFields(variant, entity);
  const rules = Object.entries(mapping.fields).filter(([field]) => spec.has(field));
  const targeted = new Set(rules.map(([field]) => field));
  const passthrough = mapping.passthrough ? [...spec.keys()].filter((field) => !targeted.has(field)) : [];
  const affiliateField = spec.has('affiliate_id') ? 'affiliate_id' : undefined;
  const compiled = rules.map(([field, rule]) => {
    const kind = spec.get(field) ?? 'other';
    const apply = compileRule(field, rule, kind);
    // A const is the definition's own value, not a source value: it is not converted.
    const fixed = typeof rule === 'object' && Object.hasOwn(rule, 'const');
    return { field, apply: kind === 'string' && !fixed ? textOfIntegers(field, apply) : apply };
  });
  const passthroughText = new Set(passthrough.filter((field) => spec.get(field) === 'string'));
  const numericKinds: ReadonlySet<SpecFieldKind> = new Set<SpecFieldKind>(['number', 'integer']);
  // The source paths each spec field is read from, for the JSON issues of a source record.
  const reads: { field: string; path: string[] }[] = [
    ...passthrough.map((field) => ({ field, path: [field] })),
    ...rules.flatMap(([field, rule]) => (typeof rule === 'string' ? [{ field, path: rule.split('.') }] : Object.hasOwn(rule, 'const') ? [] : [{ field, path: (rule.from ?? field).split('.') }])),
  ];
  const issueOfRead = (issue: JsonIssue): { error: Violation } | undefined => {
    const path = issue.path.map(String);
    // A long number for a text field is the mapping's own case (integerText says what was lost).
    const read = reads.find((r) => r.path.every((key, i) => i >= path.length || path[i] === key) && (issue.rule !== 'exact_number' || numericKinds.has(spec.get(r.field) ?? 'other')));
    if (read === undefined) return undefined;
    const [violation] = issueViolations(issue, read.field, undefined, `source field ${issueField(issue.path)}`);
    return violation === undefined ? undefined : { error: violation };
  };

  return (source) => {
    try {
      if (!isPlainObject(source)) {
        return fail('(record)', `the source record is ${describeType(source)}, not a JSON object`);
      }
      const issues = jsonIssuesOf(source);
      if (issues !== undefined) {
        for (const issue of issues) {
          const refused = issueOfRead(issue);
          if (refused) return refused;
        }
      }
      const record: Record<string, unknown> = {};
      for (const field of passthrough) {
        if (!Object.hasOwn(source, field) || source[field] === undefined) continue;
        if (!passthroughText.has(field)) {
          record[field] = source[field];
          continue;
        }
        const result = integerText(field, source[field]);
        if ('error' in result) return result;
        record[field] = result.value;
      }
      for (const { field, apply } of compiled) {
        const result = apply(source);
        if ('error' in result) return result;
        if (result.value !== undefined) record[field] = result.value;
      }
      if (affiliateField !== undefined) {
        const code = record[affiliateField];
        if (typeof code === 'string' || typeof code === 'number') {
          const key = String(code);
          if (Object.hasOwn(affiliates.map, key)) record[affiliateField] = affiliates.map[key];
          else if (affiliates.unmapped === 'reject') {
            return {
              error: {
                field: affiliateField,
                rule: AFFILIATE_RULE,
                message: `${affiliateField}: partner affiliate code ${show(code)} is not in affiliates.map (unmapped: reject)`,
              },
            };
          }
        }
      }
      return { record };
    } catch (error) {
      // A guard: no partner value should get here, but a bad record must never stop a batch.
      return fail('(record)', `cannot map the record: ${(error as Error).message}`);
    }
  };
}

type Applied = { value: unknown } | { error: Violation };

function fail(field: string, message: string): { error: Violation } {
  return { error: { field, rule: MAPPING_RULE, message: field === '(record)' ? message : `${field}: ${message}` } };
}

/**
 * An integer for a string field → its decimal text. A bigint is exact; a number is exact only up
 * to 2^53 − 1 (beyond it the source's digits are already lost). Anything else passes unchanged for
 * the validator to judge (1.5 for an id is its type error).
 */
function integerText(field: string, value: unknown): Applied {
  if (typeof value === 'bigint') return { value: value.toString() };
  if (typeof value !== 'number' || !Number.isInteger(value)) return { value };
  if (Number.isSafeInteger(value)) return { value: String(value) };
  return fail(field, `the integer ${show(value)} is beyond ${MAX_SAFE} (2^53 − 1), where a JSON number is no longer read exactly: the id the partner sent is not known; send it as a string`);
}

function textOfIntegers(field: string, apply: (source: Record<string, unknown>) => Applied): (source: Record<string, unknown>) => Applied {
  return (source) => {
    const result = apply(source);
    return 'error' in result ? result : integerText(field, result.value);
  };
}

function compileRule(field: string, rule: FieldRule, kind: SpecFieldKind): (source: Record<string, unknown>) => Applied {
  if (typeof rule === 'string') {
    const path = rule.split('.');
    return (source) => ({ value: valueAtPath(source, path) });
  }
  if (Object.hasOwn(rule, 'const')) {
    const value = rule.const;
    return () => ({ value });
  }
  const path = (rule.from ?? field).split('.');
  const hasDefault = Object.hasOwn(rule, 'default');
  const map = rule.map;
  const minorUnits = rule.minor_units;
  const factor = rule.multiply === undefined ? undefined : new Exact(String(rule.multiply).trim());
  const datetime = rule.datetime;
  const format = datetime?.format ?? 'iso';
  const zone = datetime?.zone ?? 'UTC';

  return (source) => {
    let value = valueAtPath(source, path);
    if (value === undefined || value === null) return { value: hasDefault ? rule.default : value };
    if (map !== undefined && (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')) {
      const key = String(value);
      if (Object.hasOwn(map, key)) value = map[key];
      else if (hasDefault) value = rule.default;
      else return fail(field, `${show(value)} is not in the map of ${field} (${mapKeys(map)}), and the rule has no default: add it to map, or give a default`);
      if (value === undefined || value === null) return { value };
    }
    if (rule.case !== undefined) {
      if (typeof value !== 'string') return fail(field, `case: ${rule.case} applies to text, got ${show(value)}`);
      value = rule.case === 'upper' ? value.toUpperCase() : value.toLowerCase();
    }
    if (rule.number === true) {
      if (typeof value === 'string' && NUMERIC.test(value)) value = Number(value);
      else if (typeof value !== 'number' || !Number.isFinite(value)) return fail(field, `not a number: ${show(value)}`);
    }
    if (minorUnits !== undefined) {
      const units = toMinorUnits(value, minorUnits);
      if (units === undefined) return fail(field, `not an amount in minor units: ${show(value)}`);
      value = units;
    }
    if (factor !== undefined) {
      const product = exactNumber(value);
      if (product === undefined) return fail(field, `not a number to multiply: ${show(value)}`);
      value = Number(product.times(factor).toString());
    }
    if (datetime !== undefined) {
      const parsed = kind === 'date' ? toDate(value, format, zone) : toDateTime(value, format, zone);
      if (parsed === undefined) return fail(field, `cannot parse ${show(value)} with format ${format} in ${zone}`);
      value = parsed;
    }
    return { value };
  };
}

/** A map's keys for a message, at most ten. */
function mapKeys(map: Record<string, unknown>): string {
  const keys = Object.keys(map);
  const shown = keys.slice(0, 10).map((k) => JSON.stringify(k)).join(', ');
  return keys.length === 0 ? 'an empty map' : `keys ${shown}${keys.length > 10 ? `, … ${keys.length} in all` : ''}`;
}

/** The value at a dot path; own properties only (a path like `__proto__.x` finds nothing). */
function valueAtPath(source: unknown, path: readonly string[]): unknown {
  let current: unknown = source;
  for (const key of path) {
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(key)) return undefined;
      current = current[Number(key)];
    } else if (isPlainObject(current)) {
      if (!Object.hasOwn(current, key)) return undefined;
      current = current[key];
    } else return undefined;
  }
  return current;
}

/** A number or numeric text as an exact decimal (a number as its shortest text: the value it was read as). */
function exactNumber(value: unknown): Decimal | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return new Exact(String(value));
  if (typeof value === 'string' && NUMERIC.test(value)) return new Exact(value.trim());
  if (typeof value === 'bigint') return new Exact(value.toString());
  return undefined;
}

/** 1999 with 2 → 19.99, exactly: the division is decimal, and the result is the double nearest to it. */
function toMinorUnits(value: unknown, places: number): number | undefined {
  const exact = exactNumber(value);
  return exact === undefined ? undefined : Number(exact.div(new Exact(10).pow(places)).toString());
}

/**
 * A UTC ISO 8601 date-time (`…Z`). Fractions of a second are carried as the digits written, never
 * through a float or luxon's milliseconds, so nothing is rounded (and never up): offsets are whole
 * minutes, so converting the whole seconds with luxon and appending the digits is exact.
 */
function toDateTime(value: unknown, format: string, zone: string): string | undefined {
  const parts = parseParts(value, format, zone, false);
  if (parts === undefined) return undefined;
  const { dt, fraction } = parts;
  const utc = dt.toUTC();
  if (!utc.isValid || utc.year < 0 || utc.year > 9999) return undefined;
  return utc.toFormat("yyyy-MM-dd'T'HH:mm:ss") + (fraction === '' ? '' : '.' + fraction) + 'Z';
}

/** A calendar date YYYY-MM-DD: the day as written, in the value's own offset or else `zone` (a day is not shifted by a conversion). */
function toDate(value: unknown, format: string, zone: string): string | undefined {
  const parts = parseParts(value, format, zone, true);
  if (parts === undefined || !parts.dt.isValid) return undefined;
  return parts.dt.toISODate() ?? undefined;
}

interface Parts {
  /** The instant to the whole second (or with luxon's milliseconds when `fraction` is empty and the format has them). */
  dt: DateTime;
  /** Digits of the fraction of a second, as written ('' when none). */
  fraction: string;
}

function parseParts(value: unknown, format: string, zone: string, keepOffset: boolean): Parts | undefined {
  const options = { zone, setZone: keepOffset };
  switch (format) {
    case 'unix_seconds':
    case 'unix_millis': {
      const seconds = epochSeconds(value, format === 'unix_millis' ? 3 : 0);
      if (seconds === undefined) return undefined;
      const whole = seconds.floor();
      if (whole.abs().gt(1e12)) return undefined;
      const fraction = seconds.minus(whole).toFixed().replace(/^0\.?/, '');
      const dt = DateTime.fromSeconds(whole.toNumber(), { zone });
      return dt.isValid ? { dt, fraction } : undefined;
    }
    case 'iso':
    case 'sql': {
      if (typeof value !== 'string') return undefined;
      const split = SECONDS_FRACTION.exec(value);
      const text = split === null ? value : `${split[1]}${split[3]}`;
      const dt = format === 'iso' ? DateTime.fromISO(text, options) : DateTime.fromSQL(text, options);
      if (!dt.isValid) return undefined;
      return { dt, fraction: split?.[2] ?? millisFraction(dt) };
    }
    case 'rfc2822':
    case 'http': {
      if (typeof value !== 'string') return undefined;
      const dt = format === 'rfc2822' ? DateTime.fromRFC2822(value, options) : DateTime.fromHTTP(value, options);
      return dt.isValid ? { dt, fraction: '' } : undefined;
    }
    default: {
      if (typeof value !== 'string' && typeof value !== 'number') return undefined;
      const dt = DateTime.fromFormat(String(value), format, options);
      if (!dt.isValid) return undefined;
      return { dt: dt.set({ millisecond: 0 }), fraction: millisFraction(dt) };
    }
  }
}

/** The milliseconds luxon parsed (from a format's S or u tokens) as fraction digits, trailing zeros dropped. */
function millisFraction(dt: DateTime): string {
  return dt.millisecond === 0 ? '' : String(dt.millisecond).padStart(3, '0').replace(/0+$/, '');
}

/** A Unix timestamp as exact seconds; `shift` 3 for milliseconds. */
function epochSeconds(value: unknown, shift: number): Decimal | undefined {
  let text: string;
  if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else if (typeof value === 'string' && NUMERIC.test(value)) text = value.trim();
  else return undefined;
  const number = new Exact(text);
  return shift === 0 ? number : number.div(new Exact(10).pow(shift));
}


function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

