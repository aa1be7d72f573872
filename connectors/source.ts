/**
 * The seam between source kinds and the pipeline: a source yields pages of raw records for one
 * stream over one window; it knows nothing of validation or the store.
 */
import type { RestStream } from '../src/config/definition.js';

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
   * The pages of one stream for one window. `params` are the window's query parameters
   * (e.g. `modified_since`/`modified_until`, or `date`). Ends after the last page; throws a
   * SourceError (or BudgetExhausted) when the partner fails beyond the retry limits.
   */
  pages(stream: RestStream, params: Record<string, string>): AsyncIterable<unknown[]>;
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
