/**
 * The building blocks of the OpenAPI document (../openapi.ts): the validator's record schemas as
 * the document holds them (`toDocumentSchema`, the one transformation), their component names,
 * the record paths, `$ref` and JSON content helpers, and an example record per entity.
 */
import { specKeywords } from '../../spec/keywords.js';
import type { Entity, Variant } from '../../types.js';

/** Where the validator's schemas come from (src/spec/validator.ts SpecValidator). */
export interface SchemaSource {
  schema(variant: Variant, entity: Entity): Readonly<Record<string, unknown>>;
}

export type JsonObject = Record<string, unknown>;

/** The names of our custom keywords in the document: `x-` plus the keyword. */
export const EXTENSION_PREFIX = 'x-';
const CUSTOM_KEYWORDS: ReadonlySet<string> = new Set(specKeywords.map((k) => k.keyword as string));

/**
 * A validator schema as the document holds it: a deep copy in which every custom keyword
 * `k` is renamed `x-k`. Nothing else changes.
 */
export function toDocumentSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toDocumentSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    out[CUSTOM_KEYWORDS.has(key) ? EXTENSION_PREFIX + key : key] = toDocumentSchema(value);
  }
  return out;
}

/**
 * A record schema as a component of the document: without its root `$id` and `$schema`. A
 * component with its own `$id` is a separate schema resource inside the document; stock tooling
 * (Prism's ajv among them) then fails to compile the request bodies that `$ref` it, and checks
 * nothing. The dialect is the document's `jsonSchemaDialect` (draft 2020-12) and the schemas hold
 * no reference of their own, so nothing else changes.
 */
export function asComponent(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  return Object.fromEntries(Object.entries(schema).filter(([k]) => k !== '$id' && k !== '$schema'));
}

/** The component name of a (variant, entity) record schema: `IgamingCustomer`, `PropTradingActivity`. */
export function recordSchemaName(variant: Variant, entity: Entity): string {
  const v = variant === 'igaming' ? 'Igaming' : 'PropTrading';
  const e = entity === 'customers' ? 'Customer' : entity === 'transactions' ? 'Transaction' : 'Activity';
  return v + e;
}

export const recordsPath = (variant: Variant, entity: Entity): string => `/api/v1/${variant}/${entity}`;
export const bulkPath = (variant: Variant, entity: Entity): string => `${recordsPath(variant, entity)}/bulk`;

export const ref = (name: string, kind: 'schemas' | 'responses' | 'parameters' = 'schemas') => ({ $ref: `#/components/${kind}/${name}` });
export const json = (schema: unknown) => ({ 'application/json': { schema } });
/** An example record per entity, for the curl examples (valid against the schemas: a test proves it). */
export function exampleRecord(variant: Variant, entity: Entity): JsonObject {
  if (entity === 'customers') {
    return variant === 'igaming'
      ? { customer_id: 'c-1001', signup_date: '2026-11-23T09:30:00Z', affiliate_id: 'aff-7', country_code: 'DE' }
      : { customer_id: 'c-1001', signup_date: '2026-11-23T09:30:00Z', affiliate_id: 'aff-7', phase: 'phase_1' };
  }
  if (entity === 'transactions') {
    return {
      transaction_id: 't-5001',
      customer_id: 'c-1001',
      transaction_type: variant === 'igaming' ? 'deposit' : 'challenge_fee',
      amount_currency: 99.5,
      currency: 'EUR',
      transaction_date: '2026-11-23T09:45:00Z',
      status: 'approved',
    };
  }
  return variant === 'igaming'
    ? { date: '2026-11-22', customer_id: 'c-1001', game_type: 'slots', currency: 'EUR', bets_count: 120, total_bets: 340.5, wins: 300.25, ggr: 40.25, ngr: 35 }
    : { date: '2026-11-22', customer_id: 'c-1001', instrument: 'EURUSD', lots_traded: 3.5, pnl: -120.4, currency: 'USD' };
}
