/**
 * One run of the load path, whatever its face: a sync or backfill window, an import, a replay of
 * rejects, a push. It is started (a `runs` row, except for a push), tallies each batch's result,
 * is settled as its evaluation policy says (src/pipeline/jobs.ts), and finishes (the row closed
 * with its counts). Every composition of a run (jobs/sync-stream.ts, jobs/import-file.ts,
 * jobs/replay-rejects.ts, src/push/group-commit.ts) goes through it.
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
  ) {
    loader.evaluateRun(id, policy);
  }

  /** Starts a recorded run (closing the stream's abandoned ones first). */
  static async start(loader: Loader, start: RunStart, policy: EvaluationPolicy, together?: SettleGroup): Promise<Run> {
    const id = await startRun(loader.store.knex, start, loader.store.now());
    return new Run(loader, id, policy, together, true);
  }

  /** A run without a `runs` row (a push's group commit: its requests are its record). */
  static unrecorded(loader: Loader, id: string, policy: EvaluationPolicy): Run {
    return new Run(loader, id, policy, undefined, false);
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
    if (this.policy === 'behind') this.loader.evaluateBehind(this.id);
    else if (this.policy === 'group') await this.loader.endDeferred(this.id, this.together);
  }

  get durationMs(): number {
    return performance.now() - this.started;
  }

  /** Closes the run's row with its status and counts. */
  async finish(status: Exclude<RunStatus, 'running'>, end: { error?: string; finalCursor?: string } = {}): Promise<void> {
    if (!this.recorded) return;
    await finishRun(this.loader.store.knex, this.id, { status, counts: this.counts, durationMs: this.durationMs, ...end }, this.loader.store.now());
  }
}
