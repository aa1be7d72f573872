/**
 * The OpenAPI 3.1 document of the HTTP API, built at run time from the very JSON Schema objects
 * the record validator compiles (src/spec/validator.ts): what a partner reads is what we check.
 *
 * One transformation, and only one, is applied to those schemas: the service's own validation
 * keywords (src/spec/keywords.ts: `maxSignificantDigits`, `maxDecimalPlaces`) are not JSON Schema
 * keywords, so they appear under their `x-` names (`x-maxSignificantDigits`, `x-maxDecimalPlaces`),
 * which OpenAPI allows as specification extensions and every JSON Schema validator ignores. Each
 * field's description states the same rule in words. `toDocumentSchema` is that transformation.
 */
import { BULK_LIMIT } from '../spec/validator.js';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from '../push/list.js';
import { RATE_LIMIT_PER_MINUTE } from './rate-limit.js';
import { REPORT_COLUMNS } from '../reports/affiliates.js';
import { FUNNEL_GROUPS } from '../reports/funnel.js';
import { specKeywords } from '../spec/keywords.js';
import { ENTITIES, VARIANTS, type Entity, type Variant } from '../types.js';

/** Where the validator's schemas come from (src/spec/validator.ts SpecValidator). */
export interface SchemaSource {
  schema(variant: Variant, entity: Entity): Readonly<Record<string, unknown>>;
}

export type JsonObject = Record<string, unknown>;

/** Page size of list endpoints (spec §4, §8). */
const PER_PAGE_DEFAULT = DEFAULT_PER_PAGE;
const PER_PAGE_MAX = MAX_PER_PAGE;

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

/** The component name of a (variant, entity) record schema: `IgamingCustomer`, `PropTradingActivity`. */
export function recordSchemaName(variant: Variant, entity: Entity): string {
  const v = variant === 'igaming' ? 'Igaming' : 'PropTrading';
  const e = entity === 'customers' ? 'Customer' : entity === 'transactions' ? 'Transaction' : 'Activity';
  return v + e;
}

export const recordsPath = (variant: Variant, entity: Entity): string => `/api/v1/${variant}/${entity}`;
export const bulkPath = (variant: Variant, entity: Entity): string => `${recordsPath(variant, entity)}/bulk`;

const ref = (name: string, kind: 'schemas' | 'responses' | 'parameters' = 'schemas') => ({ $ref: `#/components/${kind}/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });

const ENTITY_WORD: Record<Entity, string> = { customers: 'customer', transactions: 'transaction', activity: 'daily activity' };
const VARIANT_WORD: Record<Variant, string> = { igaming: 'iGaming', 'prop-trading': 'prop-trading' };

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

const ERROR_RESPONSES: Record<string, { description: string; schema: string; headers?: JsonObject }> = {
  BadRequest: { description: 'Malformed JSON, an empty body, or JSON nested too deeply.', schema: 'Error' },
  Unauthorized: {
    description: 'invalid_token: a missing, malformed, forged, expired or revoked bearer token (spec §5, §7).',
    schema: 'Error',
    headers: {
      'WWW-Authenticate': {
        description: 'Bearer error="invalid_token" for a token that is refused; Bearer realm="partner-sync" when there is none (RFC 6750 §3).',
        schema: { type: 'string' },
        required: true,
      },
    },
  },
  Forbidden: {
    description: "wrong_variant: the token's partner is of the other variant; insufficient_scope: the token lacks the route's scope (read for GET, write for POST).",
    schema: 'Error',
  },
  PayloadTooLarge: { description: 'The request body is larger than the server accepts; nothing is parsed or stored.', schema: 'Error' },
  UnsupportedMediaType: { description: 'The Content-Type is not application/json.', schema: 'Error' },
  ValidationFailed: {
    description:
      `validation_failed: the payload fails JSON Schema validation (spec §7, §8), or a bulk request is not an array of 1 to ${BULK_LIMIT} records; every error is listed and nothing of the request is stored. ` +
      'idempotency_key_reused: the Idempotency-Key was used within 24 hours with another request. invalid_request: a malformed Idempotency-Key.',
    schema: 'ValidationError',
  },
  InvalidQuery: {
    description: 'A query parameter is invalid (per_page outside 1..500, page not a positive integer, an unknown cursor, modified_since not a date-time); errors name the parameter.',
    schema: 'ParameterError',
  },
  TooManyRequests: {
    description: `More than ${RATE_LIMIT_PER_MINUTE} requests in a rolling minute with this token (spec §8).`,
    schema: 'Error',
    headers: { 'Retry-After': { description: 'Seconds to wait before the next request.', schema: { type: 'integer', minimum: 0 }, required: true } },
  },
};

function componentResponses(): JsonObject {
  const out: JsonObject = {};
  for (const [name, r] of Object.entries(ERROR_RESPONSES)) {
    out[name] = { description: r.description, ...(r.headers ? { headers: r.headers } : {}), content: json(ref(r.schema)) };
  }
  return out;
}

function commonSchemas(): JsonObject {
  return {
    Error: {
      type: 'object',
      description: 'An error: a machine-readable code and a sentence for people.',
      required: ['error', 'message'],
      properties: { error: { type: 'string' }, message: { type: 'string' } },
    },
    ValidationError: {
      type: 'object',
      required: ['error', 'message', 'errors'],
      properties: {
        error: { enum: ['validation_failed', 'idempotency_key_reused', 'invalid_request'] },
        message: { type: 'string' },
        errors: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            required: ['index', 'field', 'rule', 'message'],
            properties: {
              index: { type: 'integer', minimum: 0, description: 'Position of the record in the request (0 for a single record).' },
              field: { type: 'string', description: 'The field, or (record) / (payload) for rules of the whole record or request.' },
              rule: { type: 'string', description: 'The JSON Schema keyword or spec rule that failed (required, type, maxLength, maxItems, ...).' },
              message: { type: 'string' },
            },
          },
        },
      },
    },
    ParameterError: {
      type: 'object',
      required: ['error', 'message', 'errors'],
      properties: {
        error: { const: 'invalid_parameter' },
        message: { type: 'string' },
        errors: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            required: ['field', 'rule', 'message'],
            properties: { field: { type: 'string', description: 'The query parameter.' }, rule: { type: 'string' }, message: { type: 'string' } },
          },
        },
      },
    },
    PushResult: {
      type: 'object',
      description: 'Sent only after the records are committed.',
      required: ['accepted', 'loaded', 'waiting', 'request_id'],
      properties: {
        accepted: { type: 'integer', minimum: 0, description: 'Records of the request (all valid): loaded + waiting + stale (a record older than the stored version of its key is accepted, not applied).' },
        loaded: { type: 'integer', minimum: 0, description: 'Records written to the store.' },
        waiting: { type: 'integer', minimum: 0, description: 'Records parked until their customer arrives (loaded then).' },
        request_id: { type: 'string' },
      },
    },
    TokenRequest: {
      type: 'object',
      required: ['grant_type'],
      properties: {
        grant_type: { const: 'client_credentials' },
        client_id: { type: 'string', description: 'Here or in HTTP Basic (RFC 6749 §2.3.1).' },
        client_secret: { type: 'string', description: 'Here or in HTTP Basic (RFC 6749 §2.3.1).' },
        scope: { type: 'string', description: 'Space-separated subset of the client\'s scopes (read, write); all of them when omitted.' },
      },
    },
    TokenResponse: {
      type: 'object',
      description: 'Spec §2.6.',
      required: ['access_token', 'token_type', 'expires_in', 'scope'],
      properties: {
        access_token: { type: 'string', description: 'A signed JWT naming partner, variant, scopes and expiry.' },
        token_type: { const: 'Bearer' },
        expires_in: { const: 3600, description: 'Lifetime in seconds.' },
        scope: { type: 'string', description: 'Granted scopes, space-separated: read, write or both.' },
      },
    },
    OAuthError: {
      type: 'object',
      description: 'RFC 6749 §5.2.',
      required: ['error'],
      properties: {
        error: {
          enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'temporarily_unavailable'],
        },
        error_description: { type: 'string' },
      },
    },
    PageMeta: {
      type: 'object',
      description: 'Pagination metadata (spec §2.5).',
      required: ['total', 'page', 'per_page', 'next_cursor'],
      properties: {
        total: { type: 'integer', minimum: 0, description: 'Total number of records.' },
        page: { type: 'integer', minimum: 1, description: 'Current page.' },
        per_page: { type: 'integer', minimum: 1, maximum: PER_PAGE_MAX, description: 'Page size.' },
        next_cursor: { type: ['string', 'null'], description: 'Opaque cursor for the next page (pass it as `cursor`); null on the last page.' },
      },
    },
  };
}

function listParameters(): JsonObject {
  return {
    page: { name: 'page', in: 'query', description: 'Page number, from 1.', schema: { type: 'integer', minimum: 1, default: 1 } },
    per_page: {
      name: 'per_page',
      in: 'query',
      description: `Page size (spec §4, §8): default ${PER_PAGE_DEFAULT}, at most ${PER_PAGE_MAX}.`,
      schema: { type: 'integer', minimum: 1, maximum: PER_PAGE_MAX, default: PER_PAGE_DEFAULT },
    },
    cursor: {
      name: 'cursor',
      in: 'query',
      description: 'The next_cursor of the previous page (opaque); recommended over page for large sets: a walk by cursor sees every record exactly once. With cursor, page is ignored.',
      schema: { type: 'string' },
    },
    modified_since: {
      name: 'modified_since',
      in: 'query',
      description:
        'Customers whose last_modified_date is at or after this instant; transactions and activity stored or last replaced at or after it (RFC 3339 date-time with a zone).',
      schema: { type: 'string', format: 'date-time' },
    },
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      description: 'A repeat of the same key within 24 hours returns the first answer and writes nothing.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    },
  };
}

const SECURED_ERRORS = (write: boolean): JsonObject => ({
  ...(write ? { '400': ref('BadRequest', 'responses') } : {}),
  '401': ref('Unauthorized', 'responses'),
  '403': ref('Forbidden', 'responses'),
  ...(write
    ? { '413': ref('PayloadTooLarge', 'responses'), '415': ref('UnsupportedMediaType', 'responses'), '422': ref('ValidationFailed', 'responses') }
    : { '422': ref('InvalidQuery', 'responses') }),
  '429': ref('TooManyRequests', 'responses'),
});

const security = (scope: 'read' | 'write') => [{ oauth2: [scope] }, { bearer: [] }];

function recordPaths(variant: Variant, entity: Entity): JsonObject {
  const name = recordSchemaName(variant, entity);
  const word = `${VARIANT_WORD[variant]} ${ENTITY_WORD[entity]}`;
  const tag = `${variant}/${entity}`;
  const ok = { description: 'Committed.', content: json(ref('PushResult')) };
  return {
    [recordsPath(variant, entity)]: {
      get: {
        operationId: `list-${variant}-${entity}`,
        tags: [tag],
        summary: `List the partner's own ${word} records`,
        security: security('read'),
        parameters: ['page', 'per_page', 'cursor', 'modified_since'].map((p) => ref(p, 'parameters')),
        responses: {
          '200': {
            description: 'A page of records (spec §2.5 envelope).',
            content: json({ type: 'object', required: ['data', 'meta'], properties: { data: { type: 'array', items: ref(name) }, meta: ref('PageMeta') } }),
          },
          ...SECURED_ERRORS(false),
        },
      },
      post: {
        operationId: `push-${variant}-${entity}`,
        tags: [tag],
        summary: `Push one ${word} record`,
        description: 'The record is validated, loaded and committed before the answer. A record whose customer has not arrived waits and is loaded when it does.',
        security: security('write'),
        parameters: [ref('IdempotencyKey', 'parameters')],
        requestBody: { required: true, content: json(ref(name)) },
        responses: { '200': ok, ...SECURED_ERRORS(true) },
      },
    },
    [bulkPath(variant, entity)]: {
      post: {
        operationId: `push-bulk-${variant}-${entity}`,
        tags: [tag],
        summary: `Push 1 to ${BULK_LIMIT} ${word} records`,
        description: `All or nothing: if any record is invalid, the answer is 422 listing every error and nothing is stored. More than ${BULK_LIMIT} records: 422 (spec §8).`,
        security: security('write'),
        parameters: [ref('IdempotencyKey', 'parameters')],
        requestBody: { required: true, content: json({ type: 'array', minItems: 1, maxItems: BULK_LIMIT, items: ref(name) }) },
        responses: { '200': ok, ...SECURED_ERRORS(true) },
      },
    },
  };
}

function servicePaths(): JsonObject {
  const text = (description: string, type: string) => ({ description, content: { [type]: { schema: { type: 'string' } } } });
  return {
    '/oauth/token': {
      post: {
        operationId: 'token',
        tags: ['authentication'],
        summary: 'Get an access token (OAuth 2.0 client credentials, spec §5)',
        description: 'Client credentials in the form body or in HTTP Basic (RFC 6749 §2.3.1). The token is valid for 3600 seconds.',
        security: [{}, { clientBasic: [] }],
        requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: ref('TokenRequest') } } },
        responses: {
          '200': { description: 'Token response (spec §2.6).', content: json(ref('TokenResponse')) },
          '400': {
            description: 'invalid_request (also for a body that is not application/x-www-form-urlencoded) or unsupported_grant_type (RFC 6749 §5.2).',
            content: json(ref('OAuthError')),
          },
          '401': {
            description: 'invalid_client: unknown client, wrong secret or revoked client (RFC 6749 §5.2).',
            headers: { 'WWW-Authenticate': { description: 'Basic, when the client authenticated with HTTP Basic.', schema: { type: 'string' } } },
            content: json(ref('OAuthError')),
          },
          '413': { description: 'invalid_request: the form body is too large.', content: json(ref('OAuthError')) },
          '503': {
            description: 'temporarily_unavailable: too many secret checks under way at once; retry after the given seconds.',
            headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer', minimum: 0 }, required: true } },
            content: json(ref('OAuthError')),
          },
        },
      },
    },
    '/healthz': {
      get: {
        operationId: 'health',
        tags: ['operations'],
        summary: 'Health check',
        security: [],
        responses: {
          '200': { description: 'Serving.', content: json({ type: 'object', required: ['status'], properties: { status: { type: 'string' } } }) },
          '503': { description: 'Not serving (starting, stopping, or the store is unreachable).', content: json({ type: 'object', properties: { status: { type: 'string' } } }) },
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        tags: ['operations'],
        summary: 'Prometheus metrics (text exposition format)',
        security: [],
        responses: { '200': text('Requests by route and status, latency histogram, records pushed, process metrics.', 'text/plain') },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'openapi',
        tags: ['operations'],
        summary: 'This document',
        security: [],
        responses: { '200': { description: 'OpenAPI 3.1 document.', content: json({ type: 'object' }) } },
      },
    },
    '/docs': {
      get: {
        operationId: 'docs',
        tags: ['operations'],
        summary: 'This document as a web page',
        security: [],
        responses: { '200': text('Self-contained HTML page.', 'text/html') },
      },
    },
  };
}

/** Query parameters of the report routes (docs/reports.md). */
function reportParameters(): JsonObject {
  const day = (name: string, description: string) => ({ name, in: 'query', description, schema: { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } });
  return {
    ReportFrom: day('from', 'First UTC day of the period, YYYY-MM-DD (inclusive).'),
    ReportTo: day('to', 'Last UTC day of the period, YYYY-MM-DD (inclusive); not before from.'),
    ReportAffiliate: {
      name: 'affiliate',
      in: 'query',
      description: 'Only this affiliate. A credential made for one affiliate sees only its own rows whether or not this is given; naming another affiliate is 403.',
      schema: { type: 'string' },
    },
    ReportCampaign: { name: 'campaign', in: 'query', description: 'Only this campaign.', schema: { type: 'string' } },
    ReportFormat: {
      name: 'format',
      in: 'query',
      description: 'json (default) or csv. Without it, `Accept: text/csv` also selects CSV.',
      schema: { type: 'string', enum: ['json', 'csv'], default: 'json' },
    },
  };
}

function reportSchemas(): JsonObject {
  const money = { type: 'string', pattern: '^-?\\d+\\.\\d{2}$', description: 'USD amount, exact decimal as a string.' };
  const nullableMoney = { type: ['string', 'null'], description: 'USD amount as a string; null when no commission plan applies.' };
  const count = { type: 'integer', minimum: 0 };
  const filter = {
    type: 'object',
    description: 'The filter the report was computed for: the caller\'s partner and the parameters given.',
    required: ['partner'],
    properties: { partner: { type: 'string' }, affiliate: { type: 'string' }, campaign: { type: 'string' }, from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' }, by: { type: 'string' } },
  };
  return {
    AffiliateReportRow: {
      type: 'object',
      description: 'One row of the affiliate report: one affiliate and one day, month or campaign. Money in USD as exact decimal strings.',
      required: ['partner', 'affiliate', 'registrations', 'ftd_count', 'ftd_usd', 'depositors', 'deposit_count', 'deposits_usd'],
      properties: {
        partner: { type: 'string' },
        affiliate: { type: 'string' },
        day: { type: 'string', format: 'date', description: 'With by=day.' },
        month: { type: 'string', pattern: '^\\d{4}-\\d{2}$', description: 'With by=month.' },
        campaign: { type: ['string', 'null'], description: 'With by=campaign.' },
        registrations: count,
        ftd_count: count,
        ftd_usd: money,
        depositors: count,
        deposit_count: count,
        deposits_usd: money,
        withdrawals_usd: money,
        bonuses_usd: money,
        net_deposits_usd: money,
        bets_usd: money,
        ggr_usd: money,
        ngr_usd: money,
        challenge_purchases: count,
        challenge_purchases_by_product: {
          type: 'array',
          items: {
            type: 'object',
            required: ['challenge_type', 'account_size', 'purchases', 'fees_usd'],
            properties: { challenge_type: { type: ['string', 'null'] }, account_size: { type: ['string', 'null'] }, purchases: count, fees_usd: money },
          },
        },
        challenge_fees_usd: money,
        reset_fees_usd: money,
        refunds_usd: money,
        payouts_usd: money,
        unconverted: count,
        commissions_earned_usd: nullableMoney,
        commissions_clawed_back_usd: nullableMoney,
        commissions_net_usd: nullableMoney,
        commissions_held: { type: ['integer', 'null'], minimum: 0 },
      },
    },
    AffiliateReport: {
      type: 'object',
      required: ['filter', 'rows'],
      properties: { filter, rows: { type: 'array', items: ref('AffiliateReportRow') } },
    },
    ReportExplanation: {
      type: 'object',
      description: 'The stored records behind one cell of the affiliate report, and their total (the cell\'s value). No names, e-mail addresses or click ids.',
      required: ['column', 'cell', 'total', 'records'],
      properties: {
        column: { type: 'string', enum: [...REPORT_COLUMNS] },
        cell: {
          type: 'object',
          required: ['affiliate', 'from', 'to'],
          properties: { partner: { type: 'string' }, affiliate: { type: 'string' }, campaign: { type: 'string' }, from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' } },
        },
        total: { oneOf: [{ type: 'number' }, { type: 'string' }], description: 'A count (number) or a USD amount (string).' },
        records: { type: 'array', items: { type: 'object', additionalProperties: true } },
      },
    },
    FunnelRow: {
      type: 'object',
      description: 'Prop-trading customers by phase reached, failures by phase, conversion rates (null when nobody reached the earlier phase) and median days between phases.',
      required: ['signups', 'phase_1', 'phase_2', 'funded', 'failed', 'conversion', 'median_days'],
      properties: {
        group: { type: ['string', 'null'], description: 'The group\'s value, with by.' },
        signups: count,
        phase_1: count,
        phase_2: count,
        funded: count,
        failed: { type: 'object', required: ['phase_1', 'phase_2', 'funded', 'unknown'], properties: { phase_1: count, phase_2: count, funded: count, unknown: count } },
        conversion: {
          type: 'object',
          required: ['signup_phase_1', 'phase_1_phase_2', 'phase_2_funded', 'overall'],
          properties: Object.fromEntries(['signup_phase_1', 'phase_1_phase_2', 'phase_2_funded', 'overall'].map((k) => [k, { type: ['number', 'null'] }])),
        },
        median_days: {
          type: 'object',
          required: ['signup_phase_1', 'phase_1_phase_2', 'phase_2_funded'],
          properties: Object.fromEntries(['signup_phase_1', 'phase_1_phase_2', 'phase_2_funded'].map((k) => [k, { type: ['number', 'null'] }])),
        },
      },
    },
    FunnelReport: {
      type: 'object',
      required: ['filter', 'rows'],
      properties: { filter, rows: { type: 'array', items: ref('FunnelRow') } },
    },
  };
}

function reportPaths(): JsonObject {
  const p = (name: string) => ref(name, 'parameters');
  const errors = {
    '400': { description: 'bad_request: a parameter is malformed (a day not YYYY-MM-DD, from after to, an unknown by, column or format); the message names it.', content: json(ref('Error')) },
    '401': ref('Unauthorized', 'responses'),
    '403': {
      description: "insufficient_scope: the token lacks read; forbidden: an affiliate's credential asked for another affiliate.",
      content: json(ref('Error')),
    },
    '429': ref('TooManyRequests', 'responses'),
  };
  const csvOrJson = (schema: string, what: string) => ({
    description: `${what}: JSON, or CSV (format=csv or Accept: text/csv) with a header line and one line per row.`,
    content: { ...json(ref(schema)), 'text/csv': { schema: { type: 'string' } } },
  });
  const auth = 'Read scope. Only the rows of the token\'s partner; a credential made for one affiliate sees only that affiliate\'s rows.';
  return {
    '/api/v1/reports/affiliates': {
      get: {
        operationId: 'report-affiliates',
        tags: ['reports'],
        summary: 'Affiliate report: registrations, FTDs, deposits, revenue and commissions per affiliate and day, month or campaign',
        description: auth,
        security: security('read'),
        parameters: [
          p('ReportFrom'),
          p('ReportTo'),
          { name: 'by', in: 'query', description: 'Row grain.', schema: { type: 'string', enum: ['month', 'day', 'campaign'], default: 'month' } },
          p('ReportAffiliate'),
          p('ReportCampaign'),
          p('ReportFormat'),
        ],
        responses: { '200': csvOrJson('AffiliateReport', 'The report'), ...errors },
      },
    },
    '/api/v1/reports/affiliates/explain': {
      get: {
        operationId: 'report-affiliates-explain',
        tags: ['reports'],
        summary: 'The stored records behind one cell of the affiliate report',
        description: `${auth} Name the cell's period with day, month, or from and to.`,
        security: security('read'),
        parameters: [
          { name: 'column', in: 'query', required: true, description: 'The report column of the cell.', schema: { type: 'string', enum: [...REPORT_COLUMNS] } },
          { ...(reportParameters().ReportAffiliate as JsonObject), description: 'The affiliate of the cell: required, except with a credential made for one affiliate (its own then; another one is 403).' },
          { name: 'day', in: 'query', description: 'The cell is this UTC day (YYYY-MM-DD).', schema: { type: 'string', format: 'date' } },
          { name: 'month', in: 'query', description: 'The cell is this month (YYYY-MM).', schema: { type: 'string', pattern: '^\\d{4}-\\d{2}$' } },
          p('ReportFrom'),
          p('ReportTo'),
          p('ReportCampaign'),
        ],
        responses: { '200': { description: 'The records and their total.', content: json(ref('ReportExplanation')) }, ...errors },
      },
    },
    '/api/v1/reports/funnel': {
      get: {
        operationId: 'report-funnel',
        tags: ['reports'],
        summary: 'Prop-trading funnel: signups, phases reached, failures, conversion and median days',
        description: `${auth} Customers who signed up in the period (from, to).`,
        security: security('read'),
        parameters: [
          { name: 'by', in: 'query', description: 'Group rows by this; one total row without it.', schema: { type: 'string', enum: [...FUNNEL_GROUPS] } },
          p('ReportFrom'),
          p('ReportTo'),
          p('ReportAffiliate'),
          p('ReportFormat'),
        ],
        responses: { '200': csvOrJson('FunnelReport', 'The funnel'), ...errors },
      },
    },
  };
}

export interface OpenApiOptions {
  /** The server URL the document names (e.g. https://partner-sync.example.com); '/' when unknown. */
  serverUrl?: string;
  version?: string;
}

/** The OpenAPI 3.1 document of every route of the API. */
export function buildOpenApiDocument(source: SchemaSource, options: OpenApiOptions = {}): JsonObject {
  const schemas: JsonObject = { ...commonSchemas(), ...reportSchemas() };
  let paths: JsonObject = servicePaths();
  for (const variant of VARIANTS) {
    for (const entity of ENTITIES) {
      schemas[recordSchemaName(variant, entity)] = toDocumentSchema(source.schema(variant, entity));
      paths = { ...paths, ...recordPaths(variant, entity) };
    }
  }
  paths = { ...paths, ...reportPaths() };
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'partner-sync API',
      version: options.version ?? '1',
      description:
        'Partners push customers, transactions and daily activity (spec §2), list what they pushed, and read their affiliate and funnel reports (JSON or CSV). ' +
        'Get a token from /oauth/token with your client credentials, then send it as `Authorization: Bearer <token>`. ' +
        'Record schemas are the ones the service validates with; the keywords `x-maxSignificantDigits` and ' +
        '`x-maxDecimalPlaces` are checked by the service too (spec §8) and are spelled out in each field description.',
    },
    servers: [{ url: options.serverUrl ?? '/', description: 'This server' }],
    tags: [
      { name: 'authentication' },
      ...VARIANTS.flatMap((v) => ENTITIES.map((e) => ({ name: `${v}/${e}` }))),
      { name: 'reports' },
      { name: 'operations' },
    ],
    security: [{ oauth2: [] }, { bearer: [] }],
    paths,
    components: {
      schemas,
      responses: componentResponses(),
      parameters: { ...listParameters(), ...reportParameters() },
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'OAuth 2.0 client credentials (spec §5): tokens last 3600 seconds; rate limit 1000 requests per minute per token.',
          flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: { read: 'List records and read reports', write: 'Push records' } } },
        },
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The access_token of /oauth/token.' },
        clientBasic: { type: 'http', scheme: 'basic', description: 'client_id and client_secret as HTTP Basic credentials (token endpoint only).' },
      },
    },
  };
}
