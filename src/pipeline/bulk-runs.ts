/**
 * The Loader's bulk runs (Loader.evaluateRun `group` or `behind`): which runs defer their jobs, the partners each wrote
 * to since it last settled and how many records wait, and the settles `settleTogether` holds to
 * the end of its work (docs/loading.md, Bulk runs).
 */
import type { EvaluationPolicy } from './jobs.js';

/** What a partner's settle is asked with (the Loader's CommittedChange). */
interface Change {
  partner: string;
}

/**
 * One `together`'s work: the runs ended with it (`end(runId, group)`) are settled once, when that
 * work ends. Handed to the work and passed on by it explicitly, not found from the async context:
 * an AsyncLocalStorage would turn on Node's promise hooks for every promise of the process, which
 * cost a month's import about a core-second of the process's CPU (bench/README.md).
 */
export class SettleGroup<C extends Change = Change> {
  /** The partners of the runs ended in it, with the change each is settled with. */
  readonly held = new Map<string, C>();
}

interface Run<C extends Change> {
  /** The partners the run wrote to since it last settled. */
  touched: Map<string, C>;
  /** Records loaded since it last settled. */
  unsettled: number;
  /** When it began waiting for its settle (its first unsettled commit), ms (performance.now()). */
  waitingSince: number | null;
  /** How the run evaluates (never `at-commit`: such a run is not bulk). */
  policy: EvaluationPolicy;
}

export class BulkRuns<C extends Change> {
  private readonly runs = new Map<string, Run<C>>();
  /** What earlier runs left on disk, to settle with the next settle (`leftover`). */
  private readonly leftovers = new Map<string, C>();

  /** `settle`: evaluates what these partners' committed batches deferred. */
  constructor(private readonly settle: (changes: readonly C[]) => Promise<void>) {}

  /** Settles the change's partner with the next settle of a run or of `together`, not before. */
  leftover(change: C): void {
    if (!this.leftovers.has(change.partner)) this.leftovers.set(change.partner, change);
  }

  hasLeftover(partner: string): boolean {
    return this.leftovers.has(partner);
  }

  /** `changes` with the leftovers (taken), one change a partner. */
  private withLeftovers(changes: readonly C[]): C[] {
    if (this.leftovers.size === 0) return [...changes];
    const out = new Map(changes.map((c) => [c.partner, c]));
    for (const [partner, change] of this.leftovers) if (!out.has(partner)) out.set(partner, change);
    this.leftovers.clear();
    return [...out.values()];
  }

  defer(runId: string, policy: EvaluationPolicy): void {
    if (!this.runs.has(runId)) this.runs.set(runId, { touched: new Map(), unsettled: 0, waitingSince: null, policy });
  }

  /** The run's policy; undefined: not a bulk run. */
  policyOf(runId: string): EvaluationPolicy | undefined {
    return this.runs.get(runId)?.policy;
  }

  /** A commit of the run wrote `records` records for the change's partner. */
  committed(runId: string, change: C, records: number): void {
    const run = this.runs.get(runId);
    if (!run) return;
    if (!run.touched.has(change.partner)) run.touched.set(change.partner, change);
    run.unsettled += records;
    run.waitingSince ??= performance.now();
  }

  /** Whether at least `every` records of the run wait for its settle, or some have waited `afterMs` or longer. */
  due(runId: string, every: number, afterMs: number): boolean {
    const run = this.runs.get(runId);
    if (!run || run.unsettled === 0) return false;
    return run.unsettled >= every || (run.waitingSince !== null && performance.now() - run.waitingSince >= afterMs);
  }

  /** Settles what the run's committed batches deferred; the run stays bulk. */
  async settleRun(runId: string): Promise<void> {
    const run = this.runs.get(runId);
    if (!run) return;
    const changes = this.withLeftovers([...run.touched.values()]);
    if (changes.length === 0) return;
    run.touched.clear();
    run.unsettled = 0;
    run.waitingSince = null;
    await this.settle(changes);
  }

  /** Settles the run and ends it; with the group of a `together`, its settle waits for the end of that work. */
  async end(runId: string, group?: SettleGroup<C>): Promise<void> {
    if (group) {
      for (const change of this.take(runId)) if (!group.held.has(change.partner)) group.held.set(change.partner, change);
      return;
    }
    await this.settleRun(runId);
    this.runs.delete(runId);
  }

  /** Ends the run and hands over the partners it wrote to since it last settled (unsettled). */
  take(runId: string): C[] {
    const run = this.runs.get(runId);
    this.runs.delete(runId);
    return [...(run?.touched.values() ?? [])];
  }

  /** Runs `work` with the settles of the runs it ends with its group held to its end (Loader.settleTogether). */
  async together<T>(work: (group: SettleGroup<C>) => Promise<T>): Promise<T> {
    const group = new SettleGroup<C>();
    const held = (): C[] => [...group.held.values()];
    let result: T;
    try {
      result = await work(group);
    } catch (error) {
      await this.settle(this.withLeftovers(held())).catch(() => undefined);
      throw error;
    }
    await this.settle(this.withLeftovers(held()));
    return result;
  }
}
