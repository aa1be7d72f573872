/**
 * What a mapping's definition may say, judged before any record is seen: the spec fields of a
 * variant and entity with their kinds, the datetime formats, and the problems of a mapping (an
 * unknown spec field, a rule that does not fit the field's kind, an unknown zone, a format that
 * cannot read a date, a factor that is not an exact decimal). The definition check and the
 * onboarding drafts use it; the mapper (src/pipeline/map-record.ts) applies what passes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Decimal } from 'decimal.js';
import { DateTime, Info } from 'luxon';
import { defaultSchemaDir } from '../spec/validator.js';
import type { Entity, Variant } from '../types.js';

/** What the mapper needs to know of a spec field. */
export type SpecFieldKind = 'date-time' | 'date' | 'number' | 'integer' | 'string' | 'other';

/** Named datetime formats; anything else is a luxon format string. */
export const DATETIME_FORMATS = ['iso', 'sql', 'rfc2822', 'http', 'unix_seconds', 'unix_millis'] as const;

const SHOWN_CHARS = 60;
// Enough digits for any timestamp or amount; the default 20 could round a long fraction.
export const Exact = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_FLOOR, toExpNeg: -100, toExpPos: 100 });
export const NUMERIC = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

const fieldCache = new Map<string, ReadonlyMap<string, SpecFieldKind>>();

/** The spec fields of a variant and entity, in schema order, with their kinds (read from the spec schemas). */
export function specFields(variant: Variant, entity: Entity, schemaDir: string = defaultSchemaDir()): ReadonlyMap<string, SpecFieldKind> {
  const file = join(schemaDir, variant, `${entity}.schema.json`);
  const cached = fieldCache.get(file);
  if (cached !== undefined) return cached;
  const schema = JSON.parse(readFileSync(file, 'utf8')) as { properties?: Record<string, { type?: string | string[]; format?: string }> };
  const fields = new Map<string, SpecFieldKind>();
  for (const [name, property] of Object.entries(schema.properties ?? {})) fields.set(name, kindOf(property));
  fieldCache.set(file, fields);
  return fields;
}

function kindOf(property: { type?: string | string[]; format?: string }): SpecFieldKind {
  if (property.format === 'date-time') return 'date-time';
  if (property.format === 'date') return 'date';
  const types = Array.isArray(property.type) ? property.type : [property.type];
  if (types.includes('integer')) return 'integer';
  if (types.includes('number')) return 'number';
  if (types.includes('string')) return 'string';
  return 'other';
}

/** A problem of a mapping's definition; `key` is the path below `mapping.fields.<field>` ([] for the field's key). */
export interface MappingProblem {
  field: string;
  key: string[];
  message: string;
}

/**
 * What is wrong with a mapping before any record is seen: unknown spec fields, rules that do not
 * fit the field's kind, unknown zones and datetime formats that cannot read a date.
 */
export function mappingProblems(variant: Variant, entity: Entity, fields: Record<string, unknown>): MappingProblem[] {
  const spec = specFields(variant, entity);
  const problems: MappingProblem[] = [];
  for (const [field, rule] of Object.entries(fields)) {
    const kind = spec.get(field);
    if (kind === undefined) {
      problems.push({ field, key: [], message: `"${field}" is not a spec field of ${variant} ${entity}; spec fields: ${[...spec.keys()].join(', ')}` });
      continue;
    }
    if (!isPlainObject(rule)) continue;
    const has = (key: string): boolean => Object.hasOwn(rule, key);
    if (has('const')) {
      const others = ['from', 'map', 'case', 'number', 'minor_units', 'multiply', 'datetime'].filter(has);
      if (others.length > 0) problems.push({ field, key: ['const'], message: `const is a fixed value: it cannot be combined with ${others.join(', ')}` });
    }
    if (has('datetime') && kind !== 'date-time' && kind !== 'date') {
      problems.push({ field, key: ['datetime'], message: `datetime applies to date-time and date fields; ${field} is a ${kind} field` });
    }
    if (has('case') && kind !== 'string' && kind !== 'other') {
      problems.push({ field, key: ['case'], message: `case applies to text fields; ${field} is a ${kind} field` });
    }
    for (const key of ['minor_units', 'multiply', 'number']) {
      if (has(key) && kind !== 'number' && kind !== 'integer') {
        problems.push({ field, key: [key], message: `${key} applies to number fields; ${field} is a ${kind} field` });
      }
    }
    if (has('multiply')) {
      const reason = factorProblem(rule.multiply);
      if (reason !== undefined) problems.push({ field, key: ['multiply'], message: reason });
    }
    const datetime = rule.datetime;
    if (isPlainObject(datetime)) {
      const zone = datetime.zone;
      if (typeof zone === 'string' && !Info.normalizeZone(zone).isValid) {
        problems.push({ field, key: ['datetime', 'zone'], message: `unknown time zone ${JSON.stringify(zone)}: use an IANA name such as Europe/Malta, or UTC` });
      }
      const format = datetime.format;
      if (typeof format === 'string') {
        const reason = formatProblem(format, kind === 'date' ? 'date' : 'date-time');
        if (reason !== undefined) problems.push({ field, key: ['datetime', 'format'], message: reason });
      }
    }
  }
  return problems;
}

/** Why a `multiply` factor cannot be used, or undefined: it must be an exact, non-zero decimal. */
export function factorProblem(factor: unknown): string | undefined {
  // Another type is the definition schema's error.
  if (typeof factor !== 'number' && typeof factor !== 'string') return undefined;
  const text = typeof factor === 'number' ? (Number.isFinite(factor) ? String(factor) : undefined) : factor.trim();
  const wanted = 'the factor must be a non-zero decimal number such as 1000 or 0.01';
  if (text === undefined || !NUMERIC.test(text)) return `${wanted}, got ${show(factor)}`;
  const value = new Exact(text);
  if (value.isZero()) return `${wanted}: multiplying by 0 would erase the value`;
  if (value.abs().gte(new Exact(10).pow(15)) || value.abs().lt(new Exact(10).pow(-15))) return `${wanted} within 1e-15 and 1e15, got ${show(factor)}`;
  return undefined;
}

/** Why a datetime format cannot be used, or undefined. A luxon format must read back the date it writes. */
export function formatProblem(format: string, kind: 'date-time' | 'date'): string | undefined {
  if ((DATETIME_FORMATS as readonly string[]).includes(format)) return undefined;
  const sample = DateTime.fromObject({ year: 2024, month: 5, day: 17, hour: 13, minute: 4, second: 5, millisecond: 123 }, { zone: 'UTC' });
  const read = DateTime.fromFormat(sample.toFormat(format), format, { zone: 'UTC' });
  const fullDate = read.isValid && read.year === sample.year && read.month === sample.month && read.day === sample.day;
  if (fullDate) return undefined;
  return `format ${JSON.stringify(format)} does not read a full ${kind === 'date' ? 'date' : 'date (year, month, day)'}: use ${DATETIME_FORMATS.join(', ')} or a luxon format such as dd/MM/yyyy HH:mm`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value for a message: JSON, cut to a readable length. */
export function show(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > SHOWN_CHARS ? text.slice(0, SHOWN_CHARS - 1) + '…' : text;
}
