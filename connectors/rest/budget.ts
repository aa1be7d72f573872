/**
 * The run's time budget. Every wait of the REST source (rate limit, backoff, Retry-After) goes
 * through here, so a wait that would end past the deadline becomes BudgetExhausted instead of a
 * sleep: the sync job ends the stream cleanly with its progress kept and the next run resumes.
 */
import { BudgetExhausted, type SourceStats } from '../source.js';

export interface Budget {
  /** Epoch ms: the end of the run's budget. */
  readonly deadline: number;
  /** Sleeps `ms` (counted in `stats.waitedMs`), or throws BudgetExhausted when that would end past the deadline. */
  wait(ms: number, why: string): Promise<void>;
}

export interface BudgetDeps {
  clock: () => Date;
  sleep: (ms: number) => Promise<void>;
  deadline: number;
  stats: SourceStats;
}

export function createBudget(deps: BudgetDeps): Budget {
  const { clock, sleep, deadline, stats } = deps;
  return {
    deadline,
    async wait(ms, why) {
      const wait = Math.max(0, Math.ceil(ms));
      if (wait === 0) return;
      const now = clock().getTime();
      if (now + wait > deadline) {
        throw new BudgetExhausted(
          `${why}: waiting ${wait} ms would end past the run's budget (deadline ${new Date(deadline).toISOString()}, ${Math.max(0, deadline - now)} ms left)`,
        );
      }
      await sleep(wait);
      stats.waitedMs += wait;
    },
  };
}
