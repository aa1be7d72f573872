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

export const ROLES = ['operator', 'manager'] as const;
export type Role = (typeof ROLES)[number];
export const isRole = (v: unknown): v is Role => (ROLES as readonly unknown[]).includes(v);

/** A session lasts 12 hours (a working day), then the user signs in again. */
export const SESSION_HOURS = 12;

export interface ConsoleUser {
  name: string;
  role: Role;
}

export interface Session {
  user: ConsoleUser;
  csrf: string;
}

export class UserError extends Error {}

const NAME = /^[A-Za-z0-9._@-]{1,64}$/;

export async function addUser(store: Store, name: string, role: Role, password: string, kdf?: KdfParams): Promise<ConsoleUser> {
  if (!NAME.test(name)) throw new UserError(`a user name is 1 to 64 letters, digits, '.', '_', '@' or '-', got ${JSON.stringify(name)}`);
  if (!isRole(role)) throw new UserError(`--role must be operator or manager, got ${JSON.stringify(role)}`);
  if (password.length < 10) throw new UserError('the password must be at least 10 characters long');
  const existing = await store.knex('console_users').where('name', name).first('name');
  if (existing) throw new UserError(`user ${name} already exists`);
  const hashed = await hashSecret(password, kdf);
  await store.knex('console_users').insert({ name, role, ...hashed, created_at: store.now(), disabled_at: null });
  return { name, role };
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
  return ok && isRole(row.role) ? { name: row.name!, role: row.role } : undefined;
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
    .where('s.id_hash', idHash(id)).whereNull('u.disabled_at').first('u.name', 'u.role', 's.csrf', 's.expires_at')) as Record<string, unknown> | undefined;
  if (!row || !isRole(row.role)) return undefined;
  const expires = Date.parse(`${(fromStoreTimestamp(row.expires_at) ?? '').slice(0, 23)}Z`);
  if (!(expires > store.clock().getTime())) return undefined;
  return { user: { name: String(row.name), role: row.role }, csrf: String(row.csrf) };
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
