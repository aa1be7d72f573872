/**
 * Validation of partner records against the spec's JSON Schemas (spec §2, §8): one compiled
 * validator per (variant, entity), and the payload-level bulk limit.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { AnySchemaObject, ValidateFunction } from 'ajv/dist/2020.js';
import { packageRoot } from '../paths.js';
import { ENTITIES, VARIANTS } from '../types.js';
import type { Entity, Variant, Violation } from '../types.js';
import { isDateTime } from '../kernel/timestamp.js';
import { isFullDate } from './date-format.js';
import { isEmail } from './email-format.js';
import { toViolations } from './errors.js';
import { withJsonIssues, type NumberLimits } from './json-issues.js';
import { jsonIssuesOf } from '../kernel/strict-json.js';
import type { SchemaFacts } from './errors.js';
import { specKeywords } from './keywords.js';
import { storableFacts, storableViolations, type StorableFacts } from './storable.js';

/** Records per bulk request or bulk payload (spec §4, §8). */
export const BULK_LIMIT = 1000;

/** The schemas ship as source files (not copied to dist/), so they are found from the package root. */
export function defaultSchemaDir(): string {
  return join(packageRoot(), 'src', 'spec', 'schemas');
}

export interface SpecValidator {
  /**
   * The spec violations of one record; empty when it is valid. The empty result is one shared,
   * frozen array (the valid path allocates nothing): do not add to it.
   */
  validate(variant: Variant, entity: Entity, record: unknown): Violation[];
  /** Payload-level rules of a bulk payload: at most BULK_LIMIT records. */
  validateBulk(records: unknown[]): Violation[];
  /** The schema file a (variant, entity) is checked against. */
  schemaFile(variant: Variant, entity: Entity): string;
  /**
   * The very schema object a (variant, entity) is compiled from (the API's OpenAPI document is
   * built from it). Frozen, deeply: read it, do not change it.
   */
  schema(variant: Variant, entity: Entity): Readonly<AnySchemaObject>;
}

export interface SpecValidatorOptions {
  /** Folder holding `<variant>/<entity>.schema.json`; defaults to the package's src/spec/schemas. */
  schemaDir?: string;
}

interface Compiled {
  schema: AnySchemaObject;
  check: ValidateFunction;
  facts: SchemaFacts;
  storable: StorableFacts;
  /** maxSignificantDigits / maxDecimalPlaces of each field that has them. */
  limits: ReadonlyMap<string, NumberLimits>;
  file: string;
}

const NO_VIOLATIONS: Violation[] = Object.freeze([]) as unknown as Violation[];

/** Builds the validator: reads and compiles the six schemas once. */
export function createSpecValidator(options: SpecValidatorOptions = {}): SpecValidator {
  const schemaDir = options.schemaDir ?? defaultSchemaDir();
  // The shipped schemas are checked against the meta-schema by a test (test/spec/meta-schemas.test.ts),
  // not at every start: compiling the meta-schema slowed every command's start (bench/README.md,
  // Measured outside the benchmarks). Others are checked here.
  const ajv = new Ajv2020({ allErrors: true, strict: true, validateSchema: options.schemaDir !== undefined });
  // The formats are our own, not ajv-formats': each with its deliberate choices in its file
  // (date-time: ../kernel/timestamp.ts; date: ./date-format.ts; email: ./email-format.ts).
  ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
  ajv.addFormat('date', { type: 'string', validate: isFullDate });
  ajv.addFormat('email', { type: 'string', validate: isEmail });
  for (const keyword of specKeywords) ajv.addKeyword(keyword);

  // Maps, not objects: a variant or entity named like an Object.prototype member finds nothing.
  const compiled = new Map<Variant, Map<Entity, Compiled>>();
  for (const variant of VARIANTS) {
    const byEntity = new Map<Entity, Compiled>();
    compiled.set(variant, byEntity);
    for (const entity of ENTITIES) {
      const file = join(schemaDir, variant, `${entity}.schema.json`);
      const schema = deepFreeze(readSchema(file));
      let check: ValidateFunction;
      try {
        check = ajv.compile(schema);
      } catch (error) {
        throw new Error(`cannot compile schema ${file}: ${(error as Error).message}`, { cause: error });
      }
      const propertySchemas = (schema.properties ?? {}) as Record<string, unknown>;
      const properties = Object.keys(propertySchemas);
      const required = new Set((schema.required ?? []) as string[]);
      byEntity.set(entity, { schema, check, facts: { properties, required }, storable: storableFacts(propertySchemas), limits: numberLimits(propertySchemas), file });
    }
  }

  function lookup(variant: Variant, entity: Entity): Compiled {
    const found = compiled.get(variant)?.get(entity);
    if (found === undefined) {
      throw new Error(
        `unknown variant/entity ${String(variant)}/${String(entity)} (variants: ${VARIANTS.join(', ')}; entities: ${ENTITIES.join(', ')})`,
      );
    }
    return found;
  }

  return {
    validate(variant, entity, record) {
      const { check, facts, storable, limits } = lookup(variant, entity);
      const valid = check(record);
      // Beyond the schemas: what the stores cannot hold (./storable.ts), what the JSON text hid (./json-issues.ts).
      const unstorable = storableViolations(record, storable);
      const hidden = jsonIssuesOf(record);
      if (valid && unstorable === undefined && hidden === undefined) return NO_VIOLATIONS;
      const violations = valid ? [] : toViolations(check.errors ?? [], record, facts);
      if (unstorable !== undefined) violations.push(...unstorable);
      return hidden === undefined ? violations : withJsonIssues(record, violations, (field) => limits.get(field));
    },
    validateBulk(records) {
      if (records.length <= BULK_LIMIT) return NO_VIOLATIONS;
      return [
        {
          field: '(payload)',
          rule: 'maxItems',
          message: `bulk payload has ${records.length} records; at most ${BULK_LIMIT} are allowed (spec §8)`,
        },
      ];
    },
    schemaFile(variant, entity) {
      return lookup(variant, entity).file;
    },
    schema(variant, entity) {
      return lookup(variant, entity).schema;
    },
  };
}

function numberLimits(properties: Record<string, unknown>): Map<string, NumberLimits> {
  const limits = new Map<string, NumberLimits>();
  for (const [field, schema] of Object.entries(properties)) {
    const { maxSignificantDigits, maxDecimalPlaces } = (schema ?? {}) as NumberLimits;
    if (maxSignificantDigits !== undefined || maxDecimalPlaces !== undefined) limits.set(field, { maxSignificantDigits, maxDecimalPlaces });
  }
  return limits;
}

function readSchema(file: string): AnySchemaObject {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read schema ${file}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text) as AnySchemaObject;
  } catch (error) {
    throw new Error(`cannot parse schema ${file}: ${(error as Error).message}`, { cause: error });
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

let shared: SpecValidator | undefined;

/** A validator over the package's own schemas, created on first use and then shared (for the CLI). */
export function specValidator(): SpecValidator {
  shared ??= createSpecValidator();
  return shared;
}
