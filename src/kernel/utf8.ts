/**
 * Decoding partner bytes as UTF-8 without losing track of bytes that are not UTF-8. Node's
 * decoders put U+FFFD in their place silently, so `id-\xff` and `id-\xfe` would both read
 * `id-\uFFFD`, one customer. Here each byte that is not part of a UTF-8 character becomes the lone
 * surrogate U+DC00 + byte (U+DCFF for 0xFF; the "surrogateescape" of other languages), and the
 * offsets of those characters are returned, so the JSON parser can tell which strings hold them
 * (./strict-json.ts, rule `encoding`) and the record be rejected instead of merged. The two records
 * stay two (their rejects' payloads differ, `"id-\udcff"` and `"id-\udcfe"` in JSON) and say which
 * bytes were sent; written out as UTF-8, a lone surrogate becomes U+FFFD.
 *
 * Valid UTF-8, the usual case, costs one `isUtf8` check (native, vectorized) and the plain decode.
 */
import { isUtf8 } from 'node:buffer';

export interface DecodedText {
  text: string;
  /** Ascending offsets in `text` of the characters (U+DC80..U+DCFF) that stand for undecodable bytes; absent when none. */
  undecodable?: number[];
}

export function decodeUtf8(bytes: Buffer): DecodedText {
  if (isUtf8(bytes)) return { text: bytes.toString('utf8') };
  const parts: string[] = [];
  const undecodable: number[] = [];
  let length = 0;
  let runStart = 0;
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const size = sequenceSize(bytes, i);
    if (size > 0) {
      i += size;
      continue;
    }
    if (i > runStart) {
      const run = bytes.toString('utf8', runStart, i);
      parts.push(run);
      length += run.length;
    }
    for (let k = 0; k < -size; k++) {
      undecodable.push(length);
      parts.push(String.fromCharCode(0xdc00 + (bytes[i + k] as number)));
      length += 1;
    }
    i += -size;
    runStart = i;
  }
  if (runStart < n) parts.push(bytes.toString('utf8', runStart, n));
  return { text: parts.join(''), undecodable };
}

const inRange = (b: number | undefined, low: number, high: number): boolean => b !== undefined && b >= low && b <= high;

/**
 * The length of the well-formed sequence at `i` (Unicode 15, table 3-7), or minus the length of
 * the maximal ill-formed subpart there (the bytes that are no character).
 */
function sequenceSize(b: Buffer, i: number): number {
  const b0 = b[i] as number;
  if (b0 < 0x80) return 1;
  let low = 0x80;
  let high = 0xbf;
  let size: number;
  if (b0 >= 0xc2 && b0 <= 0xdf) size = 2;
  else if (b0 >= 0xe0 && b0 <= 0xef) {
    size = 3;
    if (b0 === 0xe0) low = 0xa0;
    else if (b0 === 0xed) high = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    size = 4;
    if (b0 === 0xf0) low = 0x90;
    else if (b0 === 0xf4) high = 0x8f;
  } else return -1;
  if (!inRange(b[i + 1], low, high)) return -1;
  for (let k = 2; k < size; k++) if (!inRange(b[i + k], 0x80, 0xbf)) return -k;
  return size;
}
