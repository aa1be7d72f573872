/**
 * `POST /oauth/token`: the OAuth 2.0 client credentials grant (RFC 6749 §4.4, spec §5). The client
 * authenticates with HTTP Basic (RFC 6749 §2.3.1: id and secret form-urlencoded, then base64) or
 * with client_id and client_secret in the form body, never both. The answer is spec §2.6 exactly,
 * `Cache-Control: no-store`; errors are RFC 6749 §5.2 JSON `{error, error_description}`.
 */
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { queryErrorBody } from './query-errors.js';
import type { Store } from '../store/store.js';
import type { Clock } from '../kernel/clock.js';
import { authenticateClient, parseScopes, type Scope } from '../access/api-clients.js';
import { REALM } from './auth.js';
import { issueToken } from './tokens.js';

export const TOKEN_PATH = '/oauth/token';

type OAuthError = 'temporarily_unavailable' | 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type' | 'invalid_scope';

declare module 'fastify' {
  interface FastifyRequest {
    /** The client a token request authenticated as, for the access log. */
    oauthClientId?: string;
  }
}

function oauthError(reply: FastifyReply, status: number, error: OAuthError, description: string, basic = false): FastifyReply {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  if (status === 401 && basic) reply.header('www-authenticate', `Basic realm="${REALM}", charset="UTF-8"`);
  return reply.code(status).send({ error, error_description: description });
}

/** `application/x-www-form-urlencoded` decoding of one Basic credential part (`+` is a space). */
function formDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

type BasicCredentials = { id: string; secret: string } | 'malformed' | undefined;

function basicCredentials(header: string | undefined): BasicCredentials | 'other-scheme' {
  if (header === undefined) return undefined;
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (!match) return /^Basic\b/i.test(header) ? 'malformed' : 'other-scheme';
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  const id = formDecode(decoded.slice(0, colon));
  const secret = formDecode(decoded.slice(colon + 1));
  if (id === undefined || secret === undefined) return 'malformed';
  return { id, secret };
}

export interface OAuthRouteOptions {
  store: Store;
  key: Uint8Array;
  clock: Clock;
  /** Secret verifications (scrypt, ~50 ms of a libuv thread each) at once; more are answered 503 (default 16). */
  maxConcurrentHashes?: number;
}

export const DEFAULT_MAX_CONCURRENT_HASHES = 16;

export async function oauthRoutes(app: FastifyInstance, options: OAuthRouteOptions): Promise<void> {
  const maxHashes = options.maxConcurrentHashes ?? DEFAULT_MAX_CONCURRENT_HASHES;
  let hashing = 0;
  await app.register(async (scope) => {
    // Only form bodies here (RFC 6749 §4.4.2); the API's JSON parser does not apply.
    scope.removeAllContentTypeParsers();
    await scope.register(formbody, { bodyLimit: 16 * 1024 });
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
        return oauthError(reply, 400, 'invalid_request', 'the request must be application/x-www-form-urlencoded (RFC 6749 §4.4.2)');
      }
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return oauthError(reply, 413, 'invalid_request', 'the request body is too large');
      // A query string too is checked by the route's schema: named in the API's words, not ajv's (`querystring/x must be string`).
      if (error.validation && error.validationContext === 'querystring') return oauthError(reply, 400, 'invalid_request', queryErrorBody(error).message);
      if ((error.statusCode ?? 500) < 500) return oauthError(reply, 400, 'invalid_request', error.message);
      throw error;
    });

    scope.post(TOKEN_PATH, async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      const field = (name: string): string | string[] | undefined => {
        const v = Object.prototype.hasOwnProperty.call(body, name) ? body[name] : undefined;
        return typeof v === 'string' || Array.isArray(v) ? (v as string | string[]) : undefined;
      };
      for (const name of ['grant_type', 'client_id', 'client_secret', 'scope']) {
        if (Array.isArray(field(name))) return oauthError(reply, 400, 'invalid_request', `the parameter ${name} is repeated`);
      }
      const grantType = field('grant_type') as string | undefined;
      const bodyId = field('client_id') as string | undefined;
      const bodySecret = field('client_secret') as string | undefined;
      const basic = basicCredentials(request.headers.authorization);
      const usedBasic = basic !== undefined && basic !== 'other-scheme';

      if (basic === 'other-scheme') return oauthError(reply, 400, 'invalid_request', 'client authentication must be HTTP Basic or client_id and client_secret in the body');
      if (basic === 'malformed') return oauthError(reply, 401, 'invalid_client', 'the Basic credentials are malformed', true);
      if (grantType === undefined || grantType === '') return oauthError(reply, 400, 'invalid_request', 'grant_type is missing (use grant_type=client_credentials)', usedBasic);
      if (grantType !== 'client_credentials') return oauthError(reply, 400, 'unsupported_grant_type', `grant_type ${JSON.stringify(grantType)} is not supported; use client_credentials`, usedBasic);

      let id: string;
      let secret: string;
      if (basic !== undefined) {
        if (bodySecret !== undefined) return oauthError(reply, 400, 'invalid_request', 'client credentials in both the Authorization header and the body; use one method', true);
        if (bodyId !== undefined && bodyId !== basic.id) return oauthError(reply, 400, 'invalid_request', 'client_id in the body differs from the Basic credentials', true);
        ({ id, secret } = basic);
      } else {
        if (bodyId === undefined || bodyId === '') return oauthError(reply, 400, 'invalid_request', 'client_id is missing (in the body, or HTTP Basic)');
        if (bodySecret === undefined || bodySecret === '') return oauthError(reply, 400, 'invalid_request', 'client_secret is missing (in the body, or HTTP Basic)');
        id = bodyId;
        secret = bodySecret;
      }

      let requested: Scope[] | undefined;
      const scopeText = field('scope') as string | undefined;
      if (scopeText !== undefined && scopeText.trim() !== '') {
        try {
          requested = parseScopes(scopeText);
        } catch (error) {
          return oauthError(reply, 400, 'invalid_scope', (error as Error).message, usedBasic);
        }
      }

      // Each check costs a slow hash on purpose: a flood of token requests must not queue
      // without bound (and starve the threads the rest of the process shares).
      if (hashing >= maxHashes) {
        reply.header('retry-after', '1');
        return oauthError(reply, 503, 'temporarily_unavailable', 'too many token requests at once; retry in a second', usedBasic);
      }
      hashing++;
      let client;
      try {
        client = await authenticateClient(options.store, id, secret);
      } finally {
        hashing--;
      }
      if (!client) return oauthError(reply, 401, 'invalid_client', 'client authentication failed (unknown client, wrong secret or revoked)', usedBasic);
      request.oauthClientId = client.clientId;
      if (requested && requested.some((s) => !client.scopes.includes(s))) {
        return oauthError(reply, 400, 'invalid_scope', `this client may have only: ${client.scopes.join(' ')}`, usedBasic);
      }
      const issued = await issueToken(options.key, client, options.clock, requested ?? client.scopes);
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      return { access_token: issued.accessToken, token_type: 'Bearer', expires_in: issued.expiresIn, scope: issued.scopes.join(' ') };
    });
  });
}
