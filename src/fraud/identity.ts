/**
 * Identity keys of a customer record (docs/fraud.md, duplicate identity): the normalized e-mail,
 * first + last name + country, and the click id. Two customers with one key are linked.
 *
 * Personal data (spec §2.1) are not kept in the keys: the e-mail and the name keys are a masked
 * form for people to read (`j*****e@gmail.com`, `a. l. DE`) and a SHA-256 digest of the
 * normalized value that tells keys apart (`j*****e@gmail.com#5f1c…`). The key is what
 * fraud_identities, the flag's instance key and its evidence hold.
 */
import { hash } from 'node:crypto';

export type IdentityKind = 'email' | 'name' | 'click';

export interface IdentityKey {
  kind: IdentityKind;
  value: string;
}

const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

const clean = (v: unknown): string => (typeof v === 'string' ? v.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase() : '');

/**
 * `John.Doe+casino@GoogleMail.com` → `johndoe@gmail.com`: lower case; the `+tag` of the local part
 * dropped (every provider delivers it to the same mailbox); for gmail.com and googlemail.com
 * (with `gmailDots`) the dots of the local part dropped too and the domain is gmail.com, since Gmail
 * ignores them. Other domains keep their dots: for most providers `a.b` and `ab` are two mailboxes.
 */
export function normalizeEmail(email: unknown, gmailDots: boolean): string | undefined {
  const e = clean(email);
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

/** The stored key of first name, last name and country (normalized): initials, country and digest. */
export const nameKey = (first: string, last: string, country: string): string => `${[...first][0] ?? ''}. ${[...last][0] ?? ''}. ${country}#${digest('name', `${first}|${last}|${country}`)}`;

export function identityKeys(row: { email?: unknown; first_name?: unknown; last_name?: unknown; country_code?: unknown; click_id?: unknown }, gmailDots: boolean, withName = true): IdentityKey[] {
  const keys: IdentityKey[] = [];
  const email = normalizeEmail(row.email, gmailDots);
  if (email) keys.push({ kind: 'email', value: emailKey(email) });
  const first = clean(row.first_name);
  const last = clean(row.last_name);
  const country = clean(row.country_code).toUpperCase();
  if (withName && first && last && country) keys.push({ kind: 'name', value: nameKey(first, last, country) });
  const click = typeof row.click_id === 'string' ? row.click_id.trim() : '';
  if (click) keys.push({ kind: 'click', value: click });
  return keys;
}
