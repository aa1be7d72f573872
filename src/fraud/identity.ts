/**
 * Identity keys of a customer record (docs/fraud.md, duplicate identity): the normalized e-mail,
 * first + last name + country, and the click id. Two customers with one key are linked.
 *
 * Personal data (spec §2.1) are not kept in the keys: the e-mail and the name keys are a masked
 * form for people to read (`j*****e@gmail.com`, `a. l. DE`) and a SHA-256 digest of the
 * normalized value that tells keys apart (`j*****e@gmail.com#5f1c…`). The key is what
 * fraud_identities, the flag's instance key and its evidence hold. A value stored hashed (the
 * partner's `personal_data` policy, ../spec/personal-data.ts) gives a key of its digest alone
 * (`(hashed)#…`, `*. *. DE#…`): equal values still link.
 */
import { hash } from 'node:crypto';
import { cleanPersonal as clean, isHashed, normalizeEmail, type PersonalDataPolicy } from '../spec/personal-data.js';

export type IdentityKind = 'email' | 'name' | 'click';

export interface IdentityKey {
  kind: IdentityKind;
  value: string;
}

const digest = (kind: string, value: string): string => hash('sha256', `${kind}\u0000${value}`, 'hex').slice(0, 24);

/** `johndoe@gmail.com` → `j*****e@gmail.com` (one character each end of the local part kept; a single-character local part is `*`). */
export function maskEmail(normalized: string): string {
  const at = normalized.lastIndexOf('@');
  const local = normalized.slice(0, at);
  const masked = local.length <= 2 ? '*'.repeat(local.length) : `${local[0]}${'*'.repeat(local.length - 2)}${local[local.length - 1]}`;
  return `${masked}${normalized.slice(at)}`;
}

/** The stored key of a normalized e-mail: masked form and digest, never the address. */
export const emailKey = (normalized: string): string => `${maskEmail(normalized)}#${digest('email', normalized)}`;

const initial = (name: string): string => (isHashed(name) ? '*' : [...name][0] ?? '');

/** The stored key of first name, last name and country (normalized, or hashed): initials, country and digest. */
export const nameKey = (first: string, last: string, country: string): string => `${initial(first)}. ${initial(last)}. ${country}#${digest('name', `${first}|${last}|${country}`)}`;

export function identityKeys(row: { email?: unknown; first_name?: unknown; last_name?: unknown; country_code?: unknown; click_id?: unknown }, gmailDots: boolean, withName = true): IdentityKey[] {
  const keys: IdentityKey[] = [];
  if (isHashed(row.email)) keys.push({ kind: 'email', value: `(hashed)#${digest('email', row.email)}` });
  else {
    const email = normalizeEmail(row.email, gmailDots);
    if (email) keys.push({ kind: 'email', value: emailKey(email) });
  }
  const first = isHashed(row.first_name) ? row.first_name : clean(row.first_name);
  const last = isHashed(row.last_name) ? row.last_name : clean(row.last_name);
  const country = clean(row.country_code).toUpperCase();
  if (withName && first && last && country) keys.push({ kind: 'name', value: nameKey(first, last, country) });
  const click = typeof row.click_id === 'string' ? row.click_id.trim() : '';
  if (click) keys.push({ kind: 'click', value: click });
  return keys;
}

/**
 * What a partner's personal-data policy takes from the duplicate-identity rule (docs/fraud.md):
 * the e-mail key needs `email` kept or hashed, the name key `first_name` and `last_name` kept or
 * hashed (`hash` matches as `keep` does). One sentence per key the rule cannot use, for `check`.
 */
export function identityPolicyWarnings(policy: PersonalDataPolicy | undefined, settings: { enabled: boolean; name_key: boolean }): string[] {
  if (!policy || !settings.enabled) return [];
  const warnings: string[] = [];
  if (policy.email === 'drop') warnings.push('duplicate_identity cannot match e-mails: personal_data.email is drop (hash keeps the matching without storing the address)');
  const names = (['first_name', 'last_name'] as const).filter((f) => policy[f] === 'drop');
  if (settings.name_key && names.length > 0) warnings.push(`duplicate_identity cannot match names: personal_data.${names.join(' and ')} ${names.length > 1 ? 'are' : 'is'} drop (hash keeps the matching)`);
  return warnings;
}
