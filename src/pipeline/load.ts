/**
 * The load path every source uses: validate a batch of one partner and stream, then in ONE store
 * transaction write its rejects, upsert its valid records (chunks of at most 1000 rows), park
 * records whose customer has not arrived and release those waiting for customers that just did,
 * and save the stream's checkpoint. A crash before the commit leaves nothing; after it, all.
 * An older version of a record is never applied over a newer one (../store/versions.ts; counted
 * `stale`), and what a batch writes closes the open rejects it makes obsolete
 * (../store/reject-lifecycle.ts).
 *
 * `Loader.load` is one batch in one transaction. `Loader.transaction` spans several batches, for
 * what must land whole: a day of activity that replaces the stored day.
 *
 * Two hooks carry the commission job: `inTransaction` sees what each batch wrote and records it in
 * the same transaction (so a crash right after the commit loses nothing), `afterCommit` runs once
 * the transaction has committed, per partner it touched.
 */
import type { Knex } from 'knex';
import { ENTITIES, type Entity, type RawRecord, type RecordValidator, type SpecRecord, type Variant, type Violation } from '../types.js';
import { metaOf } from '../store/record-meta.js';
import { ensurePartner } from '../store/partners.js';
import { quarantine, type NewReject } from '../store/rejects.js';
import { batchKey, recordKey } from '../store/rows.js';
import type { Store } from '../store/store.js';
import { saveCheckpoint, type Checkpoint } from '../store/sync-state.js';
import { entityTable, type EntityTable, isVersioned } from '../store/tables.js';
import { prepareUpsert, writeUpsert, type PreparedUpsert } from '../store/upsert.js';
import { anyParked, dropParked, dropParkedDays, knownCustomers, park, unpark, type ParkedRecord } from '../store/waiting.js';
import { resolveLoadedRejects } from '../store/reject-lifecycle.js';
import { newestPerKey, settleVersions, type VersionedWrite } from '../store/versions.js';
import { refreshStaleStatistics } from '../store/statistics.js';
import { validateBatch } from './validate-batch.js';
import { SLICE, yieldToEventLoop } from '../yield.js';
import { limitHeapGrowth } from '../heap.js';
import { transactionLock } from '../store/transaction-lock.js';
import { MonthPartitions } from '../store/partitions.js';
import { FreshKeys } from '../store/fresh-keys.js';
import { EvaluationsBehind } from './evaluate-behind.js';
import { BulkRuns } from './bulk-runs.js';

export interface BatchInput {
  partner: string;
  variant: Variant;
  entity: Entity;
  runId: string;
  records: readonly RawRecord[];
  /** Saved in the same transaction as the rows. */
  checkpoint?: Checkpoint;
  /**
   * Name the records that waited and those that were stale (BatchResult.itemized), for a caller
   * that merged several requests into one batch and answers each with its own counts.
   */
  itemize?: boolean;
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
  rejects: { position: number; errors: Violation[] }[];
  /** With `itemize`: the valid records (the objects handed over) counted waiting and stale. */
  itemized?: { waiting: SpecRecord[]; stale: SpecRecord[] };
}

/**
 * What one batch (or one day replacement) changed inside a load transaction: the records written
 * to entity tables (directly or released from waiting). The commission job records its scope
 * from it, for only what the batch touched.
 */
export interface LoadedChange {
  partner: string;
  variant: Variant;
  /** Records upserted per entity (the latest version of each key), including released ones. */
  records: Record<Entity, SpecRecord[]>;
  /** Activity days replaced whole (rows may have been deleted). */
  replacedDays: string[];
  runId: string;
  /** The batch belongs to a bulk run (Loader.deferJobs): the jobs that can wait record their scope and evaluate when the run settles. */
  deferred?: boolean;
  /** The run defers the report facts too (Loader.deferJobs with `facts`): they record their scope and are recomputed when the run settles. */
  factsDeferred?: boolean;
}

/** The advisory lock that serialises a partner's loads (and whatever must not interleave with them). */
export const loadLockKey = (partner: string): string => `partner-sync:load:${partner}`;

/** An after-commit hook failed: the transaction's data IS committed (same message as the hook's error). */
export class AfterCommitError extends Error {
  readonly committed = true;
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'AfterCommitError';
  }
}

/** A partner that a committed transaction wrote to. */
export interface CommittedChange {
  partner: string;
  variant: Variant;
  runId: string;
  /** Of a bulk run (Loader.deferJobs): its evaluation waits for Loader.settle. */
  deferred?: boolean;
}

export interface LoaderDeps {
  store: Store;
  validator: RecordValidator;
  /**
   * Runs inside the load transaction just before records replace their stored versions (direct and
   * released ones), so what depended on the old versions can be recorded; it commits with the batch.
   */
  beforeWrite?: (trx: Knex.Transaction, batch: { partner: string; variant: Variant; entity: Entity; records: readonly SpecRecord[]; factsDeferred?: boolean }) => Promise<void>;
  /** Runs inside the load transaction after each batch or day replacement, with what it wrote; what it writes commits with the batch. */
  inTransaction?: (trx: Knex.Transaction, change: LoadedChange) => Promise<void>;
  /** Runs after each commit, once per partner the transaction wrote to. Its failure is the caller's error; the data stays loaded. */
  afterCommit?: (changes: CommittedChange[]) => Promise<void>;
  /**
   * Evaluates what a bulk run's batches left to evaluate (their scope is on disk, written in each
   * batch's transaction): Loader.settle calls it once per partner the run wrote to.
   */
  settle?: (change: CommittedChange) => Promise<void>;
  /** Records a bulk run loads between two settles (default SETTLE_EVERY). */
  settleEvery?: number;
  /** How long a bulk run's loaded records may wait for their settle, ms (default SETTLE_AFTER_MS). */
  settleAfterMs?: number;
  /**
   * How long an evaluation behind the commits (Loader.evaluateBehind) waits for more commits to
   * take with it, ms (default GATHER_BEHIND_MS, ./evaluate-behind.ts): fewer, larger evaluations leave more of the
   * process and the store to the requests.
   */
  gatherBehindMs?: number;
  /** Told when an evaluation behind the commits (Loader.evaluateBehind) fails: its scope stays on disk for the next one. */
  settleFailed?: (change: CommittedChange, error: unknown) => void;
}

interface Committed extends CommittedChange {
  customers: string[];
  /** Records the transaction wrote for the partner (a bulk run settles every SETTLE_EVERY). */
  records: number;
}

/** A bulk run's deferred jobs evaluate over groups of about this many loaded records, and at the run's end (docs/loading.md, Bulk runs). */
export const SETTLE_EVERY = 10_000_000;

/**
 * A bulk run's jobs also settle once its oldest waiting record has waited this long, ms: a slow source (a REST API
 * at a few hundred records a second) would otherwise leave hours of a backfill out of the
 * commissions, the fraud holds and the report.
 */
export const SETTLE_AFTER_MS = 10 * 60_000;

/** Customer ids remembered per partner; customers are never deleted, so a hit is always still true. */
const KNOWN_CUSTOMER_CACHE_LIMIT = 500_000;

export class Loader {
  private readonly partners = new Map<string, Variant>();
  /** Bulk runs (deferJobs) and the partners each wrote to since it last settled. */
  private readonly bulk: BulkRuns<CommittedChange>;
  private readonly customers = new Map<string, Set<string>>();
  /** The evaluations behind the commits (evaluateBehind). */
  private readonly behind: EvaluationsBehind<CommittedChange>;
  /** @internal The activity tables' monthly partitions seen to exist (PostgreSQL; ../store/partitions.ts). */
  readonly partitions: MonthPartitions;

  constructor(private readonly deps: LoaderDeps) {
    this.partitions = new MonthPartitions(deps.store);
    this.behind = new EvaluationsBehind(deps);
    this.bulk = new BulkRuns((changes) => this.settleChanges(changes));
    // Bulk loads promote dead batches to the old generation: keep V8 from letting them pile up (../heap.ts).
    limitHeapGrowth();
  }

  get store(): Store {
    return this.deps.store;
  }

  /**
   * Makes `runId` a bulk run: the after-load jobs that can wait (fraud rules and commissions)
   * record what each batch touched in the batch's transaction and evaluate it over the whole group
   * when the run calls `settle`, instead of after every batch. The phase history and the postbacks'
   * outbox stay exact at every commit, and so do the report facts unless `facts` (below). `settle`
   * at the end of the run is the caller's (the Loader settles every SETTLE_EVERY records or
   * SETTLE_AFTER_MS); what a crash leaves is settled by the next loading command.
   *
   * With `facts` (a bulk run, not a push), the report facts wait too: each batch records the days
   * and customers it touched (report_pending) and the settle recomputes those days from the stored
   * rows, set-based, instead of moving the facts by difference after every batch. Until then
   * `status`, the console and `report` say the report does not include them yet.
   */
  deferJobs(runId: string, options: { facts?: boolean } = {}): void {
    this.bulk.defer(runId, options.facts === true);
  }

  /** Evaluates what the bulk run's committed batches left to evaluate; the run stays bulk. */
  settle(runId: string): Promise<void> {
    return this.bulk.settleRun(runId);
  }

  /**
   * What earlier runs of the partner left to evaluate (a crash; jobs/load-hooks.ts, resumeJobs with
   * `later`) is evaluated by this loader's next settle (of a run, or at the end of `settleTogether`),
   * after the loads before it and over them all, as the uninterrupted run would have.
   */
  settleLeftovers(partner: string, variant: Variant): void {
    this.bulk.leftover({ partner, variant, runId: `resume-${this.deps.store.now()}`, deferred: true });
  }

  /** Whether what earlier runs of the partner left waits for this loader's next settle (settleLeftovers). */
  hasLeftovers(partner: string): boolean {
    return this.bulk.hasLeftover(partner);
  }

  private async settleChanges(changes: readonly CommittedChange[]): Promise<void> {
    if (changes.length === 0) return;
    // The run may have grown its tables by a large share: their statistics first, so that the
    // evaluation and the next groups are planned for the tables as they are now.
    await refreshStaleStatistics(this.deps.store);
    for (const change of changes) await this.deps.settle?.(change);
  }

  /**
   * Settles the bulk run and ends it: its later batches (if any) evaluate after each commit again.
   * Inside `settleTogether`, the settle waits for the end of its work.
   */
  endDeferred(runId: string): Promise<void> {
    return this.bulk.end(runId);
  }

  /**
   * Runs `work` (a partner's bulk runs, one stream after another: customers, transactions,
   * activity) with their settles held to its end: each partner is evaluated once over all of
   * them, not once per stream, so a customer whose records came in three streams is judged once.
   * Groups of SETTLE_EVERY records still settle as they fill. A failed settle is thrown after the
   * work's result is known; what it did not evaluate stays pending on disk.
   */
  settleTogether<T>(work: () => Promise<T>): Promise<T> {
    return this.bulk.together(work);
  }

  /**
   * Ends the bulk run `runId` without waiting for its evaluation: each partner it wrote to is
   * evaluated in the background, after gathering `gatherBehindMs` of further commits, by one
   * evaluation per partner at a time that takes everything deferred so far (commits that land
   * while it runs are taken by the next one). For
   * pushes: a request is answered at its commit, and a partner pushing 1000 requests a second
   * costs a few evaluations a second, each over what arrived meanwhile, not one per request. What
   * waits is on disk (fraud_deferred, commission_pending): `status` shows it, and a crash leaves it
   * to the next loading command. `drain` waits for these evaluations.
   */
  evaluateBehind(runId: string): void {
    for (const change of this.bulk.take(runId)) this.behind.ask(change);
  }

  /** Resolves when no evaluation started by `evaluateBehind` is running or due. */
  drain(): Promise<void> {
    return this.behind.drain();
  }

  /** @internal */
  isDeferred(runId: string): boolean {
    return this.bulk.has(runId);
  }

  /** @internal Whether the run defers the report facts (deferJobs with `facts`). */
  defersFacts(runId: string): boolean {
    return this.bulk.defersFacts(runId);
  }

  /** One batch in one transaction, with its checkpoint. */
  load(input: BatchInput): Promise<BatchResult> {
    return this.transaction((tx) => tx.load(input));
  }

  /** Several batches (and day replacements, checkpoints) in one store transaction. */
  async transaction<T>(work: (tx: LoadTransaction) => Promise<T>): Promise<T> {
    const committed: Committed[] = [];
    const result = await this.deps.store.transaction(async (trx) => {
      const tx = new LoadTransaction(this, trx, committed);
      try {
        const value = await work(tx);
        await tx.settled();
        return value;
      } catch (error) {
        // Nothing of this transaction may still be running on its connection when it rolls back.
        await tx.settled().catch(() => undefined);
        // Partitions it created roll back with it.
        this.partitions.forget();
        throw error;
      }
    });
    // Only what is committed may be remembered.
    for (const c of committed) {
      this.partners.set(c.partner, c.variant);
      this.remember(c.partner, c.customers);
      if (c.deferred) this.bulk.committed(c.runId, { partner: c.partner, variant: c.variant, runId: c.runId, deferred: true }, c.records);
    }
    if (this.deps.afterCommit && committed.length > 0) {
      const touched = new Map<string, CommittedChange>();
      for (const c of committed) if (!touched.has(c.partner)) touched.set(c.partner, { partner: c.partner, variant: c.variant, runId: c.runId, deferred: c.deferred });
      try {
        await this.deps.afterCommit([...touched.values()]);
      } catch (error) {
        // The data is committed: a caller that answers for it (a push) must know that.
        throw new AfterCommitError(error);
      }
    }
    // A bulk run's groups: once enough records wait, they are evaluated before the run goes on.
    for (const runId of new Set(committed.filter((c) => c.deferred).map((c) => c.runId))) {
      if (this.bulk.due(runId, this.deps.settleEvery ?? SETTLE_EVERY, this.deps.settleAfterMs ?? SETTLE_AFTER_MS)) {
        try {
          await this.settle(runId);
        } catch (error) {
          throw new AfterCommitError(error);
        }
      }
    }
    return result;
  }

  /** @internal */
  validator(): RecordValidator {
    return this.deps.validator;
  }

  /** @internal */
  async beforeWrite(trx: Knex.Transaction, partner: string, variant: Variant, entity: Entity, records: readonly SpecRecord[], runId: string): Promise<void> {
    if (records.length > 0) await this.deps.beforeWrite?.(trx, { partner, variant, entity, records, factsDeferred: this.defersFacts(runId) });
  }

  /** @internal Hands a batch's change to the in-transaction hook, if any (records are not held past the batch: a day of records is a lot). */
  async recordChange(trx: Knex.Transaction, change: LoadedChange): Promise<void> {
    await this.deps.inTransaction?.(trx, change);
  }

  /** @internal */
  knowsPartner(partner: string, variant: Variant): boolean {
    return this.partners.get(partner) === variant;
  }

  /** @internal Whether every record's customer is remembered as a customer of the partner (then no query is needed). */
  remembersCustomers(partner: string, records: Iterable<SpecRecord>): boolean {
    const cache = this.customers.get(partner);
    if (!cache) return false;
    for (const r of records) if (!cache.has(r.customer_id as string)) return false;
    return true;
  }

  /** @internal A membership test for customer ids: remembered ones, then one query for the rest. */
  async customerTest(trx: Knex.Transaction, partner: string, records: Iterable<SpecRecord>): Promise<(id: string) => boolean> {
    const cache = this.customers.get(partner) ?? new Set<string>();
    const unknown = new Set<string>();
    for (const r of records) {
      const id = r.customer_id as string;
      if (!cache.has(id)) unknown.add(id);
    }
    // Ids read from the store exist in committed data (a transactions/activity batch writes no customers).
    const found = unknown.size > 0 ? await knownCustomers(trx, partner, [...unknown]) : new Set<string>();
    this.remember(partner, found);
    return (id) => cache.has(id) || found.has(id);
  }

  private remember(partner: string, ids: Iterable<string>): void {
    let cache = this.customers.get(partner);
    if (!cache) this.customers.set(partner, (cache = new Set()));
    for (const id of ids) {
      if (cache.size >= KNOWN_CUSTOMER_CACHE_LIMIT) cache.clear();
      cache.add(id);
    }
  }
}

/** A batch validated and made ready before its turn on the transaction's connection. */
interface PreparedBatch {
  table: EntityTable;
  /** How many records are valid. */
  valid: number;
  rejects: NewReject[];
  now: string;
  /** The upsert of the last version of each key, when every customer is known already. */
  direct?: PreparedUpsert;
  /** The valid records; and, unless `direct` holds them, the newest version of each key. */
  validRecords: SpecRecord[];
  latest?: Map<string, SpecRecord>;
  /** Valid records dropped because the batch holds a newer version of their key. */
  olderInBatch: SpecRecord[];
}

/** What the write of a batch keeps of its input. */
type WriteInput = Omit<BatchInput, 'records'> & { received: number };

/**
 * The batches of one store transaction. Their store work runs in order, one piece at a time, but
 * a batch is validated as soon as it is handed over, while the batch before it is still being
 * written: a caller that hands batch n+1 over before awaiting batch n keeps the store and this
 * process busy at the same time. A failure fails every batch after it and the transaction.
 */
export class LoadTransaction {
  /** The store work handed over last (settled when everything before it is). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly loader: Loader,
    readonly trx: Knex.Transaction,
    private readonly committed: Committed[],
  ) {}

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
      await this.trx(table.name).where('partner_id', partner).whereIn('date', days).delete();
      let replaced = this.replacedDays.get(partner);
      if (!replaced) this.replacedDays.set(partner, (replaced = new Set()));
      for (const day of days) replaced.add(day);
      await dropParkedDays(this.trx, partner, days);
      const deferred = this.loader.isDeferred(runId);
      await this.loader.recordChange(this.trx, { partner, variant, runId, records: { customers: [], transactions: [], activity: [] }, replacedDays: days, deferred, factsDeferred: this.loader.defersFacts(runId) });
      this.committed.push({ partner, variant, runId, customers: [], deferred, records: 0 });
    });
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
    if (this.lockedPartners.has(partner) || this.loader.store.profile.locking !== 'advisory') return;
    await transactionLock(this.trx, loadLockKey(partner));
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

  /**
   * Validates the batch at once, then writes it after the store work queued before it. Resolves
   * when the batch is written (not committed: the transaction commits when its work returns).
   */
  load(input: BatchInput): Promise<BatchResult> {
    const prepared = this.prepare(input);
    prepared.catch(() => undefined); // surfaces through the write below
    // Queued now, so batches are written in the order they were handed over.
    // The write keeps what it needs of the input, not its raw records (they are garbage once prepared).
    const { records, ...about } = input;
    const received = records.length;
    return this.enqueue(async () => this.write({ ...about, received }, await prepared));
  }

  /** The CPU work of a batch, in slices that let the store's replies in between. */
  private async prepare(input: BatchInput): Promise<PreparedBatch> {
    const { loader } = this;
    const table = entityTable(input.variant, input.entity);
    const valid: SpecRecord[] = [];
    const rejects: NewReject[] = [];
    for (let start = 0; start < input.records.length; start += SLICE) {
      if (start > 0) await yieldToEventLoop();
      const part = validateBatch(loader.validator(), input.variant, input.entity, input.records.slice(start, start + SLICE));
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
    if (input.entity !== 'customers' && loader.remembersCustomers(input.partner, latest.values())) {
      const direct = await prepareUpsert(loader.store, table, { partner: input.partner, runId: input.runId, loadedAt: now, records: [...latest.values()] });
      return { table, valid: valid.length, rejects, now, direct, validRecords: valid, olderInBatch };
    }
    return { table, valid: valid.length, rejects, now, latest, validRecords: valid, olderInBatch };
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
      rejects: rejects.map((r) => ({ position: r.position, errors: r.errors })),
      ...(input.itemize ? { itemized: { waiting: [], stale: [] } } : {}),
    };
    const arrived: string[] = [];

    if (!loader.knowsPartner(input.partner, input.variant)) await ensurePartner(trx, input.partner, input.variant, now);
    if (rejects.length > 0) {
      await quarantine(trx, { partner: input.partner, variant: input.variant, entity: input.entity, runId: input.runId, now }, rejects);
      this.noOpenRejects.delete(`${input.partner}\u0000${input.entity}`);
    }
    const written: Record<Entity, SpecRecord[]> = { customers: [], transactions: [], activity: [] };
    // Keys whose newest version in this batch was not applied: the store holds a newer one.
    const staleKeys = new Set<string>();
    const applied = async (t: EntityTable, records: SpecRecord[], ready?: PreparedUpsert): Promise<SpecRecord[]> => {
      // What the store held before this write (the commission scope takes back a changed record's old version).
      await loader.beforeWrite(trx, input.partner, input.variant, t.entity, records, input.runId);
      const upsert: PreparedUpsert = ready ?? { table: t, batch: { partner: input.partner, runId: input.runId, loadedAt: now, records } };
      if (t.entity === 'activity' && records.length > 0) {
        await loader.partitions.ensure(trx, t.name, records.map((r) => r.date as string));
        upsert.keysAreNew = this.activityKeysAreNew(input.partner, t, records);
      }
      const older = await writeUpsert(store, trx, upsert);
      if (older.size === 0) return records;
      if (t === table) for (const key of older) staleKeys.add(key);
      return records.filter((r) => !older.has(batchKey(t, r)));
    };
    if (input.entity === 'customers') {
      written.customers = await applied(table, [...latest.values()]);
      // Customers kept at a newer version are in the store all the same: their records load.
      arrived.push(...latest.keys());
      const parked = await unpark(trx, input.partner, arrived);
      for (const entity of ['transactions', 'activity'] as const) {
        written[entity] = await applied(entityTable(input.variant, entity), parked.filter((p) => p.entity === entity).map((p) => p.record));
      }
      result.released = written.transactions.length + written.activity.length;
    } else {
      const direct: SpecRecord[] = [];
      let parked: ParkedRecord[] = [];
      if (prepared.direct) direct.push(...prepared.direct.batch.records);
      else {
        const known = await loader.customerTest(trx, input.partner, latest.values());
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
      written[input.entity] = await applied(table, settled.direct, settled.direct === direct ? prepared.direct : undefined);
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
    if (input.checkpoint) await saveCheckpoint(trx, input.partner, input.checkpoint, input.runId, now);
    if (written.customers.length + written.transactions.length + written.activity.length > 0) {
      const deferred = loader.isDeferred(input.runId);
      await loader.recordChange(trx, { partner: input.partner, variant: input.variant, runId: input.runId, records: written, replacedDays: [], deferred, factsDeferred: loader.defersFacts(input.runId) });
      this.committed.push({ partner: input.partner, variant: input.variant, runId: input.runId, customers: arrived, deferred, records: ENTITIES.reduce((n, e) => n + written[e].length, 0) });
    }
    return result;
  }
}
