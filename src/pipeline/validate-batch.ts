import type { Entity, RawRecord, RecordValidator, SpecRecord, Variant } from '../types.js';
import type { NewReject } from '../store/rejects.js';
import { setMeta } from '../store/record-meta.js';
import { readableKey } from '../store/reject-lifecycle.js';
import { entityTable } from '../store/tables.js';
import { recordVersion } from '../store/versions.js';
import { ENCODING_RULE } from '../spec/json-issues.js';

export interface ValidatedBatch {
  valid: SpecRecord[];
  rejects: NewReject[];
}

/**
 * Splits a batch into records that pass the spec's schema and rejects with their violations. A
 * valid record keeps its position, version and source record beside it (../store/record-meta.ts);
 * a reject keeps its record key and version when they can be read, so a later valid version of
 * the same record closes it.
 */
export function validateBatch(validator: RecordValidator, variant: Variant, entity: Entity, records: readonly RawRecord[]): ValidatedBatch {
  const valid: SpecRecord[] = [];
  const rejects: NewReject[] = [];
  const table = entityTable(variant, entity);
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
      // The mapping failed: no spec record, so no key to read (the raw payload or a replay closes it).
      rejects.push({ position: record.position, payload, origin, errors: record.mappingErrors, version: recordVersion(entity, record, undefined) });
      continue;
    }
    const violations = validator.validate(variant, entity, record.value);
    const version = recordVersion(entity, record, record.value);
    if (violations.length === 0) {
      const value = record.value as SpecRecord;
      valid.push(value);
      if (version !== undefined || record.source !== undefined) setMeta(value, { position: record.position, version, source: record.source });
    } else {
      // A key holding bytes that are not UTF-8 is not the key that was sent: none is read.
      const keyUnknown = violations.some((v) => v.rule === ENCODING_RULE && table.key.includes(v.field));
      rejects.push({ position: record.position, payload, origin, errors: violations, key: keyUnknown ? undefined : readableKey(table, record.value), version });
    }
  }
  return { valid, rejects };
}
