/**
 * Text and JSON that the stores can hold whatever a partner sent. PostgreSQL's text and jsonb
 * cannot hold U+0000 (NUL), raw or as the JSON escape `\u0000`, and a reject or a parked record
 * that fails its write would fail the whole batch with it: the one place a bad record must be
 * kept would lose everything. So before such a write every NUL becomes the six visible characters
 * `\u0000` (in both stores, so they keep the same thing). A reject payload that was a parsed
 * record keeps its NUL, as the JSON escape inside the payload's text, so a replay meets it again.
 */

const NUL = '\u0000';
const NUL_ESCAPE = '\\u0000';

/** A text with every NUL written as the visible `\u0000`. */
export function escapeNul(text: string): string {
  return text.indexOf(NUL) < 0 ? text : text.split(NUL).join(NUL_ESCAPE);
}

/** A JSON value's strings and keys with every NUL escaped (the value itself when it holds none). */
function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return escapeNul(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(withoutNul);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[escapeNul(key)] = withoutNul(item);
  return out;
}

/** JSON text for a jsonb (or JSON text) column: `JSON.stringify`, with NULs escaped when there are any. */
export function storableJson(value: unknown): string {
  const text = JSON.stringify(value);
  // A NUL anywhere in the value shows in the JSON text as this escape (a literal backslash before
  // `u0000` does too, and only costs the slower path).
  return text.includes(NUL_ESCAPE) ? JSON.stringify(withoutNul(value)) : text;
}
