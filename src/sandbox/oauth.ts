/**
 * The sandbox's OAuth 2.0 client credentials grant (spec §5, RFC 6749 §4.4): POST /oauth/token
 * with a form body, client authentication by form fields or HTTP Basic, and the Bearer tokens it
 * issues, which expire on the injected clock.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { errorReply, jsonReply, mediaType, methodNotAllowed, type Reply } from './http.js';

export interface SandboxClient {
  client_id: string;
  client_secret: string;
}

/** Demo credentials only: the sandbox is a local test partner. */
export const DEFAULT_CLIENT_ID = 'sandbox-client';
export const DEFAULT_CLIENT_SECRET = 'sandbox-secret';
export const TOKEN_SCOPE = 'read write';

/** The one default client: SANDBOX_CLIENT_ID / SANDBOX_CLIENT_SECRET, else the demo credentials. */
export function defaultClients(env: NodeJS.ProcessEnv = process.env): SandboxClient[] {
  return [{ client_id: env.SANDBOX_CLIENT_ID || DEFAULT_CLIENT_ID, client_secret: env.SANDBOX_CLIENT_SECRET || DEFAULT_CLIENT_SECRET }];
}

export interface IssuedToken {
  /** A name for the token in statistics (`client#n`), never the token itself. */
  label: string;
  clientId: string;
  /** Expiry, ms since the epoch on the sandbox clock. */
  expiresAt: number;
}

export type TokenCheck = { ok: true; token: IssuedToken } | { ok: false; reply: Reply };

export interface TokenRequest {
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface TokenService {
  /** Answers a request to the token endpoint. */
  issue(request: TokenRequest): Reply;
  /** Checks the Authorization header of an API request. */
  verify(authorization: string | undefined): TokenCheck;
  /** Tokens issued so far. */
  issued(): number;
}

export interface TokenServiceOptions {
  clients: readonly SandboxClient[];
  clock: () => Date;
  /** Lifetime of a token issued now, in seconds. */
  ttlSeconds: () => number;
}

const BEARER_REALM = 'Bearer realm="sandbox"';

export function createTokenService(options: TokenServiceOptions): TokenService {
  const signingKey = randomBytes(32);
  const tokens = new Map<string, IssuedToken>();
  let count = 0;

  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  const secretMatches = (client: SandboxClient, secret: string) => timingSafeEqual(digest(client.client_secret), digest(secret));

  function mint(clientId: string, ttl: number): string {
    const now = options.clock().getTime();
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
    const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({
      iss: 'partner-sync-sandbox',
      sub: clientId,
      scope: TOKEN_SCOPE,
      iat: Math.floor(now / 1000),
      exp: Math.floor(now / 1000) + ttl,
      jti: randomBytes(9).toString('base64url'),
    })}`;
    const token = `${head}.${createHmac('sha256', signingKey).update(head).digest('base64url')}`;
    count += 1;
    for (const [t, info] of tokens) if (info.expiresAt <= now) tokens.delete(t);
    tokens.set(token, { label: `${clientId}#${count}`, clientId, expiresAt: now + ttl * 1000 });
    return token;
  }

  return {
    issue(request) {
      if (request.method !== 'POST') return methodNotAllowed(request.method, ['POST']);
      const type = mediaType(request.headers['content-type']);
      if (type !== 'application/x-www-form-urlencoded') {
        const got = type === '' ? 'no Content-Type' : type;
        return errorReply(400, 'invalid_request', `the token request must be application/x-www-form-urlencoded (spec §5), got ${got}`);
      }
      const form = new URLSearchParams(request.body);
      for (const name of new Set(form.keys())) {
        if (form.getAll(name).length > 1) return errorReply(400, 'invalid_request', `parameter ${name} is given more than once`);
      }
      const grant = form.get('grant_type');
      if (grant === null || grant === '') return errorReply(400, 'invalid_request', 'grant_type is required');
      if (grant !== 'client_credentials') {
        return errorReply(400, 'unsupported_grant_type', `grant_type ${JSON.stringify(grant)} is not supported; use client_credentials`);
      }

      const basic = basicCredentials(request.headers.authorization);
      if (basic === 'malformed') return invalidClient('malformed HTTP Basic credentials', true);
      if (basic !== undefined && form.has('client_secret')) {
        return errorReply(400, 'invalid_request', 'use one client authentication method: HTTP Basic or client_secret in the form, not both');
      }
      // Basic credentials should be form-encoded, but many clients send them raw: both are tried.
      const formId = form.get('client_id');
      const formSecret = form.get('client_secret');
      const candidates = basic !== undefined
        ? [basic, { id: formDecode(basic.id), secret: formDecode(basic.secret) }]
        : formId !== null && formSecret !== null ? [{ id: formId, secret: formSecret }] : [];
      if (candidates.length === 0) return invalidClient('client authentication is required (client_id and client_secret)', false);
      if (basic !== undefined && formId !== null && !candidates.some((c) => c.id === formId)) {
        return errorReply(400, 'invalid_request', 'client_id in the form differs from the HTTP Basic client');
      }
      // Compare every client's secret, so the time taken does not tell whether the id exists.
      let found: SandboxClient | undefined;
      for (const client of options.clients) {
        for (const c of candidates) {
          if (secretMatches(client, c.secret) && client.client_id === c.id) found = client;
        }
      }
      if (found === undefined) return invalidClient('unknown client or wrong client secret', basic !== undefined);

      const ttl = options.ttlSeconds();
      return jsonReply(
        200,
        { access_token: mint(found.client_id, ttl), token_type: 'Bearer', expires_in: ttl, scope: TOKEN_SCOPE },
        { 'Cache-Control': 'no-store', Pragma: 'no-cache' },
      );
    },

    verify(authorization) {
      if (authorization === undefined || authorization.trim() === '') {
        return refuse('unauthorized', 'missing Authorization header: send Authorization: Bearer <access_token> (spec §5)');
      }
      const match = /^Bearer +(\S+) *$/i.exec(authorization);
      if (match === null) return refuse('unauthorized', 'the Authorization header must use the Bearer scheme');
      const token = tokens.get(match[1] as string);
      if (token === undefined) return refuse('invalid_token', 'unknown access token');
      const now = options.clock().getTime();
      if (now >= token.expiresAt) {
        return refuse('invalid_token', `access token expired at ${new Date(token.expiresAt).toISOString()}`);
      }
      return { ok: true, token };
    },

    issued: () => count,
  };
}

function refuse(error: string, description: string): TokenCheck {
  const challenge = error === 'invalid_token' ? `${BEARER_REALM}, error="invalid_token"` : BEARER_REALM;
  return { ok: false, reply: errorReply(401, error, description, { headers: { 'WWW-Authenticate': challenge } }) };
}

function invalidClient(description: string, basic: boolean): Reply {
  // RFC 6749 §5.2: a client that authenticated with Basic gets the Basic challenge back.
  return errorReply(401, 'invalid_client', description, basic ? { headers: { 'WWW-Authenticate': 'Basic realm="sandbox"' } } : {});
}

/**
 * The client of an HTTP Basic Authorization header as sent (RFC 6749 §2.3.1 form-urlencodes id and
 * secret before base64), undefined without one.
 */
function basicCredentials(header: string | undefined): { id: string; secret: string } | 'malformed' | undefined {
  if (header === undefined) return undefined;
  const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header);
  if (match === null) return /^Basic\b/i.test(header) ? 'malformed' : undefined;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  return { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

function formDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
