/**
 * What a validated record carries beside its spec fields, without being stored in them: its
 * position in the batch, its version (versions.ts) and the partner's record it was mapped from (to
 * close a reject of the same raw payload). Held in a non-enumerable symbol property, so records
 * stay plain spec objects to everything that reads them (JSON, hooks, waiting records, equality in
 * tests) and the data goes where they go. Not a WeakMap: hundreds of thousands of entries made
 * every garbage collection of a bulk load walk them (a load of versioned rows ran at half speed).
 */
import type { SpecRecord } from '../types.js';

export interface RecordMeta {
  position: number;
  version?: string;
  /** The partner's record as pulled, when the record was mapped from one. */
  source?: unknown;
}

const META = Symbol('partner-sync record meta');

type WithMeta = SpecRecord & { [META]?: RecordMeta };

export const metaOf = (record: SpecRecord): RecordMeta | undefined => (record as WithMeta)[META];
export const versionOf = (record: SpecRecord): string | undefined => (record as WithMeta)[META]?.version;

export function setMeta(record: SpecRecord, meta: RecordMeta): void {
  Object.defineProperty(record, META, { value: meta, enumerable: false, writable: true, configurable: true });
}
