import type { Entity, RawRecord, RecordValidator, SpecRecord, Variant } from '../types.js';
import type { NewReject } from '../store/rejects.js';

export interface ValidatedBatch {
  valid: SpecRecord[];
  rejects: NewReject[];
}

/** Splits a batch into records that pass the spec's schema and rejects with their violations. */
export function validateBatch(validator: RecordValidator, variant: Variant, entity: Entity, records: readonly RawRecord[]): ValidatedBatch {
  const valid: SpecRecord[] = [];
  const rejects: NewReject[] = [];
  for (const record of records) {
    if (record.parseError !== undefined) {
      rejects.push({
        position: record.position,
        payload: typeof record.value === 'string' ? record.value : String(record.value ?? ''),
        origin: 'spec',
        errors: [{ field: '(record)', rule: 'json', message: `not valid JSON: ${record.parseError}` }],
      });
      continue;
    }
    const origin = record.source === undefined ? 'spec' : 'source';
    const payload = record.source === undefined ? record.value : record.source;
    if (record.mappingErrors && record.mappingErrors.length > 0) {
      rejects.push({ position: record.position, payload, origin, errors: record.mappingErrors });
      continue;
    }
    const violations = validator.validate(variant, entity, record.value);
    if (violations.length === 0) valid.push(record.value as SpecRecord);
    else rejects.push({ position: record.position, payload, origin, errors: violations });
  }
  return { valid, rejects };
}
