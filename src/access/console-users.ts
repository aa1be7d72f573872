/**
 * Console users, sessions and the audit log (migration 012): added by `partner-sync users add`,
 * signed in and audited by the web console. Passwords are kept as a salted scrypt hash made by
 * ./secret-hash.ts (the same function as API client secrets). A session id is 32 random bytes in
 * the browser's cookie; the store keeps its SHA-256 only, so a copy of the store does not sign
 * anyone in.
 */
import { createHash, randomBytes } from 'node:crypto';
import { decoyHash, hashSecret, verifySecret, type KdfParams } from './secret-hash.js';
import type { Store } from '../store/store.js';
import { fromStoreTimestamp } from '../store/values.js';

export const ROLES = ['operator', 'manager', 'affiliate'] as const;
export type Role = (typeof ROLES)[number];
export const isRole = (v: unknown): v is Role => (ROLES as readonly unknown[]).includes(v);

/** A session lasts 12 hours (a working day), then the user signs in again. */
export const SESSION_HOURS = 12;

export interface ConsoleUser {
  name: string;
  role: Role;
  /** The affiliate role's affiliate ids: `AFF` (on every partner) or `PARTNER:AFF`. */
  affiliates?: readonly string[];
}

/** An invitation lasts 7 days, and opens once. */
export const INVITATION_DAYS = 7;
const AFFILIATE_ID = /^(?:[A-Za-z0-9._-]{1,64}:)?[^\s:,]{1,128}$/;

const affiliatesOf = (v: unknown): string[] | undefined => (typeof v === 'string' && v !== '' ? (JSON.parse(v) as string[]) : undefined);

export interface Session {
  user: ConsoleUser;
  csrf: string;
}

export class UserError extends Error {}

const NAME = /^[A-Za-z0-9._@-]{1,64}$/;

/** The password rule of every role: at least 10 characters. */
export function passwordProblem(password: string): string | undefined {
  return password.length < 10 ? 'the password must be at least 10 characters long' : undefined;
}

function checkNewUser(name: string, role: Role, affiliates: readonly string[] | undefined): void {
  if (!NAME.test(name)) throw new UserError(`a user name is 1 to 64 letters, digits, '.', '_', '@' or '-', got ${JSON.stringify(name)}`);
  if (!isRole(role)) throw new UserError(`--role must be one of ${ROLES.join(', ')}, got ${JSON.stringify(role)}`);
  if (role === 'affiliate') {
    if (!affiliates || affiliates.length === 0) throw new UserError('an affiliate user needs --affiliate AFF_ID (or PARTNER:AFF_ID; several for the same person across partners)');
    const bad = affiliates.find((a) => !AFFILIATE_ID.test(a));
    if (bad !== undefined) throw new UserError(`--affiliate: an affiliate id, or PARTNER:AFF_ID, got ${JSON.stringify(bad)}`);
  } else if (affiliates && affiliates.length > 0) throw new UserError('--affiliate is for the affiliate role only');
}

async function insertUser(store: Store, name: string, role: Role, password: string, affiliates: readonly string[] | undefined, kdf?: KdfParams): Promise<void> {
  const existing = await store.knex('console_users').where('name', name).first('name');
  if (existing) throw new UserError(`user ${name} already exists`);
  const hashed = await hashSecret(password, kdf);
  await store.knex('console_users').insert({ name, role, ...hashed, created_at: store.now(), disabled_at: null, affiliates: role === 'affiliate' ? JSON.stringify([...new Set(affiliates)]) : null });
}

export async function addUser(store: Store, name: string, role: Role, password: string, kdf?: KdfParams, affiliates?: readonly string[]): Promise<ConsoleUser> {
  checkNewUser(name, role, affiliates);
  const problem = passwordProblem(password);
  if (problem) throw new UserError(problem);
  await insertUser(store, name, role, password, affiliates, kdf);
  return { name, role, ...(role === 'affiliate' ? { affiliates: [...new Set(affiliates)] } : {}) };
}

/**
 * A user who sets their own password from a one-time link: added with a random password nobody
 * knows, and an invitation whose token is returned once (the store keeps its SHA-256).
 */
export async function inviteUser(store: Store, name: string, role: Role, affiliates?: readonly string[], kdf?: KdfParams): Promise<{ user: ConsoleUser; token: string; expires: string }> {
  checkNewUser(name, role, affiliates);
  await insertUser(store, name, role, randomBytes(32).toString('base64url'), affiliates, kdf);
  const token = randomBytes(32).toString('base64url');
  const expires = new Date(store.clock().getTime() + INVITATION_DAYS * 86_400_000).toISOString();
  await store.knex('console_invitations').insert({ token_hash: idHash(token), user_name: name, created_at: store.now(), expires_at: expires, used_at: null });
  return { user: { name, role, ...(role === 'affiliate' ? { affiliates: [...new Set(affiliates)] } : {}) }, token, expires };
}

/** The user an unused, unexpired invitation is for, or why not. */
export async function invitationUser(store: Store, token: string): Promise<{ user: string } | { problem: string }> {
  const row = (await store.knex('console_invitations').where('token_hash', idHash(token)).first('user_name', 'expires_at', 'used_at')) as Record<string, unknown> | undefined;
  if (!row) return { problem: 'This invitation link is not known. Ask for a new one.' };
  if (row.used_at !== null && row.used_at !== undefined) return { problem: 'This invitation link has been used already: sign in with your password.' };
  const expires = Date.parse(`${(fromStoreTimestamp(row.expires_at) ?? '').slice(0, 23)}Z`);
  if (!(expires > store.clock().getTime())) return { problem: 'This invitation link has expired. Ask for a new one.' };
  return { user: String(row.user_name) };
}

/** Sets the invited user's password and spends the invitation; the user, or why not. */
export async function acceptInvitation(store: Store, token: string, password: string, kdf?: KdfParams): Promise<{ user: ConsoleUser } | { problem: string }> {
  const found = await invitationUser(store, token);
  if ('problem' in found) return found;
  const problem = passwordProblem(password);
  if (problem) return { problem: `${problem.charAt(0).toUpperCase()}${problem.slice(1)}.` };
  const hashed = await hashSecret(password, kdf);
  const spent = await store.transaction(async (trx) => {
    const n = await trx('console_invitations').where('token_hash', idHash(token)).whereNull('used_at').update({ used_at: store.now() });
    if (Number(n) === 0) return false;
    await trx('console_users').where('name', found.user).update(hashed);
    return true;
  });
  if (!spent) return { problem: 'This invitation link has been used already: sign in with your password.' };
  const row = (await store.knex('console_users').where('name', found.user).whereNull('disabled_at').first()) as Record<string, unknown> | undefined;
  if (!row || !isRole(row.role)) return { problem: 'This user is disabled.' };
  return { user: { name: String(row.name), role: row.role, ...(row.role === 'affiliate' ? { affiliates: affiliatesOf(row.affiliates) ?? [] } : {}) } };
}

export const generatePassword = (): string => randomBytes(15).toString('base64url');

/** The user when name and password match an enabled user; an unknown name costs what a wrong password costs. */
export async function checkPassword(store: Store, name: string, password: string): Promise<ConsoleUser | undefined> {
  const row = (await store.knex('console_users').where('name', name).whereNull('disabled_at').first()) as Record<string, string> | undefined;
  if (!row) {
    await verifySecret(password, await decoyHash());
    return undefined;
  }
  const ok = await verifySecret(password, { kdf: row.kdf!, salt: row.salt!, hash: row.hash! });
  if (!ok || !isRole(row.role)) return undefined;
  return { name: row.name!, role: row.role, ...(row.role === 'affiliate' ? { affiliates: affiliatesOf(row.affiliates) ?? [] } : {}) };
}

const idHash = (id: string): string => createHash('sha256').update(id).digest('hex');

export async function startSession(store: Store, user: ConsoleUser): Promise<{ id: string; csrf: string; expires: Date }> {
  const id = randomBytes(32).toString('base64url');
  const csrf = randomBytes(24).toString('base64url');
  const expires = new Date(store.clock().getTime() + SESSION_HOURS * 3600_000);
  await store.knex('console_sessions').insert({ id_hash: idHash(id), user_name: user.name, csrf, created_at: store.now(), expires_at: expires.toISOString() });
  return { id, csrf, expires };
}

export async function findSession(store: Store, id: string): Promise<Session | undefined> {
  const row = (await store.knex('console_sessions as s').join('console_users as u', 'u.name', 's.user_name')
    .where('s.id_hash', idHash(id)).whereNull('u.disabled_at').first('u.name', 'u.role', 'u.affiliates', 's.csrf', 's.expires_at')) as Record<string, unknown> | undefined;
  if (!row || !isRole(row.role)) return undefined;
  const expires = Date.parse(`${(fromStoreTimestamp(row.expires_at) ?? '').slice(0, 23)}Z`);
  if (!(expires > store.clock().getTime())) return undefined;
  return { user: { name: String(row.name), role: row.role, ...(row.role === 'affiliate' ? { affiliates: affiliatesOf(row.affiliates) ?? [] } : {}) }, csrf: String(row.csrf) };
}

export async function endSession(store: Store, id: string): Promise<void> {
  await store.knex('console_sessions').where('id_hash', idHash(id)).delete();
}

export interface AuditEntry {
  id: number;
  at: string;
  user: string;
  action: string;
  target: string;
  detail: string;
}

export async function audit(store: Store, user: string, action: string, target: string, detail: string): Promise<void> {
  await store.knex('console_audit').insert({ at: store.now(), user_name: user, action, target, detail });
}

export async function listAudit(store: Store, limit = 200): Promise<AuditEntry[]> {
  const rows: Record<string, unknown>[] = await store.knex('console_audit').orderBy('id', 'desc').limit(limit);
  return rows.map((r) => ({ id: Number(r.id), at: fromStoreTimestamp(r.at) ?? '', user: String(r.user_name), action: String(r.action), target: String(r.target), detail: String(r.detail) }));
}

/** The affiliate users (for a manager's "view as"), or one of them by name. */
export async function affiliateUsers(store: Store, name?: string): Promise<{ name: string; affiliates: string[]; disabled: boolean }[]> {
  let q = store.knex('console_users').where('role', 'affiliate').orderBy('name');
  if (name !== undefined) q = q.where('name', name);
  const rows = (await q.select('name', 'affiliates', 'disabled_at')) as Record<string, unknown>[];
  return rows.map((r) => ({ name: String(r.name), affiliates: affiliatesOf(r.affiliates) ?? [], disabled: r.disabled_at !== null && r.disabled_at !== undefined }));
}
