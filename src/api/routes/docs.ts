/**
 * `GET /openapi.json` (the OpenAPI 3.1 document, src/api/openapi.ts) and `GET /docs` (the same
 * document as a web page, src/api/docs-page.ts). Both public: they describe, they hold no data.
 * The record schemas are the ones the process's own Loader validates with.
 */
import type { FastifyRequest } from 'fastify';
import { specValidator } from '../../spec/validator.js';
import { renderDocsPage } from '../docs-page.js';
import { buildOpenApiDocument } from '../openapi.js';
import type { SchemaSource } from '../openapi/schemas.js';
import type { ApiDeps, RouteModule } from '../types.js';

/** The schema source of the process: the Loader's validator when it can show its schemas, else the shared one. */
function schemaSource(deps: ApiDeps): SchemaSource {
  const validator = deps.loader.validator as Partial<SchemaSource>;
  return typeof validator.schema === 'function' ? (validator as SchemaSource) : specValidator();
}

/** The server URL as the caller reached it (scheme honours X-Forwarded-Proto only behind --trust-proxy). */
const serverUrl = (request: FastifyRequest): string => `${request.protocol}://${request.host}`;

export const docsRoutes: RouteModule = (app, deps) => {
  const source = schemaSource(deps);
  app.get('/openapi.json', async (request, reply) => {
    return reply.type('application/json; charset=utf-8').send(buildOpenApiDocument(source, { serverUrl: serverUrl(request) }));
  });
  app.get('/docs', async (request, reply) => {
    const base = serverUrl(request);
    return reply.type('text/html; charset=utf-8').send(renderDocsPage(buildOpenApiDocument(source, { serverUrl: base }), base));
  });
};
