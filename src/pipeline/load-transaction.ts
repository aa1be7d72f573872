/**
 * One store transaction of the load path (Loader.transaction): its batches validated as they are
 * handed over and written in order on the transaction's connection, with the partner's load lock,
 * day replacements and checkpoints. Each batch's change set (what it wrote, with the stored
 * versions it replaced, read once) goes to the after-load jobs' marks (./jobs.ts); what outlives
 * the transaction is the Loader's (./load.ts).
 */
import type { Knex } from 'knex';
import { ENTITIES, type RecordValidator, type SpecRecord, type Variant } from '../types.js';
import { metaOf } from '../store/record-meta.js';
import { ensurePartner } from '../store/partners.js';
import { quarantine } from '../store/rejects.js';
import { batchKey, recordKey } from '../store/rows.js';
import type { Store } from '../store/store.js';
import { saveCheckpoint, type Checkpoint } from '../store/sync-state.js';
import { entityTable, type EntityTable } from '../store/tables.js';
import { writeUpsert, type PreparedUpsert } from '../store/upsert.js';
import { anyParked, dropParked, dropParkedDays, park, unpark, type ParkedRecord } from '../store/waiting.js';
import { resolveLoadedRejects } from '../store/reject-lifecycle.js';
import { settleVersions, type VersionedWrite } from '../store/versions.js';
import type { MonthPartitions } from '../store/partitions.js';
import { FreshKeys } from '../store/fresh-keys.js';
import { rawRows } from '../store/dialects.js';
import { readPriorRows } from '../store/prior-rows.js';
import { removeRecords, takeCascade, type Removal, type Removed } from '../store/tombstones.js';
import { DEFAULT_DELETE_GUARD, judgeDeletes, type DeleteGuard } from './delete-guard.js';
import { emptyPriorRows, type AfterLoadJobs, type ChangeSet, type CommittedChange, type EvaluationPolicy, type JobTransaction } from './jobs.js';
import type { KnownCustomers } from './known-customers.js';
import { forgetErased } from '../store/erasures.js';
import { inBatchSpan, readyBatch, type BatchInput, type BatchResult, type PreparedBatch, type ReadyBatch, type WriteInput } from './batch.js';

/** The advisory lock that serialises a partner's loads (and whatever must not interleave with them). */
export const loadLockKey = (partner: string): string => `partner-sync:load:${partner}`;

/** @internal What a committed transaction wrote for one partner. */
export interface Committed extends CommittedChange {
  customers: string[];
  /** Records the transaction wrote for the partner (a bulk run settles every SETTLE_EVERY). */
  records: number;
  /** Customers it deleted (no longer known to be stored). */
  forgotten?: string[];
}

/**
 * Records of one partner learned deleted at the source (Loader.remove), judged by the mass-delete
 * guard (./delete-guard.ts; the default when absent) unless `guard` is false: an operator's
 * `deletes apply` of what the guard held.
 */
export type RemoveInput = Omit<Removal, 'now'> & { guard?: DeleteGuard | false };

/** What a removal did: the rows moved to tombstones (a customer's with it), and the ids it found nothing live for. */
export interface RemoveResult extends Removed {
  /** Records of the asked entity deleted now. */
  deleted: number;
  /** The guard held the removal instead (nothing was deleted): its hold, the live records held, and why. */
  held?: { holdId: number; held: number; reason: string };
}

/** What a load transaction takes from its Loader (./load.ts). */
export interface TransactionLoader {
  readonly store: Store;
  readonly validator: RecordValidator;
  readonly partitions: MonthPartitions;
  /** The after-load jobs: their marks run in the transaction, with each batch's change set. */
  readonly jobs: AfterLoadJobs;
  /** The customers and partners known to be stored (what only committed data may add to). */
  readonly known: KnownCustomers;
  /** How the run evaluates (chosen by the run: Loader.evaluateRun). */
  policyOf(runId: string): EvaluationPolicy;
}

/**
 * The batches of one store transaction. Their store work runs in order, one piece at a time, but
 * a batch is validated as soon as it is handed over, while the batch before it is still being
 * written: a caller that hands batch n+1 over before awaiting batch n keeps the store and this
 * process busy at the same time. A failure fails every batch after it and the transaction.
 */
export class LoadTransaction {
  /** The store work handed over last (settled when everything before it is). */
  private queue: Promise<unknown> = Promise.resolve();

  /** The transaction as the jobs' marks see it. */
  private readonly jobs: JobTransaction;

  constructor(
    private readonly loader: TransactionLoader,
    readonly trx: Knex.Transaction,
    private readonly committed: Committed[],
  ) {
    const computed = new Map<string, Promise<unknown>>();
    this.jobs = {
      trx,
      once<T>(key: string, compute: () => Promise<T>): Promise<T> {
        let value = computed.get(key) as Promise<T> | undefined;
        if (!value) computed.set(key, (value = compute()));
        return value;
      },
    };
  }

  /** An empty change set of one batch of the run. */
  private changeSet(partner: string, variant: Variant, runId: string): ChangeSet {
    return {
      partner, variant, runId, policy: this.loader.policyOf(runId),
      records: { customers: [], transactions: [], activity: [] }, prior: emptyPriorRows(), removed: { customers: [], transactions: [], activity: [] }, replacedDays: [],
    };
  }

  /** Reads the stored versions of `records` into the change set, with the columns the jobs need: once, before the write replaces them. */
  private async readPriors(change: ChangeSet, table: EntityTable, records: readonly SpecRecord[]): Promise<void> {
    const columns = records.length > 0 ? this.loader.jobs.priorColumns(table.entity, change.variant, change.policy) : undefined;
    if (columns) await readPriorRows(this.trx, table, change.partner, records, columns, change.prior[table.entity]);
  }

  /** Runs `work` after the store work queued before it; not at all if any of that failed. */
  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    run.catch(() => undefined); // the caller or settled() sees the failure; it is not unhandled meanwhile
    this.queue = run;
    return run;
  }

  /** @internal Resolves when the queued store work is done; rejects with its first failure. */
  async settled(): Promise<void> {
    await this.queue;
  }

  /**
   * Deletes a partner's stored activity of these days (and activity parked for them), so that the
   * batches that follow in this transaction replace each day whole: a row gone at the source goes here.
   */
  replaceDays(partner: string, variant: Variant, dates: readonly string[], runId = ''): Promise<void> {
    if (dates.length === 0) return this.enqueue(async () => undefined);
    const days = [...dates];
    return this.enqueue(async () => {
      await this.lockPartner(partner);
      const table = entityTable(variant, 'activity');
      const change = this.changeSet(partner, variant, runId);
      for (const part of this.loader.store.dialect.chunks(days, 500)) {
        // Raw: knex's builder returns only a count from a DELETE on SQLite; both return a raw RETURNING's rows.
        const deleted = await this.trx.raw(`DELETE FROM ${table.name} WHERE partner_id = ? AND date IN (${part.map(() => '?').join(', ')}) RETURNING ${table.key.join(', ')}`, [partner, ...part]) as unknown;
        for (const r of rawRows<Record<string, unknown>>(deleted)) change.removed.activity.push(r);
      }
      let replaced = this.replacedDays.get(partner);
      if (!replaced) this.replacedDays.set(partner, (replaced = new Set()));
      for (const day of days) replaced.add(day);
      await dropParkedDays(this.trx, partner, days);
      change.replacedDays = days;
      await this.loader.jobs.mark(this.jobs, change);
      this.committed.push({ partner, variant, runId, policy: change.policy, customers: [], records: 0 });
    });
  }

  /**
   * Deletes records learned deleted at the source: their rows move to tombstones (a customer's
   * transactions and activity with it) and the jobs' marks get the change set with the removed
   * rows and how the delete was learned, in this transaction as any batch.
   */
  remove(input: RemoveInput): Promise<RemoveResult> {
    return this.enqueue(() => this.removeNow(input));
  }

  private async removeNow(input: RemoveInput): Promise<RemoveResult> {
    await this.lockPartner(input.partner);
    const now = this.loader.store.now();
    const { guard, ...removal } = input;
    if (guard !== false) {
      const held = await judgeDeletes(this.trx, { ...removal, now }, guard ?? DEFAULT_DELETE_GUARD);
      if (held) return { rows: { customers: [], transactions: [], activity: [] }, tombstones: [], alreadyDeleted: [], unknown: [], waiting: 0, deleted: 0, held };
    }
    const removed = await removeRecords(this.trx, { ...removal, now });
    if (removed.tombstones.length === 0) return { ...removed, deleted: 0 };
    // Forgotten now (a later batch of this transaction must not take them as stored) and again at
    // the commit (what another transaction read meanwhile); forgetting too much costs one query.
    const forgotten = removed.rows.customers.map((c) => String(c.customer_id));
    if (forgotten.length > 0) this.loader.known.forget(input.partner, forgotten);
    const change = this.changeSet(input.partner, input.variant, input.runId);
    change.removed = removed.rows;
    change.deleted = { learnedVia: input.learnedVia, tombstones: removed.tombstones };
    await this.loader.jobs.mark(this.jobs, change);
    this.committed.push({ partner: input.partner, variant: input.variant, runId: input.runId, policy: change.policy, customers: [], records: removed.tombstones.length, forgotten });
    return { ...removed, deleted: removed.rows[input.entity].length };
  }

  /** Store work of the caller's own (a count to check a day replacement by), run in order with the batches. */
  run<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.enqueue(() => work(this.trx));
  }

  checkpoint(partner: string, checkpoint: Checkpoint, runId: string): Promise<void> {
    return this.enqueue(() => saveCheckpoint(this.trx, partner, checkpoint, runId, this.loader.store.now()));
  }

  /**
   * Serialises the load transactions of one partner across processes (PostgreSQL advisory
   * transaction lock). Without it, a transactions batch that finds no customer and a customers
   * batch that brings that customer, committing side by side, would each miss the other: the
   * record would be parked after the customers batch looked for parked records. SQLite has a
   * single writer already.
   */
  private async lockPartner(partner: string): Promise<void> {
    if (this.lockedPartners.has(partner)) return;
    await this.loader.store.dialect.transactionLock(this.trx, loadLockKey(partner));
    this.lockedPartners.add(partner);
  }

  private readonly lockedPartners = new Set<string>();
  /** Per partner: the activity days this transaction deleted (replaceDays), and the activity keys it wrote since it began. */
  private readonly replacedDays = new Map<string, Set<string>>();
  private readonly writtenActivity = new Map<string, FreshKeys>();

  /**
   * Whether no row with a key of these activity records can be in the table now, so they can be
   * COPYed in without a savepoint: every record's day was deleted by this transaction (under the
   * partner's load lock, nothing else writes the partner's rows until the commit) and none of
   * their keys was written by it since. Records the answer to the keys written.
   */
  private activityKeysAreNew(partner: string, table: EntityTable, records: readonly SpecRecord[]): boolean {
    let written = this.writtenActivity.get(partner);
    if (!written) this.writtenActivity.set(partner, (written = new FreshKeys()));
    const days = this.replacedDays.get(partner);
    const inReplacedDays = days !== undefined && records.every((r) => days.has(r.date as string));
    const unseen = written.addAllNew(records.map((r) => batchKey(table, r)));
    return inReplacedDays && unseen;
  }
  /** (partner, entity) pairs known to have no open rejects in this transaction (until it quarantines some). */
  private readonly noOpenRejects = new Set<string>();
  /** (partner, entity) pairs known to have no waiting records in this transaction. */
  private readonly noneParked = new Set<string>();

  /** Validates a batch now, to `load` it later in this transaction (LoadsInTurn). */
  ready(input: BatchInput): ReadyBatch {
    return readyBatch(this.loader, input);
  }

  /**
   * Validates the batch at once (unless it was made ready before: readyBatch), then writes it after
   * the store work queued before it. Resolves when the batch is written (not committed: the
   * transaction commits when its work returns).
   */
  load(batch: BatchInput | ReadyBatch): Promise<BatchResult> {
    const { input, prepared } = 'prepared' in batch ? batch : readyBatch(this.loader, batch);
    // Queued now, so batches are written in the order they were handed over (each in a `batch` span).
    return this.enqueue(() => inBatchSpan(input, async () => this.write(input, await prepared)));
  }

  /** Stale: records older than another of their key in the batch, and every record of a key whose newest version was older than the store's. */
  private countStale(result: BatchResult, prepared: PreparedBatch, staleKeys: ReadonlySet<string>): void {
    const positions = prepared.olderInBatch.map((r) => metaOf(r)?.position ?? 0);
    result.itemized?.stale.push(...prepared.olderInBatch);
    if (staleKeys.size > 0) {
      const older = new Set(prepared.olderInBatch);
      for (const r of prepared.validRecords) {
        if (!older.has(r) && staleKeys.has(batchKey(prepared.table, r))) {
          positions.push(metaOf(r)?.position ?? 0);
          result.itemized?.stale.push(r);
        }
      }
    }
    result.stale = positions.length;
    result.stalePositions = positions.sort((a, b) => a - b);
  }

  private async write(input: WriteInput, prepared: PreparedBatch): Promise<BatchResult> {
    const { trx, loader } = this;
    const store = loader.store;
    const { table, rejects, now } = prepared;
    const latest = prepared.latest ?? new Map<string, SpecRecord>();
    let ready = prepared.direct;
    if (ready && prepared.generation !== loader.known.generation(input.partner)) {
      // A customer was deleted since the batch was made ready: its customers are looked up again.
      for (const r of ready.batch.records) latest.set(batchKey(table, r), r);
      ready = undefined;
    }
    await this.lockPartner(input.partner);
    const result: BatchResult = {
      received: input.received,
      valid: prepared.valid,
      rejected: rejects.length,
      loaded: 0,
      waiting: 0,
      stale: 0,
      stalePositions: [],
      released: 0,
      erased: 0,
      rejects: rejects.map((r) => ({ position: r.position, errors: r.errors })),
      ...(input.itemize ? { itemized: { waiting: [], stale: [] } } : {}),
    };
    const arrived: string[] = [];

    if (!loader.known.knowsPartner(input.partner, input.variant)) await ensurePartner(trx, input.partner, input.variant, now);
    if (input.entity === 'customers') result.erased = await forgetErased(trx, input.partner, latest.values(), rejects);
    if (rejects.length > 0) {
      await quarantine(trx, { partner: input.partner, variant: input.variant, entity: input.entity, runId: input.runId, now }, rejects);
      this.noOpenRejects.delete(`${input.partner}\u0000${input.entity}`);
    }
    const change = this.changeSet(input.partner, input.variant, input.runId);
    const written = change.records;
    // Keys whose newest version in this batch was not applied: the store holds a newer one.
    const staleKeys = new Set<string>();
    const applied = async (t: EntityTable, records: SpecRecord[], ready?: PreparedUpsert): Promise<SpecRecord[]> => {
      const upsert: PreparedUpsert = ready ?? { table: t, batch: { partner: input.partner, runId: input.runId, loadedAt: now, records } };
      if (t.entity === 'activity' && records.length > 0) {
        await loader.partitions.ensure(trx, t.name, records.map((r) => r.date as string));
        upsert.keysAreNew = this.activityKeysAreNew(input.partner, t, records);
      }
      // What the store held before this write (the jobs take back what a changed record's old
      // version counted for), read when it may hold some of the keys: a COPY of only new keys reads nothing.
      const older = await writeUpsert(store, trx, upsert, () => this.readPriors(change, t, records));
      if (older.size === 0) return records;
      if (t === table) for (const key of older) staleKeys.add(key);
      return records.filter((r) => !older.has(batchKey(t, r)));
    };
    if (input.entity === 'customers') {
      written.customers = await applied(table, [...latest.values()]);
      // Customers kept at a newer version are in the store all the same: their records load.
      arrived.push(...latest.keys());
      const parked = await unpark(trx, input.partner, arrived);
      // A deleted customer sent again comes back with what went with it (not what waited for it since: newer).
      const cascade = await takeCascade(trx, input.partner, input.variant, arrived, now);
      for (const entity of ['transactions', 'activity'] as const) {
        const t = entityTable(input.variant, entity);
        const waited = parked.filter((p) => p.entity === entity).map((p) => p.record);
        const newer = new Set(waited.map((r) => batchKey(t, r)));
        written[entity] = await applied(t, [...waited, ...cascade[entity].filter((r) => !newer.has(batchKey(t, r)))]);
      }
      result.released = written.transactions.length + written.activity.length;
    } else {
      const direct: SpecRecord[] = [];
      let parked: ParkedRecord[] = [];
      if (ready) direct.push(...ready.batch.records);
      else {
        const known = await loader.known.customerTest(trx, input.partner, latest.values());
        for (const record of latest.values()) {
          const customerId = record.customer_id as string;
          if (known(customerId)) direct.push(record);
          else parked.push({ entity: input.entity, key: recordKey(table, record), customerId, record });
        }
      }
      // Nothing can be parked for the partner behind this transaction's back (its load lock), so
      // once none is found, none is looked for again until this transaction parks some.
      const parkedKey = `${input.partner}\u0000${input.entity}`;
      const someParked = !this.noneParked.has(parkedKey) && (await anyParked(trx, input.partner, input.entity));
      if (!someParked) this.noneParked.add(parkedKey);
      // Older than a parked version, or (to be parked) older than the stored row: not applied.
      const settled: VersionedWrite = await settleVersions(trx, { table, partner: input.partner, someParked }, direct, parked);
      for (const key of settled.staleKeys) staleKeys.add(key);
      parked = settled.parked;
      written[input.entity] = await applied(table, settled.direct, settled.direct === direct ? ready : undefined);
      if (someParked) await dropParked(trx, input.partner, input.entity, () => written[input.entity].map((r) => recordKey(table, r)));
      await park(trx, input.partner, input.runId, now, parked);
      if (parked.length > 0) this.noneParked.delete(parkedKey);
      const parkedCustomers = new Set(parked.map((p) => p.customerId));
      const older = new Set(prepared.olderInBatch);
      const waiting = parked.length === 0 ? [] : prepared.validRecords.filter((r) => !older.has(r) && parkedCustomers.has(r.customer_id as string) && !staleKeys.has(batchKey(table, r)));
      result.waiting = waiting.length;
      result.itemized?.waiting.push(...waiting);
    }
    this.countStale(result, prepared, staleKeys);
    result.loaded = prepared.valid - result.waiting - result.stale;
    for (const entity of ENTITIES) {
      // One probe per transaction while the stream has no open reject (a day is 33-333 batches).
      const rejectsKey = `${input.partner}\u0000${entity}`;
      if (written[entity].length === 0 || this.noOpenRejects.has(rejectsKey)) continue;
      const { anyOpen } = await resolveLoadedRejects(trx, { partner: input.partner, entity, table: entityTable(input.variant, entity), runId: input.runId, now }, written[entity]);
      if (!anyOpen) this.noOpenRejects.add(rejectsKey);
    }
    // Rows the source says were deleted (a soft-delete column): deleted after the writes, before the checkpoint.
    if (prepared.deletes.length > 0 && input.entity !== 'activity') {
      const removed = await this.removeNow({ partner: input.partner, variant: input.variant, entity: input.entity, ids: prepared.deletes, learnedVia: input.deletedVia ?? 'soft_delete', runId: input.runId, ...(input.deleteGuard ? { guard: input.deleteGuard } : {}) });
      const held = removed.held?.held ?? 0;
      result.deleted = prepared.deletes.length - held;
      if (held > 0) result.deletesHeld = held;
    }
    if (input.checkpoint) await saveCheckpoint(trx, input.partner, input.checkpoint, input.runId, now);
    if (written.customers.length + written.transactions.length + written.activity.length > 0) {
      await loader.jobs.mark(this.jobs, change);
      this.committed.push({ partner: input.partner, variant: input.variant, runId: input.runId, policy: change.policy, customers: arrived, records: ENTITIES.reduce((n, e) => n + written[e].length, 0) });
    }
    return result;
  }
}
