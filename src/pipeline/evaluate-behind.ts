/**
 * Evaluations behind the commits (Loader.evaluateBehind): one evaluation per partner at a time,
 * each taking what the partner's committed batches deferred so far (its scope is on disk), after
 * gathering `gatherBehindMs` of further commits. A commit that lands while one runs asks for
 * another, not one of its own.
 */
/** An evaluation behind the commits waits this long for more commits to take with it (LoaderDeps.gatherBehindMs). */
export const GATHER_BEHIND_MS = 250;

/** What a partner's evaluation is asked with (the Loader's CommittedChange). */
interface Change {
  partner: string;
}

export interface EvaluationsBehindDeps<C extends Change> {
  /** Evaluates what the partner's committed batches deferred (the Loader's `settle` hook). */
  settle?: (change: C) => Promise<void>;
  /** Told when an evaluation fails: its scope stays on disk for the next one. */
  settleFailed?: (change: C, error: unknown) => void;
  gatherBehindMs?: number;
}

interface Partner<C extends Change> {
  change: C;
  /** Commits asked for an evaluation since the running one took its scope. */
  again: boolean;
  done: Promise<void>;
}

export class EvaluationsBehind<C extends Change> {
  private readonly partners = new Map<string, Partner<C>>();

  constructor(private readonly deps: EvaluationsBehindDeps<C>) {}

  /** The partner's committed batches deferred work: evaluate it soon (once, however often asked meanwhile). */
  ask(change: C): void {
    const running = this.partners.get(change.partner);
    if (running) {
      running.again = true;
      return;
    }
    const entry: Partner<C> = { change, again: true, done: Promise.resolve() };
    // In the map before the loop starts: a loop that ends without waiting must find itself there.
    this.partners.set(change.partner, entry);
    entry.done = this.evaluateWhileAsked(entry);
  }

  /** Resolves when no evaluation is running or due. */
  async drain(): Promise<void> {
    while (this.partners.size > 0) await Promise.all([...this.partners.values()].map((e) => e.done));
  }

  private async evaluateWhileAsked(entry: Partner<C>): Promise<void> {
    while (entry.again) {
      const gather = this.deps.gatherBehindMs ?? GATHER_BEHIND_MS;
      if (gather > 0) await new Promise((resolve) => setTimeout(resolve, gather));
      entry.again = false;
      try {
        await this.deps.settle?.(entry.change);
      } catch (error) {
        this.deps.settleFailed?.(entry.change, error);
      }
    }
    this.partners.delete(entry.change.partner);
  }
}
