/**
 * PostgreSQL COPY text format (tab-separated fields, `\N` for NULL, backslash escapes for
 * backslash, tab, newline and carriage return), written straight into a byte buffer: no string
 * per field or row is built and then encoded again, which on the bulk load path is most of the
 * garbage the process makes.
 */
import type { SpecRecord } from '../types.js';
import { type EntityTable, isVersioned } from './tables.js';
import { decimalText } from './values.js';
import { toUtcTimestamp } from '../kernel/timestamp.js';
import { versionOf } from './record-meta.js';

const TAB = 9;
const NEWLINE = 10;
const CARRIAGE_RETURN = 13;
const BACKSLASH = 92;
const NULL_FIELD = [BACKSLASH, 78 /* N */];

/**
 * Spare COPY buffers, reused batch after batch. A batch's text lives from its rendering until the
 * server has taken it, long enough for the garbage collector to move its Buffer object to the old
 * generation, where nothing frees it until a full collection: fresh buffers per batch piled up as
 * tens of megabytes of dead external memory (RSS). Reused ones keep that to the few in flight.
 */
const spareBuffers: Buffer[] = [];
/** Enough for the batches in flight on a few transactions at once (one rendering, one waiting, one written). */
const SPARE_BUFFERS_MAX = 8;
/** A buffer larger than this (a batch of very wide rows) is left to the garbage collector. */
const SPARE_BUFFER_BYTES_MAX = 4 * 1024 * 1024;

/** A buffer of at least `capacity` bytes, a spare one when one is big enough. */
function takeBuffer(capacity: number): Buffer {
  for (let i = spareBuffers.length - 1; i >= 0; i--) {
    const spare = spareBuffers[i] as Buffer;
    if (spare.length >= capacity) {
      spareBuffers.splice(i, 1);
      return spare;
    }
  }
  return Buffer.allocUnsafe(capacity);
}

/**
 * Gives a writer's buffer back for reuse, once nothing reads it any more (the server has taken the
 * text: the COPY completed). Only buffers owning their whole memory are kept (not slices of Node's
 * shared pool of small buffers).
 */
export function recycleCopyBuffer(buffer: Buffer): void {
  if (buffer.byteOffset !== 0 || buffer.length !== buffer.buffer.byteLength || buffer.length > SPARE_BUFFER_BYTES_MAX) return;
  if (spareBuffers.includes(buffer)) return;
  if (spareBuffers.length >= SPARE_BUFFERS_MAX) spareBuffers.shift();
  spareBuffers.push(buffer);
}

/** A growing buffer of COPY text. */
export class CopyTextWriter {
  private buffer: Buffer;
  private position = 0;

  /** `reuse`: start from a spare buffer (see `recycleCopyBuffer`) when one is big enough. */
  constructor(capacity = 64 * 1024, reuse = false) {
    this.buffer = reuse ? takeBuffer(capacity) : Buffer.allocUnsafe(capacity);
  }

  /** The whole buffer written into (to give back with `recycleCopyBuffer` once its text is sent). */
  get storage(): Buffer {
    return this.buffer;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.position;
  }

  /** The text written (a view of the writer's buffer). */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.position);
  }

  private reserve(bytes: number): void {
    if (this.position + bytes <= this.buffer.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.position + bytes));
    this.buffer.copy(next, 0, 0, this.position);
    this.buffer = next;
  }

  /** A field's value, escaped. */
  text(value: string): void {
    const length = value.length;
    // Worst case: every UTF-16 unit escaped (2 units) and each then 3 bytes of UTF-8.
    this.reserve(length * 6);
    const buffer = this.buffer;
    let at = this.position;
    for (let i = 0; i < length; i++) {
      const c = value.charCodeAt(i);
      if (c >= 128) {
        this.position = at;
        this.position += buffer.write(escape(value.slice(i)), at, 'utf8');
        return;
      }
      if (c === BACKSLASH || c === TAB || c === NEWLINE || c === CARRIAGE_RETURN) {
        buffer[at++] = BACKSLASH;
        buffer[at++] = c === BACKSLASH ? BACKSLASH : c === TAB ? 116 /* t */ : c === NEWLINE ? 110 /* n */ : 114 /* r */;
      } else {
        buffer[at++] = c;
      }
    }
    this.position = at;
  }

  /** Bytes already in COPY form (a field, separators). */
  raw(bytes: Uint8Array | readonly number[]): void {
    const length = bytes.length;
    this.reserve(length);
    const buffer = this.buffer;
    let at = this.position;
    for (let i = 0; i < length; i++) buffer[at++] = bytes[i] as number;
    this.position = at;
  }

  null(): void {
    this.raw(NULL_FIELD);
  }
}

function escape(value: string): string {
  return /[\\\t\n\r]/.test(value)
    ? value.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r')
    : value;
}

/** One field as escaped COPY bytes (for the fields every row of a batch shares). */
function fieldBytes(value: string): Buffer {
  const writer = new CopyTextWriter(value.length * 6 + 1);
  writer.text(value);
  return Buffer.from(writer.bytes());
}

/**
 * A batch's rows: partner_id, the table's spec columns, run_id, loaded_at (then the record's
 * version on versioned tables); one line per record. Values are stored as `recordToRow` stores
 * them (UTC timestamps, exact decimal text).
 */
export function writeCopyRows(writer: CopyTextWriter, table: EntityTable, partner: string, records: readonly SpecRecord[], runId: string, loadedAt: string): void {
  const head = Buffer.concat([fieldBytes(partner), Buffer.from([TAB])]);
  const versioned = isVersioned(table);
  const tail = Buffer.concat([fieldBytes(runId), Buffer.from([TAB]), fieldBytes(loadedAt), Buffer.from(versioned ? [] : [NEWLINE])]);
  const tab = [TAB];
  const newline = [NEWLINE];
  const columns = table.columns;
  for (const record of records) {
    writer.raw(head);
    for (const column of columns) {
      const value = record[column.name];
      if (value === null || value === undefined) writer.null();
      else if (column.kind === 'decimal') writer.text(decimalText(value as number));
      else if (column.kind === 'timestamp') writer.text(toUtcTimestamp(value as string));
      else writer.text(typeof value === 'string' ? value : String(value));
      writer.raw(tab);
    }
    writer.raw(tail);
    if (versioned) {
      writer.raw(tab);
      const version = versionOf(record);
      if (version === undefined) writer.null();
      else writer.text(version);
      writer.raw(newline);
    }
  }
}
