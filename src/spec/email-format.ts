/**
 * The `email` format (spec §2.1: "must be a valid e-mail if provided"): what the JSON Schema
 * `email` format names, an RFC 5321 §4.1.2 Mailbox, `local-part@domain`, in ASCII:
 *
 * - local part: a dot-string (atoms of letters, digits and ``!#$%&'*+-/=?^_`{|}~`` joined by
 *   single dots) or a quoted string (`"joe bloggs"@example.com`, `"joe@bloggs"@...`, with `\`
 *   escaping a character); at most 64 characters (RFC 5321 §4.5.3.1.1);
 * - domain: a domain name of at least two labels (letters, digits, hyphens inside; each at most
 *   63 characters; at most 255 in all), or an address literal: `[127.0.0.1]` or `[IPv6:::1]`.
 *
 * Quoted local parts and address literals are accepted on purpose: they are valid addresses, and
 * the schemas handed to partners say `format: email`, which a partner's own validator accepts
 * them by; refusing them here would reject records the partner checked as valid. Deliberately
 * narrower than RFC 5321: a domain of one label (`joe@localhost`) is refused (no address on the
 * internet has one), and the other address-literal tags (`[tag:...]`, none registered besides
 * IPv6) are refused. Deliberately wider: RFC 5321's size limits (64 characters of local part,
 * 63 per label, 255 of domain, §4.5.3.1) are not applied, as common `format: email` validators
 * do not apply them either; the schema's `maxLength` (500) is the limit. Non-ASCII addresses
 * (RFC 6531) are the `idn-email` format, not this one.
 */
import { isIPv4, isIPv6 } from 'node:net';

const ATEXT_SYMBOLS = "!#$%&'*+-/=?^_`{|}~";

// Lookup tables by character code (ASCII): 1 = a letter or digit, 2 = another atext character.
const ATEXT = new Uint8Array(128);
for (let c = 48; c <= 57; c += 1) ATEXT[c] = 1;
for (let c = 65; c <= 90; c += 1) ATEXT[c] = 1;
for (let c = 97; c <= 122; c += 1) ATEXT[c] = 1;
for (const symbol of ATEXT_SYMBOLS) ATEXT[symbol.charCodeAt(0)] = 2;

function isAlnum(c: number): boolean {
  return c < 128 && ATEXT[c] === 1;
}

function isAtext(c: number): boolean {
  return c < 128 && ATEXT[c] !== 0;
}

/** The index of the `@` after a valid local part starting at 0, or -1. */
function localPartEnd(text: string): number {
  const n = text.length;
  if (text.charCodeAt(0) === 34) {
    // Quoted-string: qtextSMTP is %d32-33 / %d35-91 / %d93-126; a backslash escapes %d32-126.
    let i = 1;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 34) break;
      if (c === 92) {
        const next = text.charCodeAt(i + 1);
        if (!(next >= 32 && next <= 126)) return -1;
        i += 2;
      } else if (c >= 32 && c <= 126) i += 1;
      else return -1;
    }
    if (i >= n) return -1;
    return text.charCodeAt(i + 1) === 64 ? i + 1 : -1;
  }
  // Dot-string: atoms joined by single dots, no dot first or last.
  let i = 0;
  let atomStart = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 64) break;
    if (c === 46) {
      if (i === atomStart) return -1;
      atomStart = i + 1;
    } else if (!isAtext(c)) return -1;
    i += 1;
  }
  if (i >= n || i === atomStart) return -1;
  return i;
}

/** The domain `text.slice(from)` is a domain name of two labels or more. */
function isDomainName(domain: string, from: number): boolean {
  let labels = 0;
  let start = from;
  for (let i = from; i <= domain.length; i += 1) {
    const c = i < domain.length ? domain.charCodeAt(i) : 46;
    if (c === 46) {
      const length = i - start;
      if (length < 1 || domain.charCodeAt(start) === 45 || domain.charCodeAt(i - 1) === 45) return false;
      labels += 1;
      start = i + 1;
    } else if (!isAlnum(c) && c !== 45) return false;
  }
  return labels >= 2;
}

function isAddressLiteral(domain: string): boolean {
  if (domain.charCodeAt(0) !== 91 || domain.charCodeAt(domain.length - 1) !== 93) return false;
  const inner = domain.slice(1, -1);
  if (inner.startsWith('IPv6:')) {
    const address = inner.slice(5);
    return !address.includes('%') && isIPv6(address);
  }
  return isIPv4(inner);
}

export function isEmail(text: string): boolean {
  const at = localPartEnd(text);
  if (at < 1) return false;
  if (at + 1 >= text.length) return false;
  return text.charCodeAt(at + 1) === 91 ? isAddressLiteral(text.slice(at + 1)) : isDomainName(text, at + 1);
}
