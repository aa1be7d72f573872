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
 * The after-load jobs (./jobs.ts) mark each batch's change set in its transaction and evaluate
 * after the commit as the run's evaluation policy says (`evaluateRun`): after every commit by
 * default, behind the commits, or over the run's group at its settle.
 */
import type { Knex } from 'knex';
import type { RecordValidator, Variant } from '../types.js';
import type { Store } from '../store/store.js';
import type { Logger } from '../log.js';
import { refreshStaleStatistics } from '../store/statistics.js';
import { limitHeapGrowth } from '../heap.js';
import { MonthPartitions } from '../store/partitions.js';
import { EvaluationsBehind } from './evaluate-behind.js';
import { BulkRuns, type SettleGroup as BulkSettleGroup } from './bulk-runs.js';
import { AfterLoadJobs, type AfterLoadJob, type CommittedChange, type EvaluationPolicy } from './jobs.js';
import { KnownCustomers } from './known-customers.js';
import { LoadTransaction, type Committed, type RemoveInput, type RemoveResult, type TransactionLoader } from './load-transaction.js';
import { readyBatch, type ReadyBatch, type BatchInput, type BatchResult } from './batch.js';

/** The group `settleTogether` hands its work, for `endDeferred` (bulk-runs.ts). */
export type SettleGroup = BulkSettleGroup<CommittedChange>;

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
  /** The after-load jobs (jobs/load-hooks.ts composes every one; none: the load alone). */
  jobs?: readonly AfterLoadJob[];
  /** Told when an evaluation behind the commits (Loader.evaluateBehind) fails: its scope stays on disk for the next one. */
  logger?: Pick<Logger, 'warn'>;
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
}

/** A bulk run's deferred jobs evaluate over groups of about this many loaded records, and at the run's end (docs/loading.md, Bulk runs). */
export const SETTLE_EVERY = 10_000_000;

/**
 * A bulk run's jobs also settle once its oldest waiting record has waited this long, ms: a slow source (a REST API
 * at a few hundred records a second) would otherwise leave hours of a backfill out of the
 * commissions, the fraud holds and the report.
 */
export const SETTLE_AFTER_MS = 10 * 60_000;

export class Loader implements TransactionLoader {
  /** Bulk runs (evaluateRun `group` or `behind`) and the partners each wrote to since it last settled. */
  private readonly bulk: BulkRuns<CommittedChange>;
  /** The evaluations behind the commits (evaluateBehind). */
  private readonly behind: EvaluationsBehind<CommittedChange>;
  /** @internal The activity tables' monthly partitions seen to exist (PostgreSQL; ../store/partitions.ts). */
  readonly partitions: MonthPartitions;
  /** @internal */
  readonly jobs: AfterLoadJobs;
  /** @internal */
  readonly known = new KnownCustomers();

  constructor(private readonly deps: LoaderDeps) {
    this.partitions = new MonthPartitions(deps.store);
    this.jobs = new AfterLoadJobs(deps.jobs ?? [], deps.store.dialect.concurrent);
    this.behind = new EvaluationsBehind({
      gatherBehindMs: deps.gatherBehindMs,
      settle: (change) => this.jobs.evaluate(change),
      settleFailed: (change, error) => {
        deps.logger?.warn(`${change.partner}: evaluating the after-load jobs behind the commits failed; what waits stays pending for the next evaluation: ${(error as Error).message}`, {
          partner: change.partner, run_id: change.runId, event: 'evaluation_behind_failed',
        });
      },
    });
    this.bulk = new BulkRuns((changes) => this.settleChanges(changes));
    // Bulk loads promote dead batches to the old generation: keep V8 from letting them pile up (../heap.ts).
    limitHeapGrowth();
  }

  get store(): Store {
    return this.deps.store;
  }

  /** @internal */
  get validator(): RecordValidator {
    return this.deps.validator;
  }

  /**
   * How the run `runId` is evaluated. `at-commit` (every run that says nothing): every job is
   * exact after each commit. `group`, a bulk run: the jobs that can wait (fraud rules,
   * commissions, report facts) mark what each batch touched in the batch's transaction and
   * evaluate it over the whole group when the run calls `settle` (the Loader also settles every
   * SETTLE_EVERY records or SETTLE_AFTER_MS); the phase history and the postbacks' outbox stay
   * exact at every commit. `behind`, a push: as `group` but the report facts stay exact at every
   * commit, and `evaluateBehind` ends the run with its evaluation in the background. What a crash
   * leaves is settled by the next loading command. Until then `status`, the console and `report`
   * say what the figures do not include yet.
   */
  evaluateRun(runId: string, policy: EvaluationPolicy): void {
    if (policy !== 'at-commit') this.bulk.defer(runId, policy);
  }

  /** @internal The run's evaluation policy. */
  policyOf(runId: string): EvaluationPolicy {
    return this.bulk.policyOf(runId) ?? 'at-commit';
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
    this.bulk.leftover({ partner, variant, runId: `resume-${this.deps.store.now()}`, policy: 'group' });
  }

  /** Whether what earlier runs of the partner left waits for this loader's next settle (settleLeftovers). */
  hasLeftovers(partner: string): boolean {
    return this.bulk.hasLeftover(partner);
  }

  private async settleChanges(changes: readonly CommittedChange[]): Promise<void> {
    if (changes.length === 0 || !this.jobs.evaluates) return;
    // The run may have grown its tables by a large share: their statistics first, so that the
    // evaluation and the next groups are planned for the tables as they are now.
    await refreshStaleStatistics(this.deps.store);
    for (const change of changes) await this.jobs.evaluate(change);
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

  /** One batch in one transaction, with its checkpoint. A batch made ready before (`ready`) is not validated again. */
  load(input: BatchInput | ReadyBatch): Promise<BatchResult> {
    return this.transaction((tx) => tx.load(input));
  }

  /** Records learned deleted at the source, in one transaction (LoadTransaction.remove). */
  remove(input: RemoveInput): Promise<RemoveResult> {
    return this.transaction((tx) => tx.remove(input));
  }

  /** Validates a batch now, before its transaction (see LoadsInTurn), to `load` it later. */
  ready(input: BatchInput): ReadyBatch {
    return readyBatch(this, input);
  }

  /** Several batches (and day replacements, checkpoints) in one store transaction. */
  async transaction<T>(work: (tx: LoadTransaction) => Promise<T>): Promise<T> {
    const committed: Committed[] = [];
    const result = await this.deps.store.transaction(async (trx: Knex.Transaction) => {
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
    const atCommit = new Map<string, CommittedChange>();
    for (const c of committed) {
      this.known.committed(c.partner, c.variant, c.customers);
      if (c.forgotten) this.known.forget(c.partner, c.forgotten);
      const change: CommittedChange = { partner: c.partner, variant: c.variant, runId: c.runId, policy: c.policy };
      if (c.policy === 'at-commit') {
        if (!atCommit.has(c.partner)) atCommit.set(c.partner, change);
      } else this.bulk.committed(c.runId, change, c.records);
    }
    try {
      for (const change of atCommit.values()) await this.jobs.evaluate(change);
    } catch (error) {
      // The data is committed: a caller that answers for it (a push) must know that.
      throw new AfterCommitError(error);
    }
    // A bulk run's groups: once enough records wait, they are evaluated before the run goes on.
    for (const runId of new Set(committed.filter((c) => c.policy !== 'at-commit').map((c) => c.runId))) {
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
}

/** Where LoadsInTurn loads: the Loader (a transaction each batch) or one LoadTransaction (every batch in it). */
export interface BatchTarget {
  ready(input: BatchInput): ReadyBatch;
  load(batch: ReadyBatch): Promise<BatchResult>;
}

/**
 * Batches loaded in the order they are handed over, each validated as soon as it is handed over
 * (`ready`) while the one before it loads: this process's reading and validation and the store's
 * writes overlap instead of taking turns. The loading sequence of every run: an import's batches
 * and a cursor window's pages (a transaction each, on the Loader), a days window's pages (all in
 * its one transaction). At most two batches are held: `add` resolves once the batch before is
 * loaded and this one has begun. A failed batch fails the next `add` or `done`; nothing after it loads.
 */
export class LoadsInTurn {
  private last: Promise<void> = Promise.resolve();

  /** `loaded` is told each batch's result, in order, with what it was handed over. */
  constructor(private readonly target: BatchTarget, private readonly loaded: (result: BatchResult, input: BatchInput) => void) {}

  async add(input: BatchInput): Promise<void> {
    const ready = this.target.ready(input);
    await this.last;
    this.last = this.target.load(ready).then((result) => this.loaded(result, input));
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
