import type { SpecRecord } from '../types.js';
import { type Column, type EntityTable, VERSION_COLUMN, isVersioned } from './tables.js';
import { decimalText, fromStoreDate, fromStoreDecimal, fromStoreTimestamp } from './values.js';
import { toUtcTimestamp } from '../kernel/timestamp.js';
import { versionOf } from './record-meta.js';

/** A store row in column order: partner_id, the table's spec columns, run_id, loaded_at (then source_version on versioned tables). */
export type Row = (string | number | null)[];

export function rowColumns(table: EntityTable): string[] {
  return ['partner_id', ...table.columns.map((c) => c.name), 'run_id', 'loaded_at', ...(isVersioned(table) ? [VERSION_COLUMN] : [])];
}

function toStoreValue(column: Column, value: unknown): string | number | null {
  if (value === null || value === undefined) return null;
  switch (column.kind) {
    case 'timestamp':
      return toUtcTimestamp(value as string);
    case 'decimal':
      return decimalText(value as number);
    case 'integer':
      return value as number;
    default:
      return value as string;
  }
}

/** A validated spec record → a store row. */
export function recordToRow(table: EntityTable, partner: string, record: SpecRecord, runId: string, loadedAt: string): Row {
  const row: Row = [partner];
  for (const column of table.columns) row.push(toStoreValue(column, record[column.name]));
  row.push(runId, loadedAt);
  if (isVersioned(table)) row.push(versionOf(record) ?? null);
  return row;
}

/** The upsert key of a validated record as stored text (waiting records): exact, JSON for composite keys. */
export function recordKey(table: EntityTable, record: SpecRecord): string {
  if (table.key.length === 1) return String(record[table.key[0] as string]);
  return JSON.stringify(table.key.map((k) => record[k]));
}

/**
 * The upsert key as an in-memory map key, cheaper than `recordKey` on the hot path. NUL cannot
 * occur in a stored text value (PostgreSQL refuses it), so joining on it cannot make two keys meet.
 */
export function batchKey(table: EntityTable, record: SpecRecord): string {
  const key = table.key;
  if (key.length === 1) return String(record[key[0] as string]);
  let out = String(record[key[0] as string]);
  for (let i = 1; i < key.length; i++) out += '\u0000' + String(record[key[i] as string]);
  return out;
}

/** A store row read back (knex object) → a spec record, absent optional fields omitted. */
export function storedToRecord(table: EntityTable, stored: Record<string, unknown>): SpecRecord {
  const record: SpecRecord = {};
  for (const column of table.columns) {
    const raw = stored[column.name];
    if (raw === null || raw === undefined) continue;
    record[column.name] =
      column.kind === 'timestamp' ? fromStoreTimestamp(raw)
      : column.kind === 'decimal' ? fromStoreDecimal(raw)
      : column.kind === 'date' ? fromStoreDate(raw)
      : column.kind === 'integer' ? Number(raw)
      : raw;
  }
  return record;
}
