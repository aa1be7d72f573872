/**
 * The OpenAPI 3.1 document of the HTTP API, built at run time from the very JSON Schema objects
 * the record validator compiles (src/spec/validator.ts): what a partner reads is what we check.
 *
 * One transformation, and only one, is applied to those schemas: the service's own validation
 * keywords (src/spec/keywords.ts: `maxSignificantDigits`, `maxDecimalPlaces`) are not JSON Schema
 * keywords, so they appear under their `x-` names (`x-maxSignificantDigits`, `x-maxDecimalPlaces`),
 * which OpenAPI allows as specification extensions and every JSON Schema validator ignores. Each
 * field's description states the same rule in words. `toDocumentSchema` is that transformation.
 * As components the schemas also lose their root `$id` and `$schema` (`asComponent`: the document
 * is one schema resource in its own dialect, which stock tooling compiles whole).
 *
 * The parts: ./openapi/schemas.ts (record schemas, names, helpers), ./openapi/components.ts
 * (errors, answers, parameters), ./openapi/paths.ts (record and service routes),
 * ./openapi/reports.ts (report routes).
 */
import { ENTITIES, VARIANTS } from '../types.js';
import { commonSchemas, componentResponses, listParameters } from './openapi/components.js';
import { erasurePaths, recordPaths, servicePaths } from './openapi/paths.js';
import { reportParameters, reportPaths, reportSchemas } from './openapi/reports.js';
import { asComponent, recordSchemaName, toDocumentSchema, type JsonObject, type SchemaSource } from './openapi/schemas.js';

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
      schemas[recordSchemaName(variant, entity)] = asComponent(toDocumentSchema(source.schema(variant, entity)));
      paths = { ...paths, ...recordPaths(variant, entity) };
    }
  }
  paths = { ...paths, ...reportPaths(), ...erasurePaths() };
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
        '`x-maxDecimalPlaces` are checked by the service too (spec §8) and are spelled out in each field description. ' +
        'One more rule holds for every string of every record (rule noNul): it must not contain U+0000 (NUL), which no store can hold; such a record is refused with 422 like any other invalid one. ' +
        'So is a record with a field given twice in one object (rule duplicateKey) or a string holding bytes that are not UTF-8 (rule encoding); numbers are judged as written, not as a double reads them (1.0000000000000001 has 17 significant digits). ' +
        'Every query parameter is given once: a repeated one is 400 invalid_parameter.',
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
          flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: { read: 'List records and read reports', write: 'Push records', erase: "Erase a customer's personal data" } } },
        },
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The access_token of /oauth/token.' },
        clientBasic: { type: 'http', scheme: 'basic', description: 'client_id and client_secret as HTTP Basic credentials (token endpoint only).' },
      },
    },
  };
}
