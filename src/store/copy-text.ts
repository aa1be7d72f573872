/**
 * PostgreSQL COPY text format (tab-separated fields, `\N` for NULL, backslash escapes for
 * backslash, tab, newline and carriage return), written straight into a byte buffer: no string
 * per field or row is built and then encoded again, which on the bulk load path is most of the
 * garbage the process makes.
 */
import type { SpecRecord } from '../types.js';
import type { EntityTable } from './tables.js';
import { decimalText, toUtcTimestamp } from './values.js';

const TAB = 9;
const NEWLINE = 10;
const CARRIAGE_RETURN = 13;
const BACKSLASH = 92;
const NULL_FIELD = [BACKSLASH, 78 /* N */];

/** A growing buffer of COPY text. */
export class CopyTextWriter {
  private buffer: Buffer;
  private position = 0;

  constructor(capacity = 64 * 1024) {
    this.buffer = Buffer.allocUnsafe(capacity);
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
 * A batch's rows: partner_id, the table's spec columns, run_id, loaded_at; one line per record.
 * Values are stored as `recordToRow` stores them (UTC timestamps, exact decimal text).
 */
export function writeCopyRows(writer: CopyTextWriter, table: EntityTable, partner: string, records: readonly SpecRecord[], runId: string, loadedAt: string): void {
  const head = Buffer.concat([fieldBytes(partner), Buffer.from([TAB])]);
  const tail = Buffer.concat([fieldBytes(runId), Buffer.from([TAB]), fieldBytes(loadedAt), Buffer.from([NEWLINE])]);
  const tab = [TAB];
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
  }
}
