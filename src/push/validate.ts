/**
 * A pushed request is all-or-nothing: every record is checked with the Loader's own validator
 * (the spec's JSON Schemas, the same as for pulled records) before anything is queued, and every
 * error of every record is listed. Nothing of an invalid request reaches the store, not even
 * rejects: the partner has the errors in the answer.
 */
import type { Entity, RecordValidator, Variant } from '../types.js';
import { BULK_LIMIT } from '../spec/validator.js';

export interface PushError {
  /** Position of the record in the request's array (0 for a single-record request). */
  index: number;
  field: string;
  rule: string;
  message: string;
}

/** The errors of a request's records; empty when every record is valid. */
export function validateRecords(validator: RecordValidator, variant: Variant, entity: Entity, records: readonly unknown[]): PushError[] {
  const errors: PushError[] = [];
  records.forEach((record, index) => {
    for (const v of validator.validate(variant, entity, record)) errors.push({ index, field: v.field, rule: v.rule, message: v.message });
  });
  return errors;
}

/** The payload rules of a bulk request (spec §4, §8): a JSON array of 1 to 1000 records. */
export function bulkPayloadErrors(body: unknown): PushError[] {
  if (!Array.isArray(body)) return [{ index: 0, field: '(payload)', rule: 'type', message: 'a bulk request is a JSON array of records' }];
  if (body.length === 0) return [{ index: 0, field: '(payload)', rule: 'minItems', message: 'a bulk request holds at least 1 record' }];
  if (body.length > BULK_LIMIT) {
    return [{ index: 0, field: '(payload)', rule: 'maxItems', message: `bulk payload has ${body.length} records; at most ${BULK_LIMIT} are allowed (spec §8)` }];
  }
  return [];
}
