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
import type { Entity, RecordValidator, SpecRecord, Variant } from '../types.js';
import type { Store } from '../store/store.js';
import { knownCustomers } from '../store/waiting.js';
import { refreshStaleStatistics } from '../store/statistics.js';
import { limitHeapGrowth } from '../heap.js';
import { MonthPartitions } from '../store/partitions.js';
import { EvaluationsBehind } from './evaluate-behind.js';
import { BulkRuns, type SettleGroup as BulkSettleGroup } from './bulk-runs.js';
import { LoadTransaction, readyBatch, type ReadyBatch, type BatchInput, type BatchResult, type Committed, type CommittedChange, type LoadedChange } from './load-transaction.js';

/** The group `settleTogether` hands its work, for `endDeferred` (bulk-runs.ts). */
export type SettleGroup = BulkSettleGroup<CommittedChange>;

export { LoadTransaction, loadLockKey, markByRunDay, type BatchInput, type BatchResult, type ReadyBatch, type CommittedChange, type LoadedChange } from './load-transaction.js';

/** An after-commit hook failed: the transaction's data IS committed (same message as the hook's error). */
export class AfterCommitError extends Error {
  readonly committed = true;
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'AfterCommitError';
  }
}

export interface LoaderDeps {
  store: Store;
  validator: RecordValidator;
  /**
   * Runs inside the load transaction just before records replace their stored versions (direct and
   * released ones), so what depended on the old versions can be recorded; it commits with the batch.
   * Not called when the store holds none of the records' keys (a COPY of only new keys went
   * through): a hook that saw no call for a batch reads that as no stored version.
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
   * With the group `settleTogether` gave its work, the settle waits for the end of that work.
   */
  endDeferred(runId: string, group?: SettleGroup): Promise<void> {
    return this.bulk.end(runId, group);
  }

  /**
   * Runs `work` (a partner's bulk runs, one stream after another: customers, transactions,
   * activity) with their settles held to its end: each partner is evaluated once over all of
   * them, not once per stream, so a customer whose records came in three streams is judged once.
   * Groups of SETTLE_EVERY records still settle as they fill. A failed settle is thrown after the
   * work's result is known; what it did not evaluate stays pending on disk. The work passes the
   * group it is given to `endDeferred` for each run it ends (runPartner through syncStream, importFile).
   */
  settleTogether<T>(work: (group: SettleGroup) => Promise<T>): Promise<T> {
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

  /** One batch in one transaction, with its checkpoint. A batch made ready before (`ready`) is not validated again. */
  load(input: BatchInput | ReadyBatch): Promise<BatchResult> {
    return this.transaction((tx) => tx.load(input));
  }

  /** Validates a batch now, before its transaction (see LoadsInTurn), to `load` it later. */
  ready(input: BatchInput): ReadyBatch {
    return readyBatch(this, input);
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

/**
 * Batches loaded one transaction each, in the order they are handed over, each validated as soon
 * as it is handed over (Loader.ready) while the one before it loads: this process's reading and
 * validation and the store's writes overlap instead of taking turns (an import, a cursor window's
 * pages). At most two batches are held: `add` resolves once the batch before is loaded and this
 * one has begun. A failed batch fails the next `add` or `done`; nothing after it loads.
 */
export class LoadsInTurn {
  private last: Promise<void> = Promise.resolve();

  /** `loaded` is told each batch's result, in order, with what it was handed over. */
  constructor(private readonly loader: Loader, private readonly loaded: (result: BatchResult, input: BatchInput) => void) {}

  async add(input: BatchInput): Promise<void> {
    const ready = this.loader.ready(input);
    await this.last;
    this.last = this.loader.load(ready).then((result) => this.loaded(result, input));
    // Handled by the next add or done: not an unhandled rejection while the next batch is read.
    this.last.catch(() => undefined);
  }

  /** Resolves when the last batch handed over is loaded; rejects with its failure. */
  async done(): Promise<void> {
    await this.last;
  }

  /** Waits for the batch in flight whatever its outcome (after a failure elsewhere). */
  async stop(): Promise<void> {
    await this.last.catch(() => undefined);
  }
}
