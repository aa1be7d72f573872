/**
 * Identity keys of a customer record (docs/fraud.md, duplicate identity): the normalized e-mail,
 * first + last name + country, and the click id. Two customers with one key are linked.
 */
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

export function identityKeys(row: { email?: unknown; first_name?: unknown; last_name?: unknown; country_code?: unknown; click_id?: unknown }, gmailDots: boolean, nameKey = true): IdentityKey[] {
  const keys: IdentityKey[] = [];
  const email = normalizeEmail(row.email, gmailDots);
  if (email) keys.push({ kind: 'email', value: email });
  const first = clean(row.first_name);
  const last = clean(row.last_name);
  const country = clean(row.country_code).toUpperCase();
  if (nameKey && first && last && country) keys.push({ kind: 'name', value: `${first}|${last}|${country}` });
  const click = typeof row.click_id === 'string' ? row.click_id.trim() : '';
  if (click) keys.push({ kind: 'click', value: click });
  return keys;
}
