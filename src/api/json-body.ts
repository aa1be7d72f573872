/**
 * The JSON body parser of the API. Fastify's default parser (secure-json-parse) throws on
 * `__proto__` and `constructor` keys, or strips them; here they stay plain own properties of the
 * parsed object (JSON.parse defines them as data properties, it never sets a prototype), so the
 * validator reports them as unknown properties (422) like any other. Before parsing, one pass over
 * the text refuses nesting deeper than MAX_JSON_DEPTH, so a body of a million `[` can neither
 * blow the stack of a later recursive walk nor build a huge tree: a record is flat, a bulk is an
 * array of records (depth 2).
 *
 * The body is parsed as bytes with the load path's parser (src/kernel/strict-json.ts): a field
 * given twice, a number a double cannot keep, a string holding bytes that are not UTF-8 are not
 * hidden by the parse but carried with each record, and the push validation answers them as 422
 * `validation_failed` naming index, field and rule (`duplicateKey`, `maxSignificantDigits` judged
 * as written, `encoding`), like any other invalid record.
 */
import { parsePartnerJson } from '../kernel/strict-json.js';
import { decodeUtf8 } from '../kernel/utf8.js';

export const MAX_JSON_DEPTH = 32;

/** Error of a body that is not acceptable JSON: answered 400 with this code. */
export class BodyError extends Error {
  override name = 'BodyError';
  constructor(
    readonly code: 'malformed_json' | 'json_too_deep',
    message: string,
  ) {
    super(message);
  }
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The deepest nesting of objects and arrays in the text, stopping early past `limit`. Brackets inside strings do not count. */
export function nestingDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: to the next quote not escaped.
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return deepest;
}

export function parseJsonBody(body: string | Buffer, maxDepth = MAX_JSON_DEPTH): unknown {
  const { text, undecodable } = typeof body === 'string' ? { text: body, undecodable: undefined } : decodeUtf8(body);
  if (text.trim() === '') throw new BodyError('malformed_json', 'the request body is empty; send a JSON document');
  if (nestingDepth(text, maxDepth) > maxDepth) throw new BodyError('json_too_deep', `the JSON body is nested deeper than ${maxDepth} levels`);
  try {
    return parsePartnerJson(text, { undecodable }).value;
  } catch (error) {
    const encoding = undecodable === undefined ? '' : ' (the body is not valid UTF-8)';
    throw new BodyError('malformed_json', `the request body is not valid JSON: ${(error as Error).message}${encoding}`);
  }
}
