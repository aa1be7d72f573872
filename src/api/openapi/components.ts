/**
 * The shared components of the OpenAPI document (../openapi.ts): the error answers and their
 * schemas, the record answers (push result, list envelope), the list and Idempotency-Key
 * parameters, and the security requirement of a record route.
 */
import { BULK_LIMIT } from '../../spec/validator.js';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from '../../push/list.js';
import { RATE_LIMIT_PER_MINUTE } from '../rate-limit.js';
import { json, ref, type JsonObject } from './schemas.js';

/** Page size of list endpoints (spec §4, §8). */
const PER_PAGE_DEFAULT = DEFAULT_PER_PAGE;
const PER_PAGE_MAX = MAX_PER_PAGE;
const ERROR_RESPONSES: Record<string, { description: string; schema: string; headers?: JsonObject }> = {
  BadRequest: { description: 'malformed_json: malformed JSON or an empty body; json_too_deep: JSON nested too deeply; invalid_parameter: a query parameter given more than once (every parameter of every route is given once; errors name it).', schema: 'Error' },
  RepeatedParameter: { description: 'invalid_parameter: a query parameter given more than once (every parameter of every route is given once); errors name it.', schema: 'ParameterError' },
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
  NotFound: { description: 'not_found: the partner has no record of this id (never stored, nor deleted before); nothing is stored.', schema: 'Error' },
  PayloadTooLarge: { description: 'The request body is larger than the server accepts; nothing is parsed or stored.', schema: 'Error' },
  UnsupportedMediaType: { description: 'The Content-Type is not application/json.', schema: 'Error' },
  ValidationFailed: {
    description:
      `validation_failed: the payload fails JSON Schema validation (spec §7, §8), or a bulk request is not an array of 1 to ${BULK_LIMIT} records; every error is listed and nothing of the request is stored. ` +
      'Beyond the schemas, what no store can keep: rule noNul (no string of any field may contain U+0000, NUL), rule yearRange (a date or date-time outside the years 0001-9999 once in UTC) and rule leapSecond (a second 60: a timestamptz has none). ' +
      'What the JSON text hides is judged too: rule duplicateKey (a field given twice in one object), rule encoding (a string holding bytes that are not UTF-8), and numbers as written (maxSignificantDigits and maxDecimalPlaces count the digits sent: 1.0000000000000001 has 17). ' +
      'idempotency_key_reused: the Idempotency-Key was used within 24 hours with another request (checked before the body is validated). invalid_request: a malformed Idempotency-Key.',
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

export function componentResponses(): JsonObject {
  const out: JsonObject = {};
  for (const [name, r] of Object.entries(ERROR_RESPONSES)) {
    out[name] = { description: r.description, ...(r.headers ? { headers: r.headers } : {}), content: json(ref(r.schema)) };
  }
  return out;
}

export function commonSchemas(): JsonObject {
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
    DeleteResult: {
      type: 'object',
      description: 'Sent only after the delete is committed (docs/loading.md, Deletes).',
      required: ['deleted', 'waiting', 'already_deleted', 'request_id'],
      properties: {
        deleted: { type: 'integer', minimum: 0, description: 'Records of the path deleted now: 1, or 0 for a repeat.' },
        waiting: { type: 'integer', minimum: 0, description: 'Records waiting for their customer that the delete discarded (the transaction itself, or what waited for the customer).' },
        already_deleted: { type: 'boolean', description: 'The record was deleted before: the repeat changes nothing.' },
        cascaded: {
          type: 'object',
          description: "A customer's delete: its transactions and activity rows, deleted with it.",
          required: ['transactions', 'activity'],
          properties: { transactions: { type: 'integer', minimum: 0 }, activity: { type: 'integer', minimum: 0 } },
        },
        request_id: { type: 'string' },
      },
    },
    DeleteHeld: {
      type: 'object',
      description: "The mass-delete guard held the delete instead of applying it (docs/loading.md, Deletes): the pushed deletes of the partner's UTC day would pass its share of the partner's customers or of a day's transactions. Nothing is deleted until an operator runs partner-sync deletes apply; the hold is committed.",
      required: ['held', 'hold_id', 'reason', 'request_id'],
      properties: {
        held: { type: 'boolean', const: true },
        hold_id: { type: 'integer', description: 'The hold (partner-sync deletes list).' },
        reason: { type: 'string', description: 'What the guard counted.' },
        request_id: { type: 'string' },
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
    Readiness: {
      type: 'object',
      description: 'Every check by name (api, store, migrations), each with whether it passed and why.',
      required: ['status', 'checks'],
      properties: {
        status: { enum: ['ready', 'not ready'] },
        checks: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            required: ['ok', 'detail'],
            properties: { ok: { type: 'boolean' }, detail: { type: 'string', description: "e.g. 'answered in 3 ms', '18 applied, none pending', 'no answer within 2000 ms'" } },
          },
        },
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

export function listParameters(): JsonObject {
  return {
    page: {
      name: 'page',
      in: 'query',
      description:
        'Page number, from 1: an offset of (page - 1) x per_page in key order. Records inserted (or an activity day replaced) while you walk pages shift the later pages, so a page walk can skip a record or show it twice; walk by cursor instead.',
      schema: { type: 'integer', minimum: 1, default: 1 } },
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

export const SECURED_ERRORS = (write: boolean): JsonObject => ({
  ...(write ? { '400': ref('BadRequest', 'responses') } : {}),
  '401': ref('Unauthorized', 'responses'),
  '403': ref('Forbidden', 'responses'),
  ...(write
    ? { '413': ref('PayloadTooLarge', 'responses'), '415': ref('UnsupportedMediaType', 'responses'), '422': ref('ValidationFailed', 'responses') }
    : { '400': ref('RepeatedParameter', 'responses'), '422': ref('InvalidQuery', 'responses') }),
  '429': ref('TooManyRequests', 'responses'),
});

export const security = (scope: 'read' | 'write' | 'erase') => [{ oauth2: [scope] }, { bearer: [] }];
