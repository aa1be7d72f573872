/**
 * The service's JSON parser for partner input (import files, push bodies, pulled pages). It builds
 * the same values as JSON.parse and also reports what JSON.parse hides:
 *
 * - `duplicate_key`: a name given twice in one object (JSON.parse keeps the last one silently; a
 *   repeated amount is ambiguous money).
 * - `exact_number`: a number whose written decimal value is not the value of the double it parses
 *   to (`1.0000000000000001` becomes 1). Every number of at most 15 significant digits is exactly
 *   its double's shortest text, so only numbers of more than 15 significant digits are reported,
 *   which the spec's 15-digit rule refuses anyway: the rules thus judge the number as written, and
 *   a number that passes is stored as exactly the decimal that was sent.
 *
 * Keys named `__proto__` stay plain own properties, as JSON.parse makes them.
 */

export interface JsonIssue {
  /** Path of the value: object keys and array indexes from the top. */
  path: (string | number)[];
  rule: 'duplicate_key' | 'exact_number';
  message: string;
}

export interface StrictJsonResult {
  value: unknown;
  /** Empty when nothing is wrong. */
  issues: JsonIssue[];
}

const NO_ISSUES: JsonIssue[] = [];

/** Parses `text` as one JSON document; throws a SyntaxError like JSON.parse's for malformed JSON. */
export function parseStrictJson(text: string): StrictJsonResult {
  const parser = new Parser(text);
  parser.space();
  const value = parser.value();
  parser.space();
  if (parser.at < text.length) parser.fail('unexpected text after the JSON value');
  return { value, issues: parser.issues ?? NO_ISSUES };
}

/** Path of an issue relative to one element of the top-level array (or the whole document). */
export function issueField(path: readonly (string | number)[]): string {
  return path.length === 0 ? '(record)' : path.map(String).join('.');
}

class Parser {
  at = 0;
  issues: JsonIssue[] | undefined;
  private readonly path: (string | number)[] = [];

  constructor(private readonly text: string) {}

  fail(what: string): never {
    throw new SyntaxError(`${what} at position ${this.at}`);
  }

  space(): void {
    const t = this.text;
    let i = this.at;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
    this.at = i;
  }

  private issue(rule: JsonIssue['rule'], message: string, key?: string): void {
    const path = key === undefined ? this.path.slice() : [...this.path, key];
    (this.issues ??= []).push({ path, rule, message });
  }

  value(): unknown {
    const c = this.text.charCodeAt(this.at);
    if (c === 0x22) return this.string();
    if (c === 0x7b) return this.object();
    if (c === 0x5b) return this.array();
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    if (this.text.startsWith('true', this.at)) { this.at += 4; return true; }
    if (this.text.startsWith('false', this.at)) { this.at += 5; return false; }
    if (this.text.startsWith('null', this.at)) { this.at += 4; return null; }
    return this.fail(this.at >= this.text.length ? 'unexpected end of JSON input' : 'unexpected character');
  }

  private object(): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.at++;
    this.space();
    if (this.text.charCodeAt(this.at) === 0x7d) { this.at++; return result; }
    for (;;) {
      if (this.text.charCodeAt(this.at) !== 0x22) this.fail('expected a property name');
      const key = this.string();
      this.space();
      if (this.text.charCodeAt(this.at) !== 0x3a) this.fail("expected ':'");
      this.at++;
      this.space();
      this.path.push(key);
      const member = this.value();
      this.path.pop();
      if (seen.has(key)) {
        this.issue('duplicate_key', `field ${JSON.stringify(key)} is given more than once in one object; send it once`, key);
      } else seen.add(key);
      if (key === '__proto__') Object.defineProperty(result, key, { value: member, writable: true, enumerable: true, configurable: true });
      else result[key] = member;
      this.space();
      const c = this.text.charCodeAt(this.at++);
      if (c === 0x7d) return result;
      if (c !== 0x2c) { this.at--; this.fail("expected ',' or '}'"); }
      this.space();
    }
  }

  private array(): unknown[] {
    const result: unknown[] = [];
    this.at++;
    this.space();
    if (this.text.charCodeAt(this.at) === 0x5d) { this.at++; return result; }
    for (;;) {
      this.path.push(result.length);
      result.push(this.value());
      this.path.pop();
      this.space();
      const c = this.text.charCodeAt(this.at++);
      if (c === 0x5d) return result;
      if (c !== 0x2c) { this.at--; this.fail("expected ',' or ']'"); }
      this.space();
    }
  }

  private string(): string {
    const t = this.text;
    const start = ++this.at;
    let i = start;
    // Fast path: no escapes.
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 0x22) { this.at = i + 1; return t.slice(start, i); }
      if (c === 0x5c) break;
      if (c < 0x20 || Number.isNaN(c)) { this.at = i; this.fail(Number.isNaN(c) ? 'unterminated string' : 'control character in string'); }
      i++;
    }
    let out = t.slice(start, i);
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 0x22) { this.at = i + 1; return out; }
      if (Number.isNaN(c) || c < 0x20) { this.at = i; this.fail(Number.isNaN(c) ? 'unterminated string' : 'control character in string'); }
      if (c !== 0x5c) {
        let j = i + 1;
        while (j < t.length) { const d = t.charCodeAt(j); if (d === 0x22 || d === 0x5c || d < 0x20) break; j++; }
        out += t.slice(i, j);
        i = j;
        continue;
      }
      const e = t.charCodeAt(i + 1);
      switch (e) {
        case 0x22: out += '"'; break;
        case 0x5c: out += '\\'; break;
        case 0x2f: out += '/'; break;
        case 0x62: out += '\b'; break;
        case 0x66: out += '\f'; break;
        case 0x6e: out += '\n'; break;
        case 0x72: out += '\r'; break;
        case 0x74: out += '\t'; break;
        case 0x75: {
          const hex = t.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) { this.at = i; this.fail('bad \\u escape'); }
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
          break;
        }
        default: this.at = i; this.fail('bad escape');
      }
      i += 2;
    }
  }

  private number(): number {
    const t = this.text;
    const start = this.at;
    let i = start;
    if (t.charCodeAt(i) === 0x2d) i++;
    const first = t.charCodeAt(i);
    if (first === 0x30) i++;
    else if (first >= 0x31 && first <= 0x39) { do i++; while (isDigit(t.charCodeAt(i))); }
    else { this.at = i; this.fail('bad number'); }
    let fractionAt = -1;
    if (t.charCodeAt(i) === 0x2e) {
      fractionAt = ++i;
      if (!isDigit(t.charCodeAt(i))) { this.at = i; this.fail('bad number'); }
      do i++; while (isDigit(t.charCodeAt(i)));
    }
    let exponent = false;
    const e = t.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      exponent = true;
      i++;
      const s = t.charCodeAt(i);
      if (s === 0x2b || s === 0x2d) i++;
      if (!isDigit(t.charCodeAt(i))) { this.at = i; this.fail('bad number'); }
      do i++; while (isDigit(t.charCodeAt(i)));
    }
    this.at = i;
    const source = t.slice(start, i);
    const n = Number(source);
    // At most 15 digits in all cannot be inexact (see the module comment); only longer texts are compared.
    if (i - start - (fractionAt >= 0 ? 1 : 0) - (n < 0 || source.startsWith('-') ? 1 : 0) > 15 || exponent) {
      if (!sameDecimal(source, n)) {
        this.issue('exact_number', `number ${source} cannot be kept exactly (more than 15 significant digits); send at most 15`);
      }
    }
    return n;
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Digits without leading/trailing zeros and the power of ten of the last digit: the decimal's value. */
function canonical(text: string): string {
  let t = text.startsWith('-') ? text.slice(1) : text;
  let exponent = 0;
  const e = t.search(/[eE]/);
  if (e >= 0) { exponent = Number(t.slice(e + 1)); t = t.slice(0, e); }
  const point = t.indexOf('.');
  if (point >= 0) { exponent -= t.length - point - 1; t = t.slice(0, point) + t.slice(point + 1); }
  t = t.replace(/^0+/, '');
  if (t === '') return '0';
  const trimmed = t.replace(/0+$/, '');
  return `${trimmed}e${exponent + (t.length - trimmed.length)}`;
}

/** True when the decimal written as `source` equals the shortest decimal of the double n. */
function sameDecimal(source: string, n: number): boolean {
  if (!Number.isFinite(n)) return false;
  return canonical(source) === canonical(String(Math.abs(n)));
}
