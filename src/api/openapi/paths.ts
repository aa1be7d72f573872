/**
 * The paths of the OpenAPI document (../openapi.ts) other than the reports': the record routes of
 * each variant and entity (push one, push bulk, list), the token endpoint and the service routes.
 */
import { BULK_LIMIT } from '../../spec/validator.js';
import type { Entity, Variant } from '../../types.js';
import { SECURED_ERRORS, security } from './components.js';
import { bulkPath, json, recordSchemaName, recordsPath, ref, type JsonObject } from './schemas.js';

/** Every route's query string is checked (src/api/server.ts): a parameter given twice is a 400 on the service routes too. */
const REPEATED = { '400': ref('RepeatedParameter', 'responses') };

const ENTITY_WORD: Record<Entity, string> = { customers: 'customer', transactions: 'transaction', activity: 'daily activity' };
const VARIANT_WORD: Record<Variant, string> = { igaming: 'iGaming', 'prop-trading': 'prop-trading' };
export function recordPaths(variant: Variant, entity: Entity): JsonObject {
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
    ...(entity === 'activity' ? {} : deletePath(variant, entity, tag, word)),
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

/** DELETE of one customer or transaction: our extension of the spec (it has no delete), marked so. */
function deletePath(variant: Variant, entity: 'customers' | 'transactions', tag: string, word: string): JsonObject {
  const param = entity === 'customers' ? 'customer_id' : 'transaction_id';
  return {
    [`${recordsPath(variant, entity)}/{${param}}`]: {
      delete: {
        operationId: `delete-${variant}-${entity}`,
        tags: [tag],
        summary: `Delete one ${word} record (deleted at the source)`,
        description: 'Our extension: the spec has no delete. The record moves to a tombstone and leaves every list and report; the commissions it earned are clawed back, ' +
          (entity === 'customers' ? "and its transactions and activity go with it. " : '') +
          'A repeat answers already_deleted; sending the record again loads it as a new version (docs/loading.md, Deletes). ' +
          "Past the mass-delete guard (more than 5% of the partner's customers, or of a day's transactions, and more than 20 records pushed deleted in one UTC day) the delete is held: 202, applied only by an operator.",
        'x-partner-sync-extension': true,
        security: security('write'),
        parameters: [
          { name: param, in: 'path', required: true, schema: { type: 'string', minLength: 1 } },
          ref('IdempotencyKey', 'parameters'),
        ],
        responses: { '200': { description: 'Committed.', content: json(ref('DeleteResult')) }, '202': { description: 'Held by the mass-delete guard (committed as a hold, nothing deleted).', content: json(ref('DeleteHeld')) }, '404': ref('NotFound', 'responses'), ...SECURED_ERRORS(true) },
      },
    },
  };
}

export function servicePaths(): JsonObject {
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
        summary: 'Liveness: the process serves (it does not look at the store)',
        security: [],
        responses: {
          ...REPEATED,
          '200': { description: 'Alive.', content: json({ type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } }) },
          '503': { description: 'Stopping.', content: json({ type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['stopping'] } } }) },
        },
      },
    },
    '/readyz': {
      get: {
        operationId: 'readiness',
        tags: ['operations'],
        summary: 'Readiness: the store answers within 2 s and its migrations are current',
        security: [],
        responses: {
          ...REPEATED,
          '200': { description: 'Ready: every check passed.', content: json(ref('Readiness')) },
          '503': { description: 'Not ready: the failing checks say why (the store unreachable or slow, migrations pending, stopping).', content: json(ref('Readiness')) },
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        tags: ['operations'],
        summary: 'Prometheus metrics (text exposition format)',
        security: [],
        responses: { ...REPEATED, '200': text('Requests by route and status, latency histogram, records pushed, process metrics.', 'text/plain') },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'openapi',
        tags: ['operations'],
        summary: 'This document',
        security: [],
        responses: { ...REPEATED, '200': { description: 'OpenAPI 3.1 document.', content: json({ type: 'object' }) } },
      },
    },
    '/docs': {
      get: {
        operationId: 'docs',
        tags: ['operations'],
        summary: 'This document as a web page',
        security: [],
        responses: { ...REPEATED, '200': text('Self-contained HTML page.', 'text/html') },
      },
    },
  };
}

/**
 * Our extension beyond the spec: the erasure of one customer's personal data (GDPR art. 17,
 * docs/personal-data.md), by the partner, with the `erase` scope.
 */
export function erasurePaths(): JsonObject {
  const paths: JsonObject = {};
  for (const variant of ['igaming', 'prop-trading'] as const) {
    paths[`/api/v1/${variant}/customers/{customer_id}/erasure`] = {
      post: {
        operationId: `erase-${variant}-customer`,
        tags: [`${variant}/customers`],
        summary: "Erase a customer's personal data (an extension of this service; not in the spec)",
        description: "Sets the customer's email, first_name and last_name to nothing everywhere in the store (the customer row, rejects, waiting records, fraud identity keys and evidence, postback events) in one transaction; the ledger and the reports are unchanged. Later pushes or pulls of the customer keep no personal field. A customer the store does not hold is remembered all the same (found: false). Repeating it is harmless.",
        'x-partner-sync-extension': true,
        security: security('erase'),
        parameters: [{ name: 'customer_id', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 255 } }],
        responses: {
          '200': {
            description: 'Erased (or remembered, when the store did not hold the customer).',
            content: json({
              type: 'object', required: ['customer_id', 'found', 'erased', 'request_id'],
              properties: {
                customer_id: { type: 'string' },
                found: { type: 'boolean', description: 'Whether the store held the customer.' },
                erased: { const: true },
                tables: { type: 'object', additionalProperties: { type: 'integer' }, description: 'Rows touched per table.' },
                request_id: { type: 'string' },
              },
            }),
          },
          '401': ref('Unauthorized', 'responses'),
          '403': ref('Forbidden', 'responses'),
          '429': ref('TooManyRequests', 'responses'),
          ...REPEATED,
        },
      },
    };
  }
  return paths;
}
