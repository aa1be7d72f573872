/**
 * API clients (OAuth client credentials) in the store: created by `partner-sync clients add`,
 * listed, revoked, and authenticated by the HTTP API. A client belongs to one partner and
 * variant, has scopes (read, write) and may be limited to one affiliate's report rows. The secret
 * is returned once, at creation, and kept only hashed (./secret-hash.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Store } from '../store/store.js';
import type { PersonalDataPolicy } from '../spec/personal-data.js';
import { isVariant, type Variant } from '../types.js';
import { decoyHash, hashSecret, verifySecret, type KdfParams } from './secret-hash.js';

/** What an API client may do: read (list records, reports), write (push records), erase (a customer's personal data). */
export type Scope = 'read' | 'write' | 'erase';

export const SCOPES: readonly Scope[] = ['read', 'write', 'erase'];

/** What a client is given when `clients add` names no scope: erase only when asked for. */
export const DEFAULT_SCOPES: readonly Scope[] = ['read', 'write'];

export interface ApiClient {
  clientId: string;
  partner: string;
  variant: Variant;
  scopes: Scope[];
  affiliate?: string;
  /** What its pushes keep of the personal customer fields (../spec/personal-data.ts); absent: all kept. */
  personalData?: PersonalDataPolicy;
  createdAt: string;
  revokedAt?: string;
}

export interface NewClient extends ApiClient {
  /** Shown once; never stored. */
  clientSecret: string;
}

interface ClientRow {
  client_id: string;
  partner_id: string;
  variant: string;
  scopes: string;
  affiliate_id: string | null;
  personal_data: string | null;
  secret_kdf: string;
  secret_salt: string;
  secret_hash: string;
  created_at: string;
  revoked_at: string | null;
}

/** "read,write" or "read write" → ['read', 'write']; an unknown scope is an error naming the allowed ones. */
export function parseScopes(text: string): Scope[] {
  const parts = text.split(/[\s,]+/).filter((s) => s !== '');
  if (parts.length === 0) throw new Error(`no scope given; allowed scopes: ${SCOPES.join(', ')}`);
  for (const p of parts) {
    if (!(SCOPES as readonly string[]).includes(p)) throw new Error(`unknown scope ${JSON.stringify(p)}; allowed scopes: ${SCOPES.join(', ')}`);
  }
  return SCOPES.filter((s) => parts.includes(s));
}

function toClient(row: ClientRow): ApiClient {
  if (!isVariant(row.variant)) throw new Error(`client ${row.client_id} has an unknown variant ${row.variant}`);
  return {
    clientId: row.client_id,
    partner: row.partner_id,
    variant: row.variant,
    scopes: parseScopes(row.scopes),
    ...(row.affiliate_id !== null ? { affiliate: row.affiliate_id } : {}),
    ...(row.personal_data ? { personalData: JSON.parse(row.personal_data) as PersonalDataPolicy } : {}),
    createdAt: String(row.created_at),
    ...(row.revoked_at !== null ? { revokedAt: String(row.revoked_at) } : {}),
  };
}

export async function createClient(
  store: Store,
  input: { partner: string; variant: Variant; scopes?: readonly Scope[]; affiliate?: string; personalData?: PersonalDataPolicy },
  /** Hash parameters (default DEFAULT_KDF; tests pass cheaper ones). */
  kdf?: KdfParams,
): Promise<NewClient> {
  const clientId = `ps_${randomBytes(10).toString('hex')}`;
  const clientSecret = randomBytes(32).toString('base64url');
  const secret = await hashSecret(clientSecret, kdf);
  const scopes = SCOPES.filter((s) => (input.scopes ?? DEFAULT_SCOPES).includes(s));
  const createdAt = store.now();
  await store.knex('api_clients').insert({
    client_id: clientId,
    partner_id: input.partner,
    variant: input.variant,
    scopes: scopes.join(' '),
    affiliate_id: input.affiliate ?? null,
    personal_data: input.personalData ? JSON.stringify(input.personalData) : null,
    secret_kdf: secret.kdf,
    secret_salt: secret.salt,
    secret_hash: secret.hash,
    created_at: createdAt,
    revoked_at: null,
  });
  return { clientId, clientSecret, partner: input.partner, variant: input.variant, scopes, ...(input.affiliate ? { affiliate: input.affiliate } : {}), ...(input.personalData ? { personalData: input.personalData } : {}), createdAt };
}

export async function listClients(store: Store, filter: { partner?: string } = {}): Promise<ApiClient[]> {
  const q = store.knex<ClientRow>('api_clients').select('*').orderBy([{ column: 'partner_id' }, { column: 'created_at' }, { column: 'client_id' }]);
  if (filter.partner) q.where('partner_id', filter.partner);
  return (await q).map(toClient);
}

export async function getClient(store: Store, clientId: string): Promise<ApiClient | undefined> {
  const row = await store.knex<ClientRow>('api_clients').where('client_id', clientId).first();
  return row ? toClient(row) : undefined;
}

/** Marks the client revoked; returns false when there is no such client. Revoking twice keeps the first time. */
export async function revokeClient(store: Store, clientId: string): Promise<boolean> {
  const row = await store.knex<ClientRow>('api_clients').where('client_id', clientId).first('client_id');
  if (!row) return false;
  await store.knex('api_clients').where('client_id', clientId).whereNull('revoked_at').update({ revoked_at: store.now() });
  return true;
}

/**
 * The client these credentials authenticate, or undefined. Unknown ids, revoked clients and wrong
 * secrets all cost one scrypt hash, so the time taken does not tell which one it was.
 */
export async function authenticateClient(store: Store, clientId: string, clientSecret: string): Promise<ApiClient | undefined> {
  const row = await store.knex<ClientRow>('api_clients').where('client_id', clientId).first();
  const stored = row ? { kdf: row.secret_kdf, salt: row.secret_salt, hash: row.secret_hash } : await decoyHash();
  const ok = await verifySecret(clientSecret, stored);
  if (!row || !ok || row.revoked_at !== null) return undefined;
  return toClient(row);
}

/** How long a process trusts its last look at a client's revocation (a revoked client's tokens stop within this). */
export const DEFAULT_REVOCATION_CACHE_MS = 5000;

/** Whether the client is revoked or gone (one indexed row read). */
export async function clientRevoked(store: Store, clientId: string): Promise<boolean> {
  const row: { revoked_at: string | null } | undefined = await store.knex('api_clients').where('client_id', clientId).first('revoked_at');
  return !row || row.revoked_at !== null;
}
