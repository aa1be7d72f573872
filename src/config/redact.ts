/**
 * The redactor every log line and reported error passes through: it replaces the definitions'
 * resolved secret values, in the forms they take in text (as is, JSON-escaped once or twice,
 * URL- and form-encoded), and credentials that are not known in advance: `Authorization: Bearer
 * <token>` and `access_token` values (a token fetched at run time is in no definition).
 */
import type { Redact } from '../log.js';

export const REDACTED = '***';

/** Shorter secrets are ignored: replacing every "abc" would mangle ordinary text. */
export const MIN_SECRET_LENGTH = 4;

// The value after an Authorization header name, in text, JSON or escaped JSON; the scheme is kept.
const AUTHORIZATION =
  /(\bauthorization\\*["']?\s*[:=]\s*\\*["']?\s*)(?:(bearer|basic|token|digest)\s+)?([^\s"'\\,;}&]+)/gi;
// Token values in JSON bodies, form bodies and query strings.
const TOKEN_VALUE = /(\b(?:access_token|refresh_token|id_token|client_secret)\\*["']?\s*[:=]\s*\\*["']?)([^\s"'\\,;}&]+)/gi;
// Cheap pre-check: most lines have none of these words.
const CREDENTIAL_WORDS = /authorization|_token|client_secret/i;

export function createRedactor(secrets: readonly string[]): Redact {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) continue;
    for (const form of encodedForms(secret)) if (form.length >= MIN_SECRET_LENGTH) forms.add(form);
  }
  // Longest first, so a secret that contains another is replaced whole.
  const alternatives = [...forms].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const known = alternatives.length > 0 ? new RegExp(alternatives.join('|'), 'g') : undefined;

  return (text: string): string => {
    let out = text;
    if (known !== undefined) out = out.replace(known, REDACTED);
    if (CREDENTIAL_WORDS.test(out)) {
      out = out
        .replace(AUTHORIZATION, (_m, prefix: string, scheme: string | undefined) => `${prefix}${scheme === undefined ? '' : scheme + ' '}${REDACTED}`)
        .replace(TOKEN_VALUE, (_m, prefix: string) => `${prefix}${REDACTED}`);
    }
    return out;
  };
}

/** The ways a secret can appear in a line of text. */
function encodedForms(secret: string): string[] {
  const jsonOnce = JSON.stringify(secret).slice(1, -1);
  const jsonTwice = JSON.stringify(jsonOnce).slice(1, -1);
  const url = encodeURIComponent(secret);
  const form = url.replace(/%20/g, '+');
  return [secret, jsonOnce, jsonTwice, url, form, lowerPercentEscapes(url), lowerPercentEscapes(form)];
}

/** `%2F` → `%2f`: some encoders write lower-case hex. */
function lowerPercentEscapes(text: string): string {
  return text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
