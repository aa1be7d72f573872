import type { Entity, RawRecord, RecordValidator, SpecRecord, Variant } from '../types.js';
import type { NewReject } from '../store/rejects.js';
import { setMeta } from '../store/record-meta.js';
import { readableKey } from '../store/reject-lifecycle.js';
import { entityTable } from '../store/tables.js';
import { recordVersion } from '../store/versions.js';
import { ENCODING_RULE } from '../spec/json-issues.js';
import { minimisePayload, minimiseRecord, minimises, PERSONAL_FIELDS, withoutOwnHashes, type PersonalData } from '../spec/personal-data.js';

export interface ValidatedBatch {
  valid: SpecRecord[];
  rejects: NewReject[];
}

/**
 * Splits a batch into records that pass the spec's schema and rejects with their violations. A
 * valid record keeps its position, version and source record beside it (../store/record-meta.ts);
 * a reject keeps its record key and version when they can be read, so a later valid version of
 * the same record closes it.
 *
 * With a `personal` policy that changes anything, a customer record is validated as sent and then
 * minimised (../spec/personal-data.ts) before anything of it is kept: the valid record, the partner's
 * record beside it and a reject's payload alike.
 */
export function validateBatch(validator: RecordValidator, variant: Variant, entity: Entity, records: readonly RawRecord[], personal?: PersonalData): ValidatedBatch {
  const minimise = entity === 'customers' && minimises(personal) ? personal : undefined;
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
    const values = minimise ? personalValues(record.value) : undefined;
    const payload = keptPayload(record.source === undefined ? record.value : record.source, minimise, values);
    if (record.mappingErrors && record.mappingErrors.length > 0) {
      // The mapping failed: no spec record, so no key to read (the raw payload or a replay closes it).
      rejects.push({ position: record.position, payload, origin, errors: record.mappingErrors, version: recordVersion(entity, record, undefined) });
      continue;
    }
    const violations = validator.validate(variant, entity, entity === 'customers' ? withoutOwnHashes(record.value) : record.value);
    const version = recordVersion(entity, record, record.value);
    if (violations.length === 0) {
      const value = record.value as SpecRecord;
      if (minimise) minimiseRecord(value, minimise);
      valid.push(value);
      if (version !== undefined || record.source !== undefined) setMeta(value, { position: record.position, version, source: keptPayload(record.source, minimise, values) });
    } else {
      // A key holding bytes that are not UTF-8 is not the key that was sent: none is read.
      const keyUnknown = violations.some((v) => v.rule === ENCODING_RULE && table.key.includes(v.field));
      rejects.push({ position: record.position, payload, origin, errors: violations, key: keyUnknown ? undefined : readableKey(table, record.value), version });
    }
  }
  return { valid, rejects };
}

/** The personal values of a record as mapped (what a partner's own field names hold too). */
function personalValues(value: unknown): Record<string, unknown> | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const v = value as Record<string, unknown>;
  return Object.fromEntries(PERSONAL_FIELDS.map((f) => [f, v[f]]));
}

const keptPayload = (payload: unknown, minimise: PersonalData | undefined, values: Record<string, unknown> | undefined): unknown =>
  minimise === undefined || payload === undefined ? payload : minimisePayload(payload, minimise, values);
