/**
 * Personal data at ingest (docs/personal-data.md): the customer fields the spec marks personal
 * (§2.1: first_name, last_name, email) and a partner's policy for each, applied to a record once it
 * is validated and before anything of it is stored: `keep` (the default), `hash` (a keyed HMAC of
 * the normalized value, so equal values still match and the store holds no address) or `drop`.
 *
 * A hashed value reads `hmac:` and 64 hex digits. It is this service's own output: a customer
 * record that carries one in a personal field (a replayed reject, whose payload was hashed when it
 * was kept) is validated without it and keeps it as it is.
 */
import { createHmac } from 'node:crypto';

export const PERSONAL_FIELDS = ['email', 'first_name', 'last_name'] as const;
export type PersonalField = (typeof PERSONAL_FIELDS)[number];
export type FieldPolicy = 'keep' | 'hash' | 'drop';
export type PersonalDataPolicy = Partial<Record<PersonalField, FieldPolicy>>;

/** The environment variable holding the key of `hash` (any string of at least 32 characters). */
export const HASH_KEY_ENV = 'PARTNER_SYNC_PERSONAL_DATA_KEY';
export const HASH_KEY_MIN_LENGTH = 32;

/** A policy and, when a field is hashed, the key. */
export interface PersonalData {
  policy: PersonalDataPolicy;
  key?: string;
}

const HASHED = /^hmac:[0-9a-f]{64}$/;

export const isPersonalField = (field: string): field is PersonalField => (PERSONAL_FIELDS as readonly string[]).includes(field);

export const isHashed = (value: unknown): value is string => typeof value === 'string' && HASHED.test(value);

/** Lower case, NFKC, trimmed, inner white space single: how names and e-mails are compared. */
export const cleanPersonal = (v: unknown): string => (typeof v === 'string' ? v.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase() : '');

const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

/**
 * `John.Doe+casino@GoogleMail.com` → `johndoe@gmail.com`: lower case; the `+tag` of the local part
 * dropped (every provider delivers it to the same mailbox); for gmail.com and googlemail.com
 * (with `gmailDots`) the dots of the local part dropped too and the domain is gmail.com, since Gmail
 * ignores them. Other domains keep their dots: for most providers `a.b` and `ab` are two mailboxes.
 */
export function normalizeEmail(email: unknown, gmailDots: boolean): string | undefined {
  const e = cleanPersonal(email);
  const at = e.lastIndexOf('@');
  if (at <= 0 || at === e.length - 1) return undefined;
  let local = e.slice(0, at);
  let domain = e.slice(at + 1);
  const plus = local.indexOf('+');
  if (plus >= 0) local = local.slice(0, plus);
  if (gmailDots && GMAIL_DOMAINS.has(domain)) {
    local = local.replace(/\./g, '');
    domain = 'gmail.com';
  }
  if (local === '') return undefined;
  return `${local}@${domain}`;
}

/**
 * The keyed hash of a personal value: HMAC-SHA256 of the field and its normalized form (an e-mail
 * as the duplicate-identity rule normalizes it with gmail dots ignored, a name cleaned), so the
 * rule still links equal values. A value hashed already is returned as it is.
 */
export function hashPersonal(field: PersonalField, value: string, key: string): string {
  if (isHashed(value)) return value;
  const normalized = field === 'email' ? (normalizeEmail(value, true) ?? cleanPersonal(value)) : cleanPersonal(value);
  return `hmac:${createHmac('sha256', key).update(`${field}\u0000${normalized}`).digest('hex')}`;
}

/** True when the policy changes any field. */
export const minimises = (data: PersonalData | undefined): data is PersonalData => data !== undefined && PERSONAL_FIELDS.some((f) => (data.policy[f] ?? 'keep') !== 'keep');

/** What a field's value becomes under the policy: the value, its hash, or undefined (dropped). */
export function applied(data: PersonalData, field: PersonalField, value: unknown): unknown {
  const rule = data.policy[field] ?? 'keep';
  if (rule === 'keep' || value === null || value === undefined) return value;
  if (rule === 'drop') return undefined;
  if (data.key === undefined) throw new Error(`personal_data: ${field} is to be hashed but ${HASH_KEY_ENV} is not set`);
  return typeof value === 'string' ? hashPersonal(field, value, data.key) : undefined;
}

/** Applies the policy to a customer record in place; resolves with how many fields it changed. */
export function minimiseRecord(record: Record<string, unknown>, data: PersonalData): number {
  let changed = 0;
  for (const field of PERSONAL_FIELDS) {
    if (!(field in record)) continue;
    const before = record[field];
    const after = applied(data, field, before);
    if (after === before) continue;
    changed += 1;
    if (after === undefined) delete record[field];
    else record[field] = after;
  }
  return changed;
}

/**
 * A kept payload (a reject's, a partner's record as pulled) under the policy: its personal fields by
 * name, and, where the partner names them otherwise, every string equal to one of `values` (the
 * record's personal values as mapped), replaced by what the policy makes of it or removed. A new
 * value; the payload is not changed.
 */
export function minimisePayload(payload: unknown, data: PersonalData, values: Partial<Record<PersonalField, unknown>> = {}): unknown {
  const byValue = new Map<string, PersonalField>();
  for (const field of PERSONAL_FIELDS) {
    const v = values[field];
    if (typeof v === 'string' && v !== '' && (data.policy[field] ?? 'keep') !== 'keep') byValue.set(v, field);
  }
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') {
      const field = byValue.get(v);
      return field === undefined ? v : applied(data, field, v);
    }
    if (v === null || typeof v !== 'object' || depth > 20) return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1)).filter((x) => x !== undefined);
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const named = depth === 0 && isPersonalField(k) ? applied(data, k, x) : walk(x, depth + 1);
      if (named !== undefined) out[k] = named;
    }
    return out;
  };
  return walk(payload, 0);
}

/** The record without the personal fields that hold a hash of this service (what validation reads of a customer record). */
export function withoutOwnHashes(record: unknown): unknown {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return record;
  const r = record as Record<string, unknown>;
  if (!PERSONAL_FIELDS.some((f) => isHashed(r[f]))) return record;
  const out = { ...r };
  for (const f of PERSONAL_FIELDS) if (isHashed(out[f])) delete out[f];
  return out;
}

/** Problems of a policy as configured: unknown fields or rules, and a `hash` without its key. */
export function policyProblems(policy: unknown, env: NodeJS.ProcessEnv): { path: string; message: string }[] {
  if (policy === undefined) return [];
  if (policy === null || typeof policy !== 'object' || Array.isArray(policy)) return [{ path: 'personal_data', message: 'must be a map of personal field to keep, hash or drop' }];
  const problems: { path: string; message: string }[] = [];
  for (const [field, rule] of Object.entries(policy)) {
    if (!isPersonalField(field)) problems.push({ path: `personal_data.${field}`, message: `not a personal field of the spec (one of ${PERSONAL_FIELDS.join(', ')})` });
    else if (rule !== 'keep' && rule !== 'hash' && rule !== 'drop') problems.push({ path: `personal_data.${field}`, message: 'must be keep, hash or drop' });
  }
  const hashes = Object.values(policy).includes('hash');
  const key = env[HASH_KEY_ENV] || undefined;
  if (hashes && (key === undefined || key.length < HASH_KEY_MIN_LENGTH)) {
    problems.push({ path: 'personal_data', message: `hash needs the key in the environment variable ${HASH_KEY_ENV} (at least ${HASH_KEY_MIN_LENGTH} characters)${key === undefined ? ', which is not set' : ': the one set is shorter'}` });
  }
  return problems;
}

/** The policy with its key from the environment, for the load path. */
export const personalData = (policy: PersonalDataPolicy | undefined, env: NodeJS.ProcessEnv): PersonalData | undefined =>
  policy === undefined ? undefined : { policy, key: env[HASH_KEY_ENV] || undefined };
