/**
 * A batch of the load path before its transaction: its input and result, and the CPU work done
 * before its turn on the transaction's connection (validation, the newest version of each key, the
 * rows rendered when every customer is known), so that a caller loading batch after batch
 * validates batch n+1 while batch n is written (LoadsInTurn).
 */
import type { Entity, RawRecord, RecordValidator, SpecRecord, Variant, Violation } from '../types.js';
import type { NewReject } from '../store/rejects.js';
import { batchKey } from '../store/rows.js';
import type { Store } from '../store/store.js';
import type { Checkpoint } from '../store/sync-state.js';
import { entityTable, type EntityTable, isVersioned } from '../store/tables.js';
import { prepareUpsert, type PreparedUpsert } from '../store/upsert.js';
import { newestPerKey } from '../store/versions.js';
import { validateBatch } from './validate-batch.js';
import type { PersonalData } from '../spec/personal-data.js';
import type { LearnedVia } from '../store/tombstones.js';
import type { DeleteGuard } from './delete-guard.js';
import { SLICE, yieldToEventLoop } from '../yield.js';
import { inSpan } from '../trace.js';
import type { KnownCustomers } from './known-customers.js';

export interface BatchInput {
  partner: string;
  variant: Variant;
  entity: Entity;
  runId: string;
  records: readonly RawRecord[];
  /** Saved in the same transaction as the rows. */
  checkpoint?: Checkpoint;
  /** How the records marked deleted at the source (RawRecord.deletedAtSource) were learned: a db or warehouse column, or a REST record's flag. */
  deletedVia?: LearnedVia;
  /** The mass-delete guard those deletes are judged by (./delete-guard.ts; the default when absent). */
  deleteGuard?: DeleteGuard;
  /**
   * Name the records that waited and those that were stale (BatchResult.itemized), for a caller
   * that merged several requests into one batch and answers each with its own counts.
   */
  itemize?: boolean;
  /** The partner's (or the pushing client's) policy for personal fields; none keeps them. */
  personalData?: PersonalData;
}

export interface BatchResult {
  received: number;
  valid: number;
  rejected: number;
  /** Valid records written to their table (received = loaded + rejected + waiting + stale). */
  loaded: number;
  /** Valid records parked until their customer arrives. */
  waiting: number;
  /** Valid records not applied: the store (or the same batch) holds a newer version of their key. */
  stale: number;
  /** Their positions in the batch. */
  stalePositions: number[];
  /** Records parked earlier that loaded now because this batch brought their customer. */
  released: number;
  /** Records of erased customers loaded without their personal fields. */
  erased: number;
  /** Records of the batch whose source rows say they were deleted at the source, applied as deletes (received = loaded + rejected + waiting + stale + deleted; a repeat or an unknown id deletes nothing). */
  deleted?: number;
  /** Records of the batch the source said were deleted that the mass-delete guard held instead (a hold: `partner-sync deletes`; received = ... + deleted + deletesHeld). */
  deletesHeld?: number;
  rejects: { position: number; errors: Violation[] }[];
  /** With `itemize`: the valid records (the objects handed over) counted waiting and stale. */
  itemized?: { waiting: SpecRecord[]; stale: SpecRecord[] };
}

/** What preparing a batch takes from its Loader. */
export interface BatchPreparer {
  readonly store: Store;
  readonly validator: RecordValidator;
  readonly known: KnownCustomers;
}

/** A batch validated and made ready before its turn on the transaction's connection. */
export interface PreparedBatch {
  table: EntityTable;
  /** How many records are valid. */
  valid: number;
  rejects: NewReject[];
  now: string;
  /** The upsert of the last version of each key, when every customer is known already. */
  direct?: PreparedUpsert;
  /** KnownCustomers.generation when `direct` was judged: a customer deleted since makes the write look its customers up again. */
  generation?: number;
  /** The valid records; and, unless `direct` holds them, the newest version of each key. */
  validRecords: SpecRecord[];
  latest?: Map<string, SpecRecord>;
  /** Valid records dropped because the batch holds a newer version of their key. */
  olderInBatch: SpecRecord[];
  /** Ids of the records their source rows say were deleted at the source (RawRecord.deletedAtSource): deleted after the batch's writes. */
  deletes: string[];
}

/** What the write of a batch keeps of its input. */
export type WriteInput = Omit<BatchInput, 'records'> & { received: number };

/**
 * A batch handed over for validation before its transaction begins (readyBatch): a caller loading
 * batch after batch, each in its own transaction, validates and renders batch n+1 while batch n is
 * written. Nothing in it depends on what batch n writes: customers remembered as stored stay stored.
 */
export interface ReadyBatch {
  readonly input: WriteInput;
  readonly prepared: Promise<PreparedBatch>;
}

/** A batch's write in a `batch` span (src/trace.ts): its partner, stream, run and size, then what became of its records. */
export function inBatchSpan(input: WriteInput, write: () => Promise<BatchResult>): Promise<BatchResult> {
  return inSpan('batch', { partner: input.partner, stream: input.entity, 'run.id': input.runId, 'batch.size': input.received }, async (span) => {
    const r = await write();
    span.setAttributes({ 'records.loaded': r.loaded, 'records.rejected': r.rejected, 'records.waiting': r.waiting, 'records.stale': r.stale, 'records.released': r.released, ...(r.deleted ? { 'records.deleted': r.deleted } : {}) });
    return r;
  });
}

/** Starts a batch's CPU work now (validation, the newest version per key, its rows rendered when its customers are known). */
export function readyBatch(loader: BatchPreparer, input: BatchInput): ReadyBatch {
  const prepared = prepareBatch(loader, input);
  prepared.catch(() => undefined); // surfaces through the write
  // The write keeps what it needs of the input, not its raw records (they are garbage once prepared).
  const { records, ...about } = input;
  return { input: { ...about, received: records.length }, prepared };
}

/** The CPU work of a batch, in slices that let the store's replies in between. */
async function prepareBatch(loader: BatchPreparer, input: BatchInput): Promise<PreparedBatch> {
  const table = entityTable(input.variant, input.entity);
  const valid: SpecRecord[] = [];
  const rejects: NewReject[] = [];
  // Rows deleted at the source are not validated: they delete their record (LoadTransaction.write).
  const deletes: string[] = [];
  let records = input.records;
  if (records.some((r) => r.deletedAtSource !== undefined)) {
    for (const r of records) if (r.deletedAtSource !== undefined) deletes.push(r.deletedAtSource);
    records = records.filter((r) => r.deletedAtSource === undefined);
  }
  for (let start = 0; start < records.length; start += SLICE) {
    if (start > 0) await yieldToEventLoop();
    const part = validateBatch(loader.validator, input.variant, input.entity, records.slice(start, start + SLICE), input.personalData);
    for (const record of part.valid) valid.push(record);
    for (const reject of part.rejects) rejects.push(reject);
  }
  // The last version of a key wins, as if the records had been sent one by one: on a versioned
  // table that is the newest version (an older one sent later would not have been applied).
  const latest = new Map<string, SpecRecord>();
  let olderInBatch: SpecRecord[] = [];
  if (isVersioned(table)) olderInBatch = newestPerKey(table, valid, latest);
  else for (const record of valid) latest.set(batchKey(table, record), record);
  const now = loader.store.now();
  // Records whose customers are all remembered load directly: their rows are rendered now, not
  // when the connection is free.
  const generation = loader.known.generation(input.partner);
  if (input.entity !== 'customers' && loader.known.remembersCustomers(input.partner, latest.values())) {
    const direct = await prepareUpsert(loader.store, table, { partner: input.partner, runId: input.runId, loadedAt: now, records: [...latest.values()] });
    return { table, valid: valid.length, rejects, now, direct, generation, validRecords: valid, olderInBatch, deletes };
  }
  return { table, valid: valid.length, rejects, now, latest, validRecords: valid, olderInBatch, deletes };
}
