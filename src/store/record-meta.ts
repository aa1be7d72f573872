/**
 * What a validated record carries beside its spec fields, without being stored in them: its
 * position in the batch, its version (versions.ts) and the partner's record it was mapped
 * from (to close a reject of the same raw payload). Kept in a WeakMap, so records stay plain spec
 * objects (hooks, waiting records and tests see only spec fields) and the data goes with them.
 */
import type { SpecRecord } from '../types.js';

export interface RecordMeta {
  position: number;
  version?: string;
  /** The partner's record as pulled, when the record was mapped from one. */
  source?: unknown;
}

const metas = new WeakMap<SpecRecord, RecordMeta>();

export const metaOf = (record: SpecRecord): RecordMeta | undefined => metas.get(record);
export const versionOf = (record: SpecRecord): string | undefined => metas.get(record)?.version;

export function setMeta(record: SpecRecord, meta: RecordMeta): void {
  metas.set(record, meta);
}
