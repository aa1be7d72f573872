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
 * - `encoding`: a string holding bytes that are not UTF-8 (given the offsets of the characters
 *   that stand for them, see ./utf8.ts): what was meant is not known.
 *
 * Keys named `__proto__` stay plain own properties, as JSON.parse makes them.
 *
 * The issues also travel with the parsed value: every object or array on an issue's path carries
 * the issues below it (paths relative to it) in a hidden property, read with `jsonIssuesOf`. So a
 * record handed on alone (an element of a file's array, a record of a pulled page) still says what
 * its text hid, and the validator turns that into the record's violations (src/spec/json-issues.ts).
 *
 * `parsePartnerJson` is the parser to call on the load path: JSON.parse, then one scan of the text
 * that tells whether anything could be wrong (an object member more than the value holds, a number
 * of more than 15 digits or with an exponent); only then is the text parsed again here. The dated
 * measurement is in bench/README.md.
 */

export interface JsonIssue {
  /** Path of the value: object keys and array indexes from the top. */
  path: (string | number)[];
  rule: 'duplicate_key' | 'exact_number' | 'encoding';
  message: string;
  /** `exact_number`: the number as written. */
  written?: string;
}

export interface ParseOptions {
  /**
   * Ascending offsets of the characters of `text` that stand for bytes that were not UTF-8 (put in
   * by the decoding, ./utf8.ts): a string holding one gets an `encoding` issue.
   */
  undecodable?: readonly number[];
}

export interface StrictJsonResult {
  value: unknown;
  /** Empty when nothing is wrong. */
  issues: JsonIssue[];
}

const NO_ISSUES: JsonIssue[] = Object.freeze([]) as unknown as JsonIssue[];
const NO_OFFSETS: readonly number[] = [];

/** Parses `text` as one JSON document; throws a SyntaxError like JSON.parse's for malformed JSON. */
export function parseStrictJson(text: string, options: ParseOptions = {}): StrictJsonResult {
  const parser = new Parser(text, options.undecodable ?? NO_OFFSETS);
  parser.space();
  const value = parser.value();
  parser.space();
  if (parser.at < text.length) parser.fail('unexpected text after the JSON value');
  if (parser.issues === undefined) return { value, issues: NO_ISSUES };
  attachIssues(value, parser.issues);
  return { value, issues: parser.issues };
}

/**
 * The load path's parser: the value and issues of parseStrictJson, at about the cost of JSON.parse
 * when nothing is wrong (see the module comment). Throws a SyntaxError for malformed JSON.
 */
export function parsePartnerJson(text: string, options: ParseOptions = {}): StrictJsonResult {
  if (options.undecodable !== undefined && options.undecodable.length > 0) return parseStrictJson(text, options);
  const value: unknown = JSON.parse(text);
  if (value === null || typeof value !== 'object') {
    // A lone number can still be inexact; a lone string or literal cannot hide anything.
    return typeof value === 'number' ? parseStrictJson(text) : { value, issues: NO_ISSUES };
  }
  const members = plainMembers(text);
  if (members >= 0 && members === memberCount(value)) return { value, issues: NO_ISSUES };
  return parseStrictJson(text);
}

const ISSUES = Symbol('partner-sync json issues');

/** The issues of the text a parsed object or array came from, paths relative to it; undefined when none. */
export function jsonIssuesOf(value: unknown): readonly JsonIssue[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  return (value as { [ISSUES]?: JsonIssue[] })[ISSUES];
}

/**
 * Hands `issue` to a record built elsewhere than from JSON text (a database row whose DECIMAL has
 * more digits than a double keeps), so that it is judged as a parsed record's would be.
 */
export function addJsonIssue(record: object, issue: JsonIssue): void {
  attachIssues(record, [issue]);
}

/** Hands every issue to each object and array on its path, with the path from there. */
function attachIssues(root: unknown, issues: readonly JsonIssue[]): void {
  for (const issue of issues) {
    let node: unknown = root;
    for (let depth = 0; depth <= issue.path.length && node !== null && typeof node === 'object'; depth++) {
      const relative = depth === 0 ? issue : { ...issue, path: issue.path.slice(depth) };
      const holder = node as { [ISSUES]?: JsonIssue[] };
      if (holder[ISSUES] === undefined) Object.defineProperty(holder, ISSUES, { value: [relative], enumerable: false, writable: true, configurable: true });
      else holder[ISSUES].push(relative);
      if (depth < issue.path.length) node = (node as Record<string | number, unknown>)[issue.path[depth] as string | number];
    }
  }
}

/**
 * Object members in the text (colons outside strings), or -1 when a number may be inexact (more
 * than 15 digits, or an exponent): what the strict parse must then look at.
 */
function plainMembers(text: string): number {
  let members = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // To the closing quote: one not preceded by an odd run of backslashes.
      let j = text.indexOf('"', i + 1);
      while (j > 0 && text.charCodeAt(j - 1) === 0x5c) {
        let k = j - 1;
        while (text.charCodeAt(k - 1) === 0x5c) k--;
        if ((j - k) % 2 === 0) break;
        j = text.indexOf('"', j + 1);
      }
      if (j < 0) return -1;
      i = j;
    } else if (c === 0x3a) members++;
    else if (c >= 0x30 && c <= 0x39) {
      let digits = 1;
      let j = i + 1;
      for (; j < n; j++) {
        const d = text.charCodeAt(j);
        if (d >= 0x30 && d <= 0x39) digits++;
        else if (d === 0x65 || d === 0x45) return -1;
        else if (d !== 0x2e) break;
      }
      if (digits > 15) return -1;
      i = j - 1;
    }
  }
  return members;
}

/** Members of every object in a parsed value. */
function memberCount(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value) if (item !== null && typeof item === 'object') count += memberCount(item);
    return count;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    count++;
    const member = record[key];
    if (member !== null && typeof member === 'object') count += memberCount(member);
  }
  return count;
}

/** Path of an issue relative to one element of the top-level array (or the whole document). */
export function issueField(path: readonly (string | number)[]): string {
  return path.length === 0 ? '(record)' : path.map(String).join('.');
}

class Parser {
  at = 0;
  issues: JsonIssue[] | undefined;
  private readonly path: (string | number)[] = [];
  /** Index of the next offset in `undecodable` not yet inside a string. */
  private nextUndecodable = 0;

  constructor(
    private readonly text: string,
    private readonly undecodable: readonly number[],
  ) {}

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

  private issue(rule: JsonIssue['rule'], message: string, key?: string, written?: string): void {
    const path = key === undefined ? this.path.slice() : [...this.path, key];
    (this.issues ??= []).push(written === undefined ? { path, rule, message } : { path, rule, message, written });
  }

  /** An `encoding` issue when an undecodable character lies in the string text[start, end). */
  private checkEncoding(start: number, end: number): void {
    const offsets = this.undecodable;
    let k = this.nextUndecodable;
    while (k < offsets.length && (offsets[k] as number) < start) k++;
    if (k < offsets.length && (offsets[k] as number) < end) {
      this.issue('encoding', 'not valid UTF-8: holds bytes that are no character; send the text as UTF-8');
      while (k < offsets.length && (offsets[k] as number) < end) k++;
    }
    this.nextUndecodable = k;
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
      if (c === 0x22) { this.at = i + 1; if (this.undecodable.length > 0) this.checkEncoding(start, i); return t.slice(start, i); }
      if (c === 0x5c) break;
      if (c < 0x20 || Number.isNaN(c)) { this.at = i; this.fail(Number.isNaN(c) ? 'unterminated string' : 'control character in string'); }
      i++;
    }
    let out = t.slice(start, i);
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 0x22) { this.at = i + 1; if (this.undecodable.length > 0) this.checkEncoding(start, i); return out; }
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
        this.issue('exact_number', `number ${source} cannot be kept exactly (more than 15 significant digits); send at most 15`, undefined, source);
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
