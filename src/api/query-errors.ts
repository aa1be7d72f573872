/**
 * The answer to a query string that fails its route's schema (every route has one: ./server.ts),
 * in the words of the API's routes and of the token endpoint alike: each parameter named, a
 * repeated one said to be repeated.
 */
import type { FastifyError } from 'fastify';

/** The answer to a query that fails its route's schema: 400, the parameters named. */
export function queryErrorBody(error: FastifyError): { error: 'invalid_parameter'; message: string; errors: { field: string; rule: string; message: string }[] } {
  const errors = (error.validation ?? []).map((v) => {
    const field = v.instancePath.replace(/^\//, '').split('/')[0] || String((v.params as { missingProperty?: unknown }).missingProperty ?? '(query)');
    const repeated = v.keyword === 'type' && (v.params as { type?: unknown }).type === 'string';
    return repeated
      ? { field, rule: 'repeated', message: `the query parameter ${field} is given more than once; give it once` }
      : { field, rule: v.keyword, message: `the query parameter ${field} ${v.message ?? 'is invalid'}` };
  });
  if (errors.length === 0) errors.push({ field: '(query)', rule: 'schema', message: error.message });
  return { error: 'invalid_parameter', message: errors.map((e) => e.message).join('; '), errors };
}

