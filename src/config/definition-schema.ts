/**
 * The connector definition schema (partner-definition.schema.json): compiled once with ajv, and
 * ajv's errors turned into messages a person editing the YAML can act on: the key path, what is
 * allowed, what was found ("unknown key 'per_pge'; allowed keys: ...", "must be <= 500 (spec §4),
 * got 1000"). Secret values are never shown.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { AnySchemaObject, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { isDateTime, isLeapSecond } from '../kernel/timestamp.js';
import { packageRoot } from '../paths.js';
import { isFullDate } from '../spec/date-format.js';
import { secretFieldNames } from './secrets.js';
import type { SchemaNode } from './secrets.js';

/** The schema ships as a source file (not copied to dist/), like the spec schemas. */
export function definitionSchemaFile(): string {
  return join(packageRoot(), 'src', 'config', 'partner-definition.schema.json');
}

export interface DefinitionSchema {
  schema: AnySchemaObject & SchemaNode;
  validate: ValidateFunction;
}

/** Annotation keywords of this service (see the schema's $comment). */
const ANNOTATIONS = ['x-secret', 'x-spec', 'x-error'];

let compiled: DefinitionSchema | undefined;

/** The compiled schema, read on first use. */
export function definitionSchema(): DefinitionSchema {
  if (compiled !== undefined) return compiled;
  const file = definitionSchemaFile();
  const schema = JSON.parse(readFileSync(file, 'utf8')) as AnySchemaObject & SchemaNode;
  // verbose: errors carry their schema node (x-error, x-spec, allowed keys) and the offending value.
  // validateSchema off: the shipped schema is checked against the meta-schema by test/spec/meta-schemas.test.ts, not at every start.
  const ajv = new Ajv2020({ allErrors: true, strict: true, verbose: true, discriminator: true, allowUnionTypes: true, validateSchema: false });
  // The rules of every date-time the service reads (../kernel/timestamp.ts); a leap second cannot be a window bound any more than a stored value.
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => isDateTime(text) && !isLeapSecond(text) });
  ajv.addFormat('date', { type: 'string', validate: isFullDate });
  for (const keyword of ANNOTATIONS) ajv.addKeyword({ keyword });
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } catch (error) {
    throw new Error(`cannot compile ${file}: ${(error as Error).message}`, { cause: error });
  }
  compiled = { schema, validate };
  return compiled;
}

/** One schema violation: the key path and, for a key that should not be there, that the key is meant. */
export interface SchemaProblem {
  path: string[];
  message: string;
  /** `key`: point at the key itself (an unknown key); `parent`: the value at path does not exist (a missing key). */
  at: 'value' | 'key' | 'parent';
}

const SHOWN_CHARS = 60;

/** ajv errors → one problem per distinct (path, message). */
export function schemaProblems(errors: readonly ErrorObject[], root: SchemaNode): SchemaProblem[] {
  const secretNames = new Set(secretFieldNames(root));
  // The branches of a failed oneOf/anyOf say nothing the oneOf/anyOf message does not.
  const alternatives = errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf');
  const covered = (e: ErrorObject): boolean =>
    alternatives.some(
      (a) => a !== e && e.schemaPath.startsWith(a.schemaPath + '/') && (e.instancePath === a.instancePath || e.instancePath.startsWith(a.instancePath + '/')),
    );

  const problems: SchemaProblem[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    // An `if` only chooses the schema of the streams by source.type; the chosen schema's own errors say what is wrong.
    if (error.keyword === 'if' || covered(error)) continue;
    const problem = toProblem(error, root, secretNames);
    const id = JSON.stringify([problem.path, problem.message]);
    if (seen.has(id)) continue;
    seen.add(id);
    problems.push(problem);
  }
  return problems;
}

function toProblem(error: ErrorObject, root: SchemaNode, secretNames: ReadonlySet<string>): SchemaProblem {
  const path = pointerToPath(error.instancePath);
  const node = (error.parentSchema ?? {}) as Record<string, unknown>;
  // The mark sits on the property that $refs the value's schema, so the key name decides too.
  const secret = node['x-secret'] === true || secretNames.has(path[path.length - 1] ?? '');
  const got = secret ? '' : `, got ${show(error.data)}`;
  const hint = typeof node['x-error'] === 'string' ? node['x-error'] : undefined;
  const params = error.params as Record<string, unknown>;

  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      // Keys declared only to be refused with a reason (`not`: a REST parameter in a db stream) are not offered.
      const properties = (node.properties ?? {}) as Record<string, SchemaNode | boolean>;
      const allowed = Object.keys(properties).filter((k) => {
        const property = properties[k];
        return typeof property !== 'object' || (deref(root, property) as Record<string, unknown>).not === undefined;
      });
      const suggestion = closest(key, allowed);
      return {
        path: [...path, key],
        at: 'key',
        message: `unknown key ${JSON.stringify(key)}${suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`}; allowed keys: ${allowed.join(', ')}`,
      };
    }
    case 'required':
      return { path: [...path, String(params.missingProperty)], at: 'parent', message: 'is required but missing' };
    case 'dependentRequired':
      return { path: [...path, String(params.missingProperty)], at: 'parent', message: `is required when ${String(params.property)} is given` };
    case 'not':
      // A key that must not be there (a REST parameter in a db stream): the hint says why.
      return { path, at: 'key', message: hint ?? 'is not allowed here' };
    case 'type':
      return { path, at: 'value', message: `must be ${typeWords(params.type)}${got}` };
    case 'enum':
      return { path, at: 'value', message: `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}${got}` };
    case 'const':
      return { path, at: 'value', message: `${hint ?? `must be ${String(params.allowedValue)}`}${got}` };
    case 'maximum':
    case 'minimum':
    case 'exclusiveMaximum':
    case 'exclusiveMinimum': {
      const spec = typeof node['x-spec'] === 'string' ? ` (spec ${node['x-spec']})` : '';
      return { path, at: 'value', message: `must be ${String(params.comparison)} ${String(params.limit)}${spec}${got}` };
    }
    case 'minLength':
      return { path, at: 'value', message: params.limit === 1 ? 'must not be empty' : `must have at least ${String(params.limit)} characters` };
    case 'minProperties':
      return { path, at: 'value', message: hint ?? `must have at least ${String(params.limit)} keys` };
    case 'pattern':
      return { path, at: 'value', message: `${hint ?? `must match ${String(params.pattern)}`}${got}` };
    case 'format':
      return { path, at: 'value', message: `${hint ?? `must be a ${String(params.format)}`}${got}` };
    case 'oneOf':
    case 'anyOf': {
      const isObject = typeof error.data === 'object' && error.data !== null;
      return { path, at: 'value', message: `${hint ?? 'does not match any allowed form'}${isObject ? '' : got}` };
    }
    case 'discriminator': {
      const tag = String(params.tag);
      const allowed = discriminatorValues(node, root);
      const value = isRecord(error.data) ? error.data[tag] : undefined;
      if (params.error === 'tag' && value === undefined) {
        return { path: [...path, tag], at: 'parent', message: `is required but missing; one of ${allowed.join(', ')}` };
      }
      return { path: [...path, tag], at: 'value', message: `must be one of ${allowed.join(', ')}, got ${show(value)}` };
    }
    default:
      return { path, at: 'value', message: error.message ?? `fails ${error.keyword}` };
  }
}

/** `/streams/customers/pagination` → ['streams', 'customers', 'pagination']. */
function pointerToPath(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The `const` values of a discriminated oneOf's branches (the allowed `type`s). */
function discriminatorValues(node: Record<string, unknown>, root: SchemaNode): string[] {
  const tag = isRecord(node.discriminator) ? String(node.discriminator.propertyName) : 'type';
  const values: string[] = [];
  for (const branch of (node.oneOf ?? []) as SchemaNode[]) {
    const resolved = deref(root, branch);
    const property = resolved.properties?.[tag];
    if (typeof property === 'object' && property.const !== undefined) values.push(String(property.const));
  }
  return values;
}

function deref(root: SchemaNode, node: SchemaNode): SchemaNode {
  const match = node.$ref === undefined ? null : /^#\/\$defs\/([^/]+)$/.exec(node.$ref);
  return (match?.[1] === undefined ? undefined : root.$defs?.[match[1]]) ?? node;
}

function typeWords(type: unknown): string {
  const words: Record<string, string> = {
    string: 'a string',
    integer: 'a whole number',
    number: 'a number',
    boolean: 'true or false',
    object: 'a mapping (key: value)',
    array: 'a list',
    null: 'null',
  };
  const types = Array.isArray(type) ? type : [type];
  return types.map((t) => words[String(t)] ?? String(t)).join(' or ');
}

/** A value for a message: strings quoted, objects named by kind, cut to a readable length. */
export function show(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (value === undefined) return 'nothing';
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > SHOWN_CHARS ? text.slice(0, SHOWN_CHARS - 1) + '…' : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The allowed key nearest to a misspelt one (edit distance at most 2), if any. */
function closest(key: string, allowed: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of allowed) {
    const distance = editDistance(key, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
