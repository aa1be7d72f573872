/**
 * Bearer-token authentication of the API's routes (RFC 6750). `requireToken(scope)` is the
 * pre-handler every protected route lists: it verifies the token (signature, issuer, expiry by the
 * injected clock), refuses a revoked client's tokens (the store is asked at most once per client
 * per `revocationCacheMs`, so a revocation reaches every process sharing the store within that
 * time), counts the request against the token's rate limit, checks the scope, and sets
 * `request.principal`. `requireVariant()` then refuses a token of the other variant on a
 * `/api/v1/{variant}/...` path. Answers: 401 `{error:"invalid_token"}` with WWW-Authenticate,
 * 403 `{error:"insufficient_scope" | "wrong_variant"}`, 429 with Retry-After.
 * They work as `onRequest` hooks (preferred: the caller is refused before its body is read and
 * parsed) or as `preHandler` hooks:
 *   app.post('/api/v1/:variant/customers', { onRequest: requirePartnerAccess('write') }, handler)
 */
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Store } from '../store/store.js';
import type { Clock } from '../kernel/clock.js';
import { isVariant, type Variant } from '../types.js';
import { clientRevoked, DEFAULT_REVOCATION_CACHE_MS, type Scope } from '../access/api-clients.js';
import type { RateLimiter } from './rate-limit.js';
import { InvalidTokenError, verifyToken, type VerifiedToken } from './tokens.js';

export const REALM = 'partner-sync';
/** Verified tokens remembered at most (about 1 KB each); the memory is emptied when full. */
const VERIFIED_CACHE_SIZE = 10_000;

export interface AuthenticatorOptions {
  store: Store;
  key: Uint8Array;
  clock: Clock;
  limiter: RateLimiter;
  revocationCacheMs?: number;
}

interface CachedRevocation {
  revoked: Promise<boolean>;
  until: number;
}

/** Verifies bearer tokens; one per app (decorated as `app.apiAuth`). */
export class Authenticator {
  private readonly revocations = new Map<string, CachedRevocation>();
  /** Tokens whose signature was verified, by their text. */
  private readonly verified = new Map<string, VerifiedToken>();
  private readonly cacheMs: number;

  constructor(private readonly options: AuthenticatorOptions) {
    this.cacheMs = options.revocationCacheMs ?? DEFAULT_REVOCATION_CACHE_MS;
  }

  get limiter(): RateLimiter {
    return this.options.limiter;
  }

  /**
   * The verified token of an `Authorization: Bearer` header; InvalidTokenError otherwise. A token
   * seen before skips the signature check (the same string verified once), never the expiry check
   * nor the revocation check.
   */
  async authenticate(token: string): Promise<VerifiedToken> {
    let verified = this.verified.get(token);
    if (verified) {
      if (verified.expiresAt <= Math.floor(this.options.clock().getTime() / 1000)) throw new InvalidTokenError('the access token has expired');
    } else {
      verified = await verifyToken(this.options.key, token, this.options.clock);
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.clear();
      this.verified.set(token, verified);
    }
    if (await this.revoked(verified.clientId)) throw new InvalidTokenError('the access token was revoked');
    return verified;
  }

  private revoked(clientId: string): Promise<boolean> {
    const now = performance.now();
    const cached = this.revocations.get(clientId);
    if (cached && cached.until > now) return cached.revoked;
    const revoked = clientRevoked(this.options.store, clientId);
    // A failed look is not cached: the next request asks again.
    revoked.catch(() => this.revocations.delete(clientId));
    this.revocations.set(clientId, { revoked, until: now + this.cacheMs });
    if (this.revocations.size > 10_000) this.prune(now);
    return revoked;
  }

  private prune(now: number): void {
    for (const [id, entry] of this.revocations) if (entry.until <= now) this.revocations.delete(id);
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Set by buildApi: verifies tokens for requireToken. */
    apiAuth: Authenticator;
  }
}

/** The token of `Authorization: Bearer <token>`; undefined when the header is absent; '' when it is not a Bearer header. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  return match?.[1] ?? '';
}

function invalidToken(reply: FastifyReply, message: string, missing = false): FastifyReply {
  // RFC 6750 §3: a request without credentials gets the challenge without an error code.
  reply.header('www-authenticate', missing ? `Bearer realm="${REALM}"` : 'Bearer error="invalid_token"');
  return reply.code(401).send({ error: 'invalid_token', message });
}

export function forbidden(reply: FastifyReply, error: 'insufficient_scope' | 'wrong_variant' | 'forbidden', message: string, scope?: Scope): FastifyReply {
  if (error === 'insufficient_scope') reply.header('www-authenticate', `Bearer error="insufficient_scope", scope="${scope ?? ''}"`);
  return reply.code(403).send({ error, message });
}

/** Pre-handler: a valid, unrevoked, unexpired token with `scope`, within its rate limit; sets request.principal. */
export function requireToken(scope: Scope): preHandlerAsyncHookHandler {
  return async function requireTokenHandler(request: FastifyRequest, reply: FastifyReply) {
    return checkToken(request, reply, scope);
  };
}

/** Any valid token, counted against its rate limit (paths under /api/ that are not routes: 401 before 404). */
export const requireAnyToken: preHandlerAsyncHookHandler = async function requireAnyTokenHandler(request, reply) {
  return checkToken(request, reply, undefined);
};

async function checkToken(request: FastifyRequest, reply: FastifyReply, scope: Scope | undefined): Promise<FastifyReply | undefined> {
  const token = bearerToken(request.headers.authorization);
  if (token === undefined) return invalidToken(reply, 'no access token: send the header Authorization: Bearer <access_token> (POST /oauth/token gives one)', true);
  if (token === '') return invalidToken(reply, 'the Authorization header is not a Bearer token');
  const auth = request.server.apiAuth;
  let verified: VerifiedToken;
  try {
    verified = await auth.authenticate(token);
  } catch (error) {
    if (error instanceof InvalidTokenError) return invalidToken(reply, error.message);
    throw error;
  }
  const { tokenId } = verified;
  request.principal = { clientId: verified.clientId, partner: verified.partner, variant: verified.variant, scopes: verified.scopes, tokenId, ...(verified.affiliate !== undefined ? { affiliate: verified.affiliate } : {}) };
  const taken = auth.limiter.take(tokenId);
  const decision = taken instanceof Promise ? await taken : taken;
  if (!decision.allowed) {
    reply.header('retry-after', String(decision.retryAfterS));
    return reply.code(429).send({ error: 'rate_limited', message: `more than ${auth.limiter.limit} requests in one minute with this access token; retry after ${decision.retryAfterS} s` });
  }
  if (scope !== undefined && !verified.scopes.includes(scope)) {
    return forbidden(reply, 'insufficient_scope', `this access token lacks the ${scope} scope (it has: ${verified.scopes.join(' ') || 'none'})`, scope);
  }
  return undefined;
}

/**
 * Pre-handler after requireToken: the path's variant (the route's `variant` parameter, or the
 * variant given) must be the token's. An unknown variant segment is 404.
 */
export function requireVariant(variant?: Variant): preHandlerAsyncHookHandler {
  return async function requireVariantHandler(request: FastifyRequest, reply: FastifyReply) {
    const principal = request.principal;
    if (!principal) throw new Error('requireVariant must follow requireToken');
    const wanted = variant ?? (request.params as Record<string, unknown> | undefined)?.variant;
    if (!isVariant(wanted)) {
      return reply.code(404).send({ error: 'not_found', message: `unknown variant ${JSON.stringify(wanted)}; variants: igaming, prop-trading` });
    }
    if (wanted !== principal.variant) {
      return forbidden(reply, 'wrong_variant', `this access token is for ${principal.partner}, a partner of variant ${principal.variant}; it cannot use ${wanted} paths`);
    }
    return undefined;
  };
}

/** Both checks of a `/api/v1/{variant}/...` route, in order: `onRequest: requirePartnerAccess('write')`. */
export function requirePartnerAccess(scope: Scope, variant?: Variant): preHandlerAsyncHookHandler[] {
  return [requireToken(scope), requireVariant(variant)];
}
