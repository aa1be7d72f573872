/**
 * The OpenAPI document of the HTTP API: built from the validator's own schema objects (the only
 * change: our custom keywords under x- names), valid OpenAPI 3.1 in shape, every $ref resolving,
 * every schema compiling in ajv's 2020-12 mode; and the /docs page rendered from it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { renderDocsPage } from '../../src/api/docs-page.js';
import { asComponent, exampleRecord, recordSchemaName, toDocumentSchema, type JsonObject } from '../../src/api/openapi/schemas.js';
import { buildOpenApiDocument } from '../../src/api/openapi.js';
import { specKeywords } from '../../src/spec/keywords.js';
import { createSpecValidator, defaultSchemaDir } from '../../src/spec/validator.js';
import { ENTITIES, VARIANTS, type Entity, type Variant } from '../../src/types.js';

const validator = createSpecValidator();
const doc = buildOpenApiDocument(validator, { serverUrl: 'https://partner-sync.example.com' });
const schemas = (doc.components as JsonObject).schemas as Record<string, JsonObject>;
const CUSTOM = specKeywords.map((k) => k.keyword as string);

/** The documented transformation undone: x-<custom keyword> back to <custom keyword>. */
function fromDocumentSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(fromDocumentSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [CUSTOM.includes(k.replace(/^x-/, '')) ? k.replace(/^x-/, '') : k, fromDocumentSchema(v)]));
}

function* walk(node: unknown, path = '#'): Generator<[string, JsonObject]> {
  if (node === null || typeof node !== 'object') return;
  yield [path, node as JsonObject];
  for (const [k, v] of Object.entries(node)) yield* walk(v, `${path}/${k}`);
}

function pointer(ref: string): unknown {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((at, key) => (at !== null && typeof at === 'object' ? (at as JsonObject)[key] : undefined), doc);
}

/** A schema with every #/components reference replaced by its target (as dereferencing tools do). */
function inlined(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(inlined);
  if (node === null || typeof node !== 'object') return node;
  const ref = (node as JsonObject).$ref;
  if (typeof ref === 'string') return inlined(pointer(ref));
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inlined(v)]));
}

describe('OpenAPI document', () => {
  it('holds the validator\'s record schemas, equal to them but for the custom keywords renamed x-', () => {
    let renamed = 0;
    for (const variant of VARIANTS) {
      for (const entity of ENTITIES) {
        const original = validator.schema(variant, entity);
        const inDoc = schemas[recordSchemaName(variant, entity)];
        assert.deepEqual(inDoc, asComponent(toDocumentSchema(original)));
        const withoutResource = Object.fromEntries(Object.entries(original).filter(([k]) => k !== '$id' && k !== '$schema'));
        assert.deepEqual(fromDocumentSchema(inDoc), withoutResource);
        // The validator's schema is the shipped file, as read.
        assert.deepEqual(original, JSON.parse(readFileSync(join(defaultSchemaDir(), variant, `${entity}.schema.json`), 'utf8')));
        for (const [, node] of walk(inDoc)) {
          for (const k of CUSTOM) assert.ok(!(k in node), `${variant}/${entity}: ${k} left as a keyword`);
          renamed += Object.keys(node).filter((k) => k.startsWith('x-')).length;
        }
      }
    }
    // Every numeric field carries x-maxSignificantDigits: the renaming did happen.
    assert.ok(renamed >= 15, `only ${renamed} x- keywords`);
    assert.equal(((schemas.IgamingTransaction?.properties as JsonObject).amount_currency as JsonObject)['x-maxDecimalPlaces'], 2);
  });

  it('is OpenAPI 3.1 in shape: required fields, unique operation ids, every $ref resolves, every schema compiles in ajv 2020 mode', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(typeof (doc.info as JsonObject).title, 'string');
    assert.equal(typeof (doc.info as JsonObject).version, 'string');
    assert.deepEqual(doc.servers, [{ url: 'https://partner-sync.example.com', description: 'This server' }]);
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, JsonObject>)) {
      assert.match(path, /^\//);
      for (const [method, op] of Object.entries(item)) {
        const operation = op as JsonObject;
        // The spec's methods, and DELETE as our extension, marked so (docs/api.md).
        assert.ok(['get', 'post'].includes(method) || (method === 'delete' && operation['x-partner-sync-extension'] === true), `${method} ${path}`);
        assert.ok(typeof operation.operationId === 'string' && !ids.has(operation.operationId), `operationId of ${method} ${path}`);
        ids.add(operation.operationId as string);
        assert.ok(Object.keys(operation.responses as JsonObject).length > 0, `responses of ${method} ${path}`);
        for (const requirement of (operation.security ?? []) as JsonObject[]) {
          for (const scheme of Object.keys(requirement)) assert.ok(((doc.components as JsonObject).securitySchemes as JsonObject)[scheme], `scheme ${scheme}`);
        }
      }
    }
    let refs = 0;
    for (const [at, node] of walk(doc)) {
      if (typeof node.$ref !== 'string') continue;
      refs++;
      assert.match(node.$ref, /^#\/components\/(schemas|responses|parameters)\/[A-Za-z_]+$/, at);
      assert.ok(pointer(node.$ref) !== undefined, `${at}: ${node.$ref} does not resolve`);
    }
    assert.ok(refs > 50, `${refs} refs`);

    // Every component schema compiles in 2020-12 mode, strict, with the x- keywords as a known vocabulary.
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    ajvFormats.default(ajv, ['date-time', 'email', 'date']);
    ajv.addVocabulary([...CUSTOM.map((k) => `x-${k}`), 'components']);
    ajv.addSchema({ $id: 'doc', components: { schemas } } as JsonObject, 'doc');
    for (const name of Object.keys(schemas)) {
      const check = ajv.compile({ $ref: `doc#/components/schemas/${name}` });
      assert.equal(typeof check, 'function', name);
    }
    // A partner checking the document's schemas accepts what the service accepts, refuses what it refuses.
    for (const variant of VARIANTS) {
      for (const entity of ENTITIES) {
        const check = ajv.getSchema(`doc#/components/schemas/${recordSchemaName(variant, entity)}`);
        const example = exampleRecord(variant, entity);
        assert.deepEqual(validator.validate(variant, entity, example), [], `${variant}/${entity} example`);
        assert.equal(check?.(example), true, `${variant}/${entity} example in the document's schema`);
        assert.equal(check?.({ ...example, __proto__x: 1 }), false);
      }
    }
  });

  it('compiles whole in stock tooling: every request body in a fresh ajv (2020-12, strict off, as Prism), no nested $id, examples valid', () => {
    for (const [at, node] of walk(schemas)) assert.ok(!('$id' in node) && !('$schema' in node), `${at}: a nested schema resource`);
    // One ajv for the whole document, each body with its references inlined, the way a proxy
    // (Prism) validates every operation: a schema resource ($id) met twice (a record in its single
    // and in its bulk body) fails to compile there.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajvFormats.default(ajv);
    let bodies = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, JsonObject>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const content = (operation.requestBody as JsonObject | undefined)?.content as Record<string, JsonObject> | undefined;
        const schema = content?.['application/json']?.schema as JsonObject | undefined;
        if (!schema) continue;
        const check = ajv.compile(inlined(schema) as JsonObject);
        bodies++;
        const record = /^\/api\/v1\/([a-z-]+)\/([a-z]+)(\/bulk)?$/.exec(path);
        if (!record) continue;
        const example = exampleRecord(record[1] as Variant, record[2] as Entity);
        const body = record[3] ? [example, example] : example;
        assert.equal(check(body), true, `${method} ${path}: ${JSON.stringify(check.errors)}`);
        assert.equal(check(record[3] ? [{ ...example, customer_id: 7 }] : { ...example, customer_id: 7 }), false, `${method} ${path} refuses a wrong type`);
      }
    }
    assert.equal(bodies, 12);
  });

  it('documents the token endpoint, list parameters, bulk limits, errors and security', () => {
    const paths = doc.paths as Record<string, Record<string, JsonObject>>;
    const token = paths['/oauth/token']?.post as JsonObject;
    assert.ok(((token.requestBody as JsonObject).content as JsonObject)['application/x-www-form-urlencoded']);
    assert.deepEqual(Object.keys(token.responses as JsonObject), ['200', '400', '401', '413', '503']);
    assert.deepEqual((schemas.TokenResponse as JsonObject).required, ['access_token', 'token_type', 'expires_in', 'scope']);

    const list = paths['/api/v1/prop-trading/activity']?.get as JsonObject;
    const params = (list.parameters as JsonObject[]).map((p) => pointer(p.$ref as string) as JsonObject);
    assert.deepEqual(params.map((p) => p.name), ['page', 'per_page', 'cursor', 'modified_since']);
    assert.deepEqual(params[1]?.schema, { type: 'integer', minimum: 1, maximum: 500, default: 50 });
    assert.deepEqual((schemas.PageMeta as JsonObject).required, ['total', 'page', 'per_page', 'next_cursor']);

    const bulk = paths['/api/v1/igaming/transactions/bulk']?.post as JsonObject;
    const body = ((bulk.requestBody as JsonObject).content as Record<string, JsonObject>)['application/json']?.schema as JsonObject;
    assert.deepEqual(body, { type: 'array', minItems: 1, maxItems: 1000, items: { $ref: '#/components/schemas/IgamingTransaction' } });
    assert.deepEqual(Object.keys(bulk.responses as JsonObject), ['200', '400', '401', '403', '413', '415', '422', '429']);
    assert.deepEqual(bulk.security, [{ oauth2: ['write'] }, { bearer: [] }]);
    assert.deepEqual(list.security, [{ oauth2: ['read'] }, { bearer: [] }]);

    const responses = (doc.components as JsonObject).responses as Record<string, JsonObject>;
    assert.ok((responses.Unauthorized?.headers as JsonObject)['WWW-Authenticate']);
    assert.ok((responses.TooManyRequests?.headers as JsonObject)['Retry-After']);
    assert.deepEqual(((schemas.ValidationError?.properties as JsonObject).errors as JsonObject).items, {
      type: 'object',
      required: ['index', 'field', 'rule', 'message'],
      properties: (((schemas.ValidationError?.properties as JsonObject).errors as JsonObject).items as JsonObject).properties,
    });
    const flows = (((doc.components as JsonObject).securitySchemes as JsonObject).oauth2 as JsonObject).flows as JsonObject;
    assert.equal((flows.clientCredentials as JsonObject).tokenUrl, '/oauth/token');
  });

  it('documents the DELETE of a customer and of a transaction as our extension, with a 404 and the delete answer', () => {
    const paths = doc.paths as Record<string, Record<string, JsonObject>>;
    const deletes = Object.entries(paths).flatMap(([path, item]) => (item.delete ? [path] : []));
    assert.deepEqual(deletes.sort(), ['/api/v1/igaming/customers/{customer_id}', '/api/v1/igaming/transactions/{transaction_id}', '/api/v1/prop-trading/customers/{customer_id}', '/api/v1/prop-trading/transactions/{transaction_id}']);
    const op = paths['/api/v1/igaming/transactions/{transaction_id}']?.delete as JsonObject;
    assert.equal(op['x-partner-sync-extension'], true);
    assert.ok(['200', '404', '401', '403', '422'].every((s) => s in (op.responses as JsonObject)));
    assert.deepEqual((schemas.DeleteResult as JsonObject).required, ['deleted', 'waiting', 'already_deleted', 'request_id']);
  });

  it('renders a self-contained docs page naming every path, with fields, limits and curl examples', () => {
    const html = renderDocsPage(doc, 'https://partner-sync.example.com');
    for (const path of Object.keys(doc.paths as JsonObject)) assert.ok(html.includes(`<code>${path}</code>`), path);
    assert.doesNotMatch(html, /<script|<link|@import|src=|url\(/i);
    assert.doesNotMatch(html, /href="(?!#|\/openapi\.json)/);
    assert.ok(html.includes('<td><code>amount_currency</code></td><td>number</td><td>yes</td><td>≤ 15 significant digits; ≤ 2 decimal places</td>'));
    assert.ok(html.includes('<td><code>per_page</code></td><td>query</td><td>integer</td><td>no</td><td>≥ 1; ≤ 500; default 50</td>'));
    assert.ok(html.includes('A JSON array of items ≥ 1; items ≤ 1000 IgamingCustomer records'));
    assert.ok(html.includes('curl -s -X POST https://partner-sync.example.com/api/v1/igaming/transactions/bulk'));
  });
});
