/**
 * Reads a file of spec records: NDJSON (one JSON value per line, streamed, so an import of
 * millions of lines runs in bounded memory) or one JSON array (read whole; what a bulk payload is).
 * The format is told by the first non-whitespace character: `[` starts an array.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { parsePartnerJson } from '../../src/kernel/strict-json.js';
import { decodeUtf8 } from '../../src/kernel/utf8.js';
import type { RawRecord } from '../../src/types.js';

/**
 * A record of the file: `position` is 1-based (blank NDJSON lines are not counted); `value` is the
 * parsed JSON, or the raw line text with `parseError` set when the line is not JSON (kept for rejects).
 * What the text hid from the value (a duplicate key, a number parsed to another value, bytes that
 * are not UTF-8) travels with the value (src/kernel/strict-json.ts `jsonIssuesOf`) and makes the
 * record a reject at validation.
 */
export type FileRecord = RawRecord;

export interface RecordFile {
  /** The path as given, or "stdin". */
  name: string;
  format: 'ndjson' | 'json-array';
  /** The records in file order; iterate once. */
  records: AsyncIterable<FileRecord>;
}

/** The file cannot be read, or is a JSON array that cannot be parsed. The message names the file. */
export class RecordFileError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RecordFileError';
  }
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const LF = 0x0a;
const CR = 0x0d;

/**
 * Throws the RecordFileError reading `path` would (no such file, permission denied, a directory),
 * without reading it; `-` (stdin) passes. So a command given several files can refuse before it
 * loads any of them.
 */
export async function assertReadable(path: string): Promise<void> {
  if (path === '-') return;
  try {
    const handle = await open(path, 'r');
    try {
      if ((await handle.stat()).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new RecordFileError(`cannot read ${path}: ${readErrorText(error)}`, { cause: error });
  }
}

/**
 * Opens `path` (`-` reads `stdin`) and tells its format; the records are read as they are iterated.
 * The file is read as bytes and decoded here, not by the stream: a decoder would put U+FFFD in
 * place of bytes that are not UTF-8 without a word (./../../src/kernel/utf8.ts).
 */
export async function openRecordFile(path: string, stdin: Readable): Promise<RecordFile> {
  const name = path === '-' ? 'stdin' : path;
  const source = path === '-' ? stdin : createReadStream(path);
  const chunks = byteChunks(source, name)[Symbol.asyncIterator]();

  // Read just far enough to see the first byte that is not whitespace (after a leading BOM).
  const head: Buffer[] = [];
  let read: Buffer = Buffer.alloc(0);
  let scanned = 0;
  let first: number | undefined;
  while (first === undefined) {
    const next = await chunks.next();
    if (next.done) break;
    head.push(next.value);
    read = head.length === 1 ? next.value : Buffer.concat([read, next.value]);
    // A BOM may come split across chunks: wait for its three bytes before looking past it.
    if (read.length < BOM.length && BOM.subarray(0, read.length).equals(read)) continue;
    if (scanned === 0 && read.subarray(0, BOM.length).equals(BOM)) scanned = BOM.length;
    for (; scanned < read.length && first === undefined; scanned++) {
      const b = read[scanned] as number;
      if (b !== 0x20 && b !== 0x09 && b !== CR && b !== LF) first = b;
    }
  }
  const headParts = read.subarray(0, BOM.length).equals(BOM) ? [...dropBytes(head, BOM.length)] : head;
  async function* bytes(): AsyncGenerator<Buffer> {
    try {
      yield* headParts;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    } finally {
      await chunks.return?.(undefined);
    }
  }

  if (first === 0x5b) {
    const parts: Buffer[] = [];
    for await (const part of bytes()) parts.push(part);
    const { text, undecodable } = decodeUtf8(Buffer.concat(parts));
    let parsed: unknown;
    try {
      parsed = parsePartnerJson(text, { undecodable }).value;
    } catch (error) {
      throw new RecordFileError(`cannot parse ${name} as a JSON array: ${jsonErrorText(error)}${undecodable ? ' (the file is not valid UTF-8)' : ''}`, { cause: error });
    }
    return { name, format: 'json-array', records: arrayRecords(parsed as unknown[]) };
  }
  return { name, format: 'ndjson', records: ndjsonRecords(bytes(), source) };
}

function* dropBytes(parts: readonly Buffer[], count: number): Generator<Buffer> {
  let left = count;
  for (const part of parts) {
    if (left >= part.length) {
      left -= part.length;
      continue;
    }
    yield left > 0 ? part.subarray(left) : part;
    left = 0;
  }
}

/** The source as bytes; read errors become RecordFileErrors naming the file. */
async function* byteChunks(source: Readable, name: string): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of source as AsyncIterable<Buffer | string>) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      if (bytes.length > 0) yield bytes;
    }
  } catch (error) {
    throw failure(error, name);
  } finally {
    source.destroy();
  }
}

function failure(error: unknown, name: string): RecordFileError {
  return error instanceof RecordFileError ? error : new RecordFileError(`cannot read ${name}: ${readErrorText(error)}`, { cause: error });
}

async function* arrayRecords(values: readonly unknown[]): AsyncGenerator<FileRecord> {
  for (let i = 0; i < values.length; i++) yield { position: i + 1, value: values[i] };
}

/**
 * The lines of NDJSON bytes. CR and LF never occur inside a multi-byte UTF-8 character, so the
 * bytes are cut there; CR LF, a lone CR and a lone LF all end a line (the blank line between CR
 * and LF is skipped like any blank line). A run of whole lines that is valid UTF-8 is decoded at
 * once; otherwise each line is decoded alone, so that only its own bad bytes are reported.
 */
async function* ndjsonRecords(input: AsyncIterable<Buffer>, source: Readable): AsyncGenerator<FileRecord> {
  let position = 0;
  let pending: Buffer[] = [];
  const record = (text: string, undecodable?: number[]): FileRecord | undefined => {
    if (text.trim() === '') return undefined;
    position++;
    return parseLine(text, position, undecodable);
  };
  function* linesOf(block: Buffer): Generator<FileRecord> {
    const decoded = decodeUtf8(block);
    if (decoded.undecodable === undefined) {
      const text = decoded.text;
      const lines = text.includes('\r') ? text.split(/\r\n?|\n/) : text.split('\n');
      for (const line of lines) {
        const r = record(line);
        if (r) yield r;
      }
      return;
    }
    let start = 0;
    for (let i = 0; i <= block.length; i++) {
      if (i < block.length && block[i] !== LF && block[i] !== CR) continue;
      const line = decodeUtf8(block.subarray(start, i));
      const r = record(line.text, line.undecodable);
      if (r) yield r;
      start = i + 1;
    }
  }
  try {
    for await (const chunk of input) {
      const cut = Math.max(chunk.lastIndexOf(LF), chunk.lastIndexOf(CR));
      if (cut < 0) {
        pending.push(chunk);
        continue;
      }
      const block = pending.length === 0 ? chunk.subarray(0, cut) : Buffer.concat([...pending, chunk.subarray(0, cut)]);
      pending = cut + 1 < chunk.length ? [chunk.subarray(cut + 1)] : [];
      yield* linesOf(block);
    }
    if (pending.length > 0) yield* linesOf(Buffer.concat(pending));
  } finally {
    source.destroy();
  }
}

function parseLine(line: string, position: number, undecodable: number[] | undefined): FileRecord {
  try {
    return { position, value: parsePartnerJson(line, { undecodable }).value };
  } catch (error) {
    return { position, value: line, parseError: jsonErrorText(error) + (undecodable ? ' (the line is not valid UTF-8)' : '') };
  }
}

/**
 * JSON.parse's message without the excerpt of the input that V8 adds to some messages
 * (`Unexpected token 'x', "{"email":"x..." is not valid JSON`): records may hold personal data.
 */
function jsonErrorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '');
}

function readErrorText(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    default:
      return message ?? String(error);
  }
}
