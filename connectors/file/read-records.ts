/**
 * Reads a file of spec records: NDJSON (one JSON value per line, streamed, so an import of
 * millions of lines runs in bounded memory) or one JSON array (read whole; what a bulk payload is).
 * The format is told by the first non-whitespace character: `[` starts an array.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { RawRecord } from '../../src/types.js';

/**
 * A record of the file: `position` is 1-based (blank NDJSON lines are not counted); `value` is the
 * parsed JSON, or the raw line text with `parseError` set when the line is not JSON (kept for rejects).
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

const BOM = '\uFEFF';
const NON_WHITESPACE = /[^ \t\r\n]/;

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

/** Opens `path` (`-` reads `stdin`) and tells its format; the records are read as they are iterated. */
export async function openRecordFile(path: string, stdin: Readable): Promise<RecordFile> {
  const name = path === '-' ? 'stdin' : path;
  const source = path === '-' ? stdin : createReadStream(path);
  const chunks = decodedChunks(source, name)[Symbol.asyncIterator]();

  // Read just far enough to see the first character that is not whitespace (or a leading BOM).
  const head: string[] = [];
  let first: string | undefined;
  while (first === undefined) {
    const next = await chunks.next();
    if (next.done) break;
    const text = head.length === 0 && next.value.startsWith(BOM) ? next.value.slice(1) : next.value;
    head.push(text);
    first = NON_WHITESPACE.exec(text)?.[0];
  }
  async function* text(): AsyncGenerator<string> {
    try {
      yield* head;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    } finally {
      await chunks.return?.(undefined);
    }
  }

  if (first === '[') {
    let whole = '';
    for await (const part of text()) whole += part;
    let parsed: unknown;
    try {
      parsed = JSON.parse(whole);
    } catch (error) {
      throw new RecordFileError(`cannot parse ${name} as a JSON array: ${jsonErrorText(error)}`, { cause: error });
    }
    return { name, format: 'json-array', records: arrayRecords(parsed as unknown[]) };
  }
  return { name, format: 'ndjson', records: ndjsonRecords(Readable.from(text(), { objectMode: false }), name) };
}

/** The source as text; read errors become RecordFileErrors naming the file. */
async function* decodedChunks(source: Readable, name: string): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  try {
    for await (const chunk of source as AsyncIterable<Buffer | string>) {
      const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
      if (text !== '') yield text;
    }
  } catch (error) {
    throw new RecordFileError(`cannot read ${name}: ${readErrorText(error)}`, { cause: error });
  }
  const rest = decoder.end();
  if (rest !== '') yield rest;
}

async function* arrayRecords(values: readonly unknown[]): AsyncGenerator<FileRecord> {
  for (let i = 0; i < values.length; i++) yield { position: i + 1, value: values[i] };
}

async function* ndjsonRecords(input: Readable, name: string): AsyncGenerator<FileRecord> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  // readline does not pass on errors of its input; keep the first one and end the lines with it.
  let failure: unknown;
  input.once('error', (error) => {
    failure = error;
    lines.close();
  });
  let position = 0;
  try {
    for await (const line of lines) {
      if (line.trim() === '') continue;
      position++;
      yield parseLine(line, position);
    }
  } finally {
    lines.close();
    input.destroy();
  }
  if (failure !== undefined) {
    throw failure instanceof RecordFileError ? failure : new RecordFileError(`cannot read ${name}: ${readErrorText(failure)}`, { cause: failure });
  }
}

function parseLine(line: string, position: number): FileRecord {
  try {
    return { position, value: JSON.parse(line) as unknown };
  } catch (error) {
    return { position, value: line, parseError: jsonErrorText(error) };
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
