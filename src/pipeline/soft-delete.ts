/**
 * What a source row's soft-delete column says (a stream's `soft_delete`, docs/loading.md,
 * Deletes): a replica's `deleted_at` holds a date-time once the row is deleted, an `is_deleted`
 * flag a true value, a REST record's status one of the values the definition maps to deleted. The sources hand the column over as they read it (a Date, text, a number, a
 * boolean), so the rule is written once here, for every source kind.
 */
import type { Entity } from '../types.js';

const NOT_DELETED = new Set(['', '0', 'f', 'false', 'n', 'no']);

/**
 * Whether the field's value says the record was deleted: one of `values` (compared as text) when
 * the definition names them; else a date-time or a true flag (NULL, false, 0 and empty text say it was not).
 */
export function saysDeleted(value: unknown, values?: readonly (string | number | boolean)[]): boolean {
  if (values) return value !== null && value !== undefined && values.some((v) => String(v) === String(value));
  if (value === null || value === undefined || value === false || value === 0) return false;
  if (typeof value === 'string') return !NOT_DELETED.has(value.trim().toLowerCase());
  return true;
}

/** The spec field naming a record of the entity (what a delete names). */
export const ID_FIELD: Record<Exclude<Entity, 'activity'>, string> & Record<Entity, string> = { customers: 'customer_id', transactions: 'transaction_id', activity: '' };
