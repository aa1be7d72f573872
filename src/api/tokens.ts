/**
 * Access tokens: JWTs signed with HMAC-SHA256 (jose). The key is `PARTNER_SYNC_JWT_SECRET` when
 * set (at least 32 characters), else a random key generated once and kept in the store's
 * api_settings, so every `serve` process on one store accepts the tokens of the others.
 * Verification accepts only HS256, our issuer and audience, and checks expiry against the
 * injected clock (the store's), so expiry is testable without waiting.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import type { Store } from '../store/store.js';
import type { Clock } from '../kernel/clock.js';
import { isVariant } from '../types.js';
import type { ApiClient, Scope } from '../access/api-clients.js';
import { SCOPES } from '../access/api-clients.js';
import type { Principal } from './types.js';

/** Spec §5.4, §8: a token lives 3600 seconds. */
export const TOKEN_LIFETIME_S = 3600;
export const TOKEN_ALG = 'HS256';
const ISSUER = 'partner-sync';
const AUDIENCE = 'partner-sync-api';
const KEY_SETTING = 'token_signing_key';
export const MIN_SECRET_LENGTH = 32;

/** The signing key: from the environment, else the store's shared one (created by the first process to ask). */
export async function signingKey(store: Store, env: NodeJS.ProcessEnv = process.env): Promise<Uint8Array> {
  const fromEnv = env.PARTNER_SYNC_JWT_SECRET;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (fromEnv.length < MIN_SECRET_LENGTH) throw new Error(`PARTNER_SYNC_JWT_SECRET must be at least ${MIN_SECRET_LENGTH} characters`);
    return new TextEncoder().encode(fromEnv);
  }
  // Insert-if-absent then read: two processes starting at once end up with the same key.
  await store.knex('api_settings')
    .insert({ name: KEY_SETTING, value: randomBytes(32).toString('base64url'), created_at: store.now() })
    .onConflict('name').ignore();
  const row: { value: string } | undefined = await store.knex('api_settings').where('name', KEY_SETTING).first('value');
  if (!row) throw new Error('the token signing key could not be stored');
  return new Uint8Array(Buffer.from(row.value, 'base64url'));
}

export interface IssuedToken {
  accessToken: string;
  tokenId: string;
  expiresIn: number;
  scopes: Scope[];
}

export async function issueToken(key: Uint8Array, client: ApiClient, clock: Clock, scopes: readonly Scope[] = client.scopes): Promise<IssuedToken> {
  const nowS = Math.floor(clock().getTime() / 1000);
  const tokenId = randomUUID();
  const granted = SCOPES.filter((s) => scopes.includes(s));
  const claims: Record<string, unknown> = {
    partner: client.partner,
    variant: client.variant,
    scope: granted.join(' '),
    client_id: client.clientId,
  };
  if (client.affiliate !== undefined) claims.affiliate = client.affiliate;
  const accessToken = await new SignJWT(claims)
    .setProtectedHeader({ alg: TOKEN_ALG, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(client.partner)
    .setJti(tokenId)
    .setIssuedAt(nowS)
    .setExpirationTime(nowS + TOKEN_LIFETIME_S)
    .sign(key);
  return { accessToken, tokenId, expiresIn: TOKEN_LIFETIME_S, scopes: granted };
}

/** Why a token was refused, for the 401 message (never the token itself). */
export class InvalidTokenError extends Error {
  override name = 'InvalidTokenError';
}

export interface VerifiedToken extends Principal {
  tokenId: string;
  expiresAt: number;
}

export async function verifyToken(key: Uint8Array, token: string, clock: Clock): Promise<VerifiedToken> {
  let payload;
  try {
    ({ payload } = await jwtVerify(token, key, { algorithms: [TOKEN_ALG], issuer: ISSUER, audience: AUDIENCE, currentDate: clock(), requiredClaims: ['exp', 'jti', 'sub'] }));
  } catch (error) {
    if (error instanceof errors.JWTExpired) throw new InvalidTokenError('the access token has expired');
    if (error instanceof errors.JWSSignatureVerificationFailed) throw new InvalidTokenError('the access token signature is invalid');
    if (error instanceof errors.JOSEError) throw new InvalidTokenError('the access token is invalid');
    throw new InvalidTokenError('the access token is malformed');
  }
  const { partner, variant, scope, client_id: clientId, affiliate, jti, exp } = payload as Record<string, unknown>;
  if (typeof partner !== 'string' || !isVariant(variant) || typeof scope !== 'string' || typeof clientId !== 'string' || typeof jti !== 'string' || typeof exp !== 'number') {
    throw new InvalidTokenError('the access token lacks required claims');
  }
  const scopes = SCOPES.filter((s) => scope.split(' ').includes(s));
  return { clientId, partner, variant, scopes, tokenId: jti, expiresAt: exp, ...(typeof affiliate === 'string' ? { affiliate } : {}) };
}
