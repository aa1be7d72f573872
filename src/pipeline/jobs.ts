/**
 * The contract of the after-load jobs (fraud rules, commissions, phase history, report facts,
 * postbacks, and whatever comes next): each is one module implementing `AfterLoadJob`, and the
 * load path composes them from what they declare. It names no job.
 *
 * A job's life with one batch:
 * - `mark(tx, change)` runs inside the batch's load transaction with the batch's change set (the
 *   rows written, each with the stored version it replaced, read once by the transaction): what the
 *   job writes commits with the batch, so a crash loses nothing.
 * - `evaluate(ctx)` runs after the commit for each partner it touched, when the run's evaluation
 *   policy says: after every commit (`at-commit`), behind the commits (`behind`: a push, answered at
 *   its commit), or over the run's group (`group`: a bulk run, at its settle). What `mark` left on
 *   disk for it is its scope; a crash leaves that scope to the next loading command (`pending`).
 *
 * `after` orders both: marks run in an order where every job comes after those it names, and an
 * evaluation is handed `ctx.after`, which resolves once they have evaluated. On a store with
 * concurrent transactions the evaluations of one partner start together and each awaits
 * `ctx.after` before it reads what those jobs write; on a single-connection store they run one
 * after the other in that order. A name `job:stage` waits only until that job calls
 * `ctx.reached(stage)` (or ends).
 */
import type { Knex } from 'knex';
import type { Entity, SpecRecord, Variant } from '../types.js';
import type { LearnedVia, TombstoneRef } from '../store/tombstones.js';
import { inSpan } from '../trace.js';

/** How a run's batches are evaluated (chosen by the run, handed to every job). */
export type EvaluationPolicy =
  /** Every job is exact after each commit: a sync's batch. */
  | 'at-commit'
  /** The jobs that can wait are evaluated behind the commits, a few times a second: pushes. */
  | 'behind'
  /** What can wait is evaluated over the run's group, at its settle: imports, backfills, first syncs. */
  | 'group';

/** A stored row as the store holds it (column name → value), keyed in PriorRows by its table key. */
export type StoredRow = Record<string, unknown>;

/** The stored versions a batch's writes replaced, per entity: table key (src/store/rows.ts batchKey) → the row before the batch. */
export type PriorRows = Record<Entity, Map<string, StoredRow>>;

export const emptyPriorRows = (): PriorRows => ({ customers: new Map(), transactions: new Map(), activity: new Map() });

/**
 * What one batch (or one day replacement) changed inside a load transaction, built once by the
 * transaction and read by every job's `mark`.
 */
export interface ChangeSet extends CommittedChange {
  /** Records upserted per entity (the latest version of each key), including released ones. */
  records: Record<Entity, SpecRecord[]>;
  /**
   * The stored rows the writes replaced, with the columns the jobs declared (`priors`); a key
   * absent was not stored. Empty when the store could hold none of the keys (a COPY of only new keys).
   */
  prior: PriorRows;
  /**
   * Stored rows the batch deleted, per entity: the activity rows of the days it replaced (their
   * table key), or the whole rows of records deleted at the source (`deleted` says so).
   */
  removed: Record<Entity, StoredRow[]>;
  /** Activity days replaced whole (their stored rows are in `removed.activity`). */
  replacedDays: string[];
  /** A delete learned at the source (Loader.remove): how, and the tombstones of `removed`'s rows, in their order. */
  deleted?: DeleteChange;
}

/** What a delete adds to its change set. */
export interface DeleteChange {
  learnedVia: LearnedVia;
  tombstones: TombstoneRef[];
}

/** A partner a committed transaction wrote to, as an evaluation is asked for it. */
export interface CommittedChange {
  partner: string;
  variant: Variant;
  runId: string;
  policy: EvaluationPolicy;
}

/** The load transaction as a job's `mark` sees it. */
export interface JobTransaction {
  readonly trx: Knex.Transaction;
  /** A value computed once per load transaction (a definition list a job reads once, not per batch). */
  once<T>(key: string, compute: () => Promise<T>): Promise<T>;
}

export interface EvaluationContext {
  change: CommittedChange;
  /** Resolves once the jobs named in `after` have evaluated this partner (or reached the stage named). */
  after: Promise<void>;
  /** Tells the jobs waiting for `name:stage` that this one has reached it. */
  reached(stage: string): void;
}

export interface AfterLoadJob {
  readonly name: string;
  /** Jobs (or `job:stage`) this one's mark and evaluation come after. An absent job is no constraint. */
  readonly after?: readonly string[];
  /** The stored columns the job needs of the versions a batch's records replace (`[]`: the key alone, whether it was stored; undefined: none). */
  priors?(entity: Entity, variant: Variant, policy: EvaluationPolicy): readonly string[] | undefined;
  /** In the batch's load transaction. */
  mark?(tx: JobTransaction, change: ChangeSet): Promise<void>;
  /** After the commit, per partner, as the run's policy says. */
  evaluate?(ctx: EvaluationContext): Promise<void>;
  /** Partners with a scope on disk waiting for an evaluation (a crash, a run that did not settle). */
  pending?(knex: Knex): Promise<{ partner: string; variant: Variant }[]>;
}

/** The jobs in an order where each comes after those it names (listed order otherwise); a cycle is an error. */
export function orderJobs(jobs: readonly AfterLoadJob[]): AfterLoadJob[] {
  const byName = new Map(jobs.map((j) => [j.name, j]));
  if (byName.size !== jobs.length) throw new Error('after-load jobs: two jobs share a name');
  const out: AfterLoadJob[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (job: AfterLoadJob, path: string[]): void => {
    if (state.get(job.name) === 'done') return;
    if (state.get(job.name) === 'visiting') throw new Error(`after-load jobs: a circle of "after": ${[...path, job.name].join(' → ')}`);
    state.set(job.name, 'visiting');
    for (const name of job.after ?? []) {
      const before = byName.get(name.split(':')[0] as string);
      if (before) visit(before, [...path, job.name]);
    }
    state.set(job.name, 'done');
    out.push(job);
  };
  for (const job of jobs) visit(job, []);
  return out;
}

/** The jobs composed: what the load path calls. */
export class AfterLoadJobs {
  readonly ordered: readonly AfterLoadJob[];

  constructor(jobs: readonly AfterLoadJob[], private readonly concurrent: boolean) {
    this.ordered = orderJobs(jobs);
  }

  /** The union of the stored columns the jobs need of the entity's replaced versions (the key is always read); undefined: no job needs them. */
  priorColumns(entity: Entity, variant: Variant, policy: EvaluationPolicy): string[] | undefined {
    let columns: Set<string> | undefined;
    for (const job of this.ordered) {
      const wanted = job.priors?.(entity, variant, policy);
      if (wanted) for (const c of wanted) (columns ??= new Set()).add(c);
      if (wanted && !columns) columns = new Set();
    }
    return columns && [...columns];
  }

  async mark(tx: JobTransaction, change: ChangeSet): Promise<void> {
    for (const job of this.ordered) await job.mark?.(tx, change);
  }

  /** Whether any job evaluates after the commit. */
  get evaluates(): boolean {
    return this.ordered.some((j) => j.evaluate);
  }

  /** Evaluates one partner: every job's evaluation, ordered and side by side as declared. A failure is thrown once all ended. */
  async evaluate(change: CommittedChange): Promise<void> {
    const jobs = this.ordered.filter((j) => j.evaluate);
    if (jobs.length === 0) return;
    if (!this.concurrent) {
      for (const job of jobs) await this.evaluateOne(job, { change, after: Promise.resolve(), reached: () => undefined });
      return;
    }
    // Each job's end, and each stage it reaches (resolved at its end at the latest).
    const ends = new Map<string, Promise<void>>();
    const stages = new Map<string, { promise: Promise<void>; resolve: () => void }>();
    const stage = (key: string) => {
      let s = stages.get(key);
      if (!s) {
        let resolve = (): void => undefined;
        const promise = new Promise<void>((r) => { resolve = r; });
        stages.set(key, (s = { promise, resolve }));
      }
      return s;
    };
    const names = new Set(jobs.map((j) => j.name));
    const runs: Promise<void>[] = [];
    for (const job of jobs) {
      const waits = (job.after ?? []).filter((n) => names.has(n.split(':')[0] as string))
        .map((n) => (n.includes(':') ? stage(n).promise : ends.get(n) ?? Promise.resolve()));
      const after = Promise.all(waits).then(() => undefined);
      const run = this.evaluateOne(job, { change, after, reached: (s) => stage(`${job.name}:${s}`).resolve() });
      // A job's stages are reached at its end whatever happened.
      const end = run.catch(() => undefined).then(() => {
        for (const [key, s] of stages) if (key.startsWith(`${job.name}:`)) s.resolve();
      });
      ends.set(job.name, end);
      runs.push(run);
    }
    const results = await Promise.allSettled(runs);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  }

  /** One job's evaluation, in a `job.evaluate` span (src/trace.ts). */
  private evaluateOne(job: AfterLoadJob, ctx: EvaluationContext): Promise<void> {
    const { change } = ctx;
    return inSpan('job.evaluate', { 'job.name': job.name, partner: change.partner, 'run.id': change.runId, 'run.policy': change.policy }, () => job.evaluate!(ctx));
  }
}
