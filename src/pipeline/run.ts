/**
 * One run of the load path, whatever its face: a sync or backfill window, an import, a replay of
 * rejects, a push. It is started (a `runs` row, except for a push), tallies each batch's result,
 * is settled as its evaluation policy says (src/pipeline/jobs.ts), and finishes (the row closed
 * with its counts). Every composition of a run (jobs/sync-stream.ts, jobs/import-file.ts,
 * jobs/replay-rejects.ts, src/push/group-commit.ts) goes through it. A recorded run is a `run`
 * span (src/trace.ts) from its start to its finish; its windows and batches are its children when
 * they run `within` it.
 *
 *   const run = await Run.start(loader, { partner, stream: 'transactions', kind: 'import' }, 'group');
 *   await new LoadsInTurn(loader, (result) => run.tally(result)).add(batch) ...
 *   await run.settle();
 *   await run.finish('succeeded');
 */
import type { EvaluationPolicy } from './jobs.js';
import type { Loader, SettleGroup } from './load.js';
import type { BatchResult } from './batch.js';
import { addCounts, emptyCounts, finishRun, startRun, type RunCounts, type RunStart, type RunStatus } from '../store/runs.js';
import { detached, recordFailure, startSpan, withSpan, type Span } from '../trace.js';

/** The rejects of the batches tallied, per `field rule` of each record's first violation. */
export function addRejects(into: Record<string, number>, r: Pick<BatchResult, 'rejects'>): void {
  for (const reject of r.rejects) {
    const first = reject.errors[0];
    const key = first === undefined ? 'record invalid' : `${first.field} ${first.rule}`;
    into[key] = (into[key] ?? 0) + 1;
  }
}

/** What a run has tallied so far (Run.mark / Run.restore: a window refused after it loaded). */
export interface RunTally {
  counts: RunCounts;
  rejectedBy: Record<string, number>;
}

export class Run {
  readonly counts = emptyCounts();
  /** Rejected records per `field rule` of their first violation. */
  readonly rejectedBy: Record<string, number> = {};
  private readonly started = performance.now();

  private constructor(
    private readonly loader: Loader,
    readonly id: string,
    readonly policy: EvaluationPolicy,
    /** The group of a Loader.settleTogether the run is part of: its settle waits for the end of that work. */
    private readonly together: SettleGroup | undefined,
    /** Whether the run has a `runs` row to close. */
    private readonly recorded: boolean,
    /** The run's `run` span (none for a push's group commit: its span is the commit's). */
    private readonly span?: Span,
  ) {
    loader.evaluateRun(id, policy);
  }

  /** Starts a recorded run (closing the stream's abandoned ones first). */
  static async start(loader: Loader, start: RunStart, policy: EvaluationPolicy, together?: SettleGroup): Promise<Run> {
    const id = await startRun(loader.store.knex, start, loader.store.now());
    const span = startSpan('run', {
      partner: start.partner, stream: start.stream, 'run.id': id, 'run.kind': start.kind, 'run.policy': policy,
      ...(start.windowFrom === undefined ? {} : { 'window.from': start.windowFrom }), ...(start.windowTo === undefined ? {} : { 'window.to': start.windowTo }),
    });
    return new Run(loader, id, policy, together, true, span);
  }

  /** A run without a `runs` row (a push's group commit: its requests are its record). */
  static unrecorded(loader: Loader, id: string, policy: EvaluationPolicy): Run {
    return new Run(loader, id, policy, undefined, false);
  }

  /** Runs `work` with the run's span active: the windows and batches it begins are the run's children. */
  within<T>(work: () => Promise<T>): Promise<T> {
    return this.span ? withSpan(this.span, work) : work();
  }

  /** Adds a batch's result to the run's counts. */
  tally(r: BatchResult): void {
    addRejects(this.rejectedBy, r);
    addCounts(this.counts, { pulled: r.received, valid: r.valid, rejected: r.rejected, loaded: r.loaded, waiting: r.waiting, stale: r.stale, released: r.released, erased: r.erased, ...(r.deleted ? { deleted: r.deleted } : {}), ...(r.deletesHeld ? { deletes_held: r.deletesHeld } : {}) });
  }

  /** What is tallied now, to go back to (restore). */
  mark(): RunTally {
    return { counts: { ...this.counts }, rejectedBy: { ...this.rejectedBy } };
  }

  /** Goes back to a tally taken before (a window whose loads were all rolled back). */
  restore(tally: RunTally): void {
    delete this.counts.deleted;
    delete this.counts.deletes_held;
    Object.assign(this.counts, tally.counts);
    for (const k of Object.keys(this.rejectedBy)) delete this.rejectedBy[k];
    Object.assign(this.rejectedBy, tally.rejectedBy);
  }

  /**
   * Evaluates what the run's batches left to evaluate, as its policy says, and ends its bulk
   * evaluation: over its group now (or with the settleTogether it is part of), or behind the
   * commits (`behind`: in the background). At commit there is nothing left.
   */
  async settle(): Promise<void> {
    // Behind the commits, the evaluations outlive the span: traces of their own.
    if (this.policy === 'behind') detached(() => this.loader.evaluateBehind(this.id));
    else if (this.policy === 'group') await this.within(() => this.loader.endDeferred(this.id, this.together));
  }

  get durationMs(): number {
    return performance.now() - this.started;
  }

  /**
   * Closes the run's row with its status and counts, and ends its span: a failed run's is ERROR,
   * with the exception (`cause`'s name, `error` as its message: redacted by the caller).
   */
  async finish(status: Exclude<RunStatus, 'running'>, end: { error?: string; finalCursor?: string; cause?: unknown } = {}): Promise<void> {
    if (!this.recorded) return;
    const { cause, ...closed } = end;
    try {
      await finishRun(this.loader.store.knex, this.id, { status, counts: this.counts, durationMs: this.durationMs, ...closed }, this.loader.store.now());
    } finally {
      const c = this.counts;
      this.span?.setAttributes({ 'run.status': status, 'records.pulled': c.pulled, 'records.loaded': c.loaded, 'records.rejected': c.rejected, 'records.waiting': c.waiting, 'records.stale': c.stale });
      if (status === 'failed' && this.span) recordFailure(this.span, { name: (cause as Error | undefined)?.name ?? 'Error', message: end.error ?? 'run failed' });
      this.span?.end();
    }
  }
}
