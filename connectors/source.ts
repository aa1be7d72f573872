/**
 * The seam between source kinds and the pipeline: a source yields pages of raw records for one
 * stream over one window; it knows nothing of validation or the store.
 */
import type { StreamDefinition } from '../src/config/definition.js';

/** Changes with the cursor column in [from, to): from inclusive, to exclusive (ISO 8601 UTC). */
export interface CursorWindow {
  kind: 'cursor';
  from: string;
  to: string;
}

/** Whole closed UTC days `from`..`to`, both included (YYYY-MM-DD). */
export interface DaysWindow {
  kind: 'days';
  from: string;
  to: string;
}

export type PullWindow = CursorWindow | DaysWindow;

/** Counters of one source client over a run (run history and metrics). */
export interface SourceStats {
  requests: number;
  /** Requests repeated after a network error, a timeout or a 5xx. */
  retries: number;
  /** 429 responses received. */
  throttled: number;
  /** Time spent waiting for the rate limit, backoff and Retry-After. */
  waitedMs: number;
}

export interface Source {
  /**
   * The pages of one stream for one window. Ends after the last page; throws a SourceError (or
   * BudgetExhausted) when the partner fails beyond the retry limits.
   */
  pages(stream: StreamDefinition, window: PullWindow): AsyncIterable<unknown[]>;
  /**
   * The window as far as the source can serve it now: a database source lowers a cursor
   * window's upper bound to its own clock minus a safety lag. Absent: the window as asked.
   */
  bound?(stream: StreamDefinition, window: PullWindow): Promise<PullWindow>;
  /**
   * Problems with a stream's table, view or query as the source sees it (a missing table or
   * mapped column, an incompatible column type); empty when fine. Database sources; used by `check`.
   */
  inspect?(stream: StreamDefinition): Promise<string[]>;
  /** Releases connections (database sources). */
  close?(): Promise<void>;
  readonly stats: SourceStats;
}

/** A partner-side failure, its message already scrubbed (method, URL without secrets, status, body excerpt). */
export class SourceError extends Error {
  constructor(message: string, options?: { cause?: unknown; status?: number }) {
    super(message, options);
    this.name = 'SourceError';
    this.status = options?.status;
  }
  readonly status?: number;
}

/** A wait (Retry-After, backoff) would run past the run's budget: the stream ends cleanly, progress kept. */
export class BudgetExhausted extends SourceError {
  constructor(message: string) {
    super(message);
    this.name = 'BudgetExhausted';
  }
}
