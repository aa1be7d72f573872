/**
 * Turns ajv's errors into the spec's violations: one `{field, rule, message}` per broken rule, with a
 * message a partner can act on (field, what is allowed, the offending value where it is safe to
 * show it).
 */
import type { ErrorObject } from 'ajv/dist/2020.js';
import { dateTimeProblem } from '../kernel/timestamp.js';
import type { Violation } from '../types.js';

/** What the messages need to know about the schema a record was checked against. */
export interface SchemaFacts {
  /** The schema's property names in schema order (listed for an unknown property). */
  properties: readonly string[];
  /** Required property names: a null there is a `required` violation, not a `type` one. */
  required: ReadonlySet<string>;
}

/** The `field` of a violation that concerns the whole record (not a JSON object, not JSON at all). */
export const RECORD_FIELD = '(record)';

/** Personal data (spec §2.1): their values never appear in a message. */
export const PERSONAL_DATA_FIELDS: ReadonlySet<string> = new Set(['first_name', 'last_name', 'email']);

/** Longest excerpt of a value shown in a message. */
const SHOWN_CHARS = 40;

const FORMAT_RULES: Readonly<Record<string, string>> = {
  'date-time': 'must be an ISO 8601 date-time with time zone, e.g. 2024-05-01T12:00:00Z',
  date: 'must be a calendar date YYYY-MM-DD, e.g. 2024-05-01',
  email: 'must be a valid e-mail address',
};

const PATTERN_RULES: Readonly<Record<string, string>> = {
  '^[A-Z]{3}$': 'must be an ISO 4217 three-letter upper-case currency code, e.g. EUR',
  '^[a-z]{2}$': 'must be an ISO 639-1 two-letter lower-case language code, e.g. en',
  '^[A-Z]{2}$': 'must be an ISO 3166-1 alpha-2 upper-case country code, e.g. DE',
};

/**
 * The violations behind ajv's `errors` for `record`. Keeps the first violation per (field, rule),
 * and only the type (or null) violation of a field whose value has the wrong type: the other rules
 * of that field say nothing more.
 */
export function toViolations(errors: readonly ErrorObject[], record: unknown, facts: SchemaFacts): Violation[] {
  const byKey = new Map<string, Violation>();
  const wrongType = new Set<string>();
  for (const error of errors) {
    const violation = toViolation(error, record, facts);
    const key = violation.field + '\u0000' + violation.rule;
    if (byKey.has(key)) continue;
    byKey.set(key, violation);
    if (error.keyword === 'type') wrongType.add(violation.field);
  }
  const violations: Violation[] = [];
  for (const violation of byKey.values()) {
    const typeRule = violation.rule === 'type' || violation.rule === 'required';
    if (wrongType.has(violation.field) && !typeRule) continue;
    violations.push(violation);
  }
  return violations;
}

function toViolation(error: ErrorObject, record: unknown, facts: SchemaFacts): Violation {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const field = String(params.missingProperty);
      return { field, rule: 'required', message: `${field}: required field is missing` };
    }
    case 'additionalProperties': {
      const field = String(params.additionalProperty);
      return {
        field,
        rule: 'additionalProperties',
        message: `${field}: unknown property (allowed: ${facts.properties.join(', ')})`,
      };
    }
  }

  const field = fieldOf(error.instancePath);
  if (field === RECORD_FIELD) {
    if (error.keyword === 'type') {
      return { field, rule: 'type', message: `record must be a JSON object (got ${kindOf(record)})` };
    }
    return { field, rule: error.keyword, message: `record: ${error.message ?? 'invalid'}` };
  }

  const value = valueOf(record, field);
  const shown = PERSONAL_DATA_FIELDS.has(field) ? undefined : value;
  const got = shown === undefined ? '' : ` (got ${show(shown)})`;
  const rule = error.keyword;
  let text: string;
  switch (rule) {
    case 'type':
      if (value === null && facts.required.has(field)) {
        return { field, rule: 'required', message: `${field}: must not be null (required field)` };
      }
      text = `must be ${expectedType(String(params.type))} (got ${kindOf(value)}${
        shown === undefined || typeof shown === 'object' ? '' : ' ' + show(shown)
      })`;
      break;
    case 'format': {
      // A date-time says why (month 13, an offset without minutes...): the form alone does not show it.
      const why = params.format === 'date-time' && typeof value === 'string' ? dateTimeProblem(value) : undefined;
      text = (FORMAT_RULES[String(params.format)] ?? `must be in format ${String(params.format)}`) + (why === undefined ? '' : `; ${why}`) + got;
      break;
    }
    case 'pattern':
      text = (PATTERN_RULES[String(params.pattern)] ?? `must match the pattern ${String(params.pattern)}`) + got;
      break;
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).filter((v) => v !== null);
      text = `must be one of ${allowed.map(String).join(', ')}${got}`;
      break;
    }
    case 'minLength':
      text =
        params.limit === 1
          ? 'must not be empty (identifiers are non-empty strings)'
          : `must have at least ${String(params.limit)} characters${lengthGot(value, shown)}`;
      break;
    case 'maxLength':
      text = `must have at most ${String(params.limit)} characters${lengthGot(value, shown)}`;
      break;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      text = `must be ${String(params.comparison)} ${String(params.limit)}${got}`;
      break;
    case 'maxSignificantDigits':
      text = `more than ${String(params.limit)} significant digits${shown === undefined ? '' : ` (${show(shown)})`}`;
      break;
    case 'maxDecimalPlaces':
      text = `more than ${String(params.limit)} decimal places${shown === undefined ? '' : ` (${show(shown)})`}`;
      break;
    default:
      text = (error.message ?? 'is invalid') + got;
  }
  return { field, rule, message: `${field}: ${text}` };
}

/** The top-level property an instancePath points into, or RECORD_FIELD for the record itself. */
function fieldOf(instancePath: string): string {
  if (instancePath === '') return RECORD_FIELD;
  const end = instancePath.indexOf('/', 1);
  const segment = end < 0 ? instancePath.slice(1) : instancePath.slice(1, end);
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

function valueOf(record: unknown, field: string): unknown {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
  return Object.prototype.hasOwnProperty.call(record, field) ? (record as Record<string, unknown>)[field] : undefined;
}

/** JSON kind of a value, as a partner would name it. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

function expectedType(types: string): string {
  const names = types.split(',').map((t) => (t === 'null' ? 'null' : t === 'integer' || t === 'object' || t === 'array' ? `an ${t}` : `a ${t}`));
  return names.join(' or ');
}

/** A value as it would appear in JSON, cut to SHOWN_CHARS characters. */
function show(value: unknown): string {
  if (typeof value === 'string') {
    if (value.length <= SHOWN_CHARS) return JSON.stringify(value);
    return `${JSON.stringify(value.slice(0, SHOWN_CHARS)).slice(0, -1)}..." (${value.length} characters)`;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return kindOf(value);
}

function lengthGot(value: unknown, shown: unknown): string {
  if (typeof value !== 'string') return '';
  if (shown === undefined) return ` (got ${value.length})`;
  const excerpt = value.length <= SHOWN_CHARS ? JSON.stringify(value) : `${JSON.stringify(value.slice(0, SHOWN_CHARS)).slice(0, -1)}..."`;
  return ` (got ${value.length}: ${excerpt})`;
}
