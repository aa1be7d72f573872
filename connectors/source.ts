/**
 * The seam between source kinds and the pipeline: a source yields pages of raw records for one
 * stream over one window; it knows nothing of validation or the store.
 */
import type { StreamDefinition } from '../src/config/definition.js';

/**
 * Changes with the cursor column in [from, to): from inclusive, to exclusive (ISO 8601 UTC).
 * `open`: every change from `from` on is read, whatever its stamp; `to` is then only the run's
 * upper bound, which the stream's start may not pass (a record stamped in the future loads now).
 */
export interface CursorWindow {
  kind: 'cursor';
  from: string;
  to: string;
  open?: boolean;
}

/** A page of a cursor window with where the read continues after it. */
export interface PositionedPage {
  records: unknown[];
  /**
   * The source's position after this page (a page token, a page number, a keyset position), as
   * text to store; absent after the last page. Passed back to `cursorPages` it continues there.
   */
  next?: string;
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
  /** Page walks read again because the partner's records shifted between pages (page and offset pagination). */
  pageRewalks?: number;
}

export interface Source {
  /**
   * The pages of one stream for one window. Ends after the last page; throws a SourceError (or
   * BudgetExhausted) when the partner fails beyond the retry limits.
   */
  pages(stream: StreamDefinition, window: PullWindow): AsyncIterable<unknown[]>;
  /**
   * The pages of a cursor window with their positions, continuing after `after` (a `next` of an
   * earlier read of the same window) when given. A position the partner no longer accepts fails
   * with a SourceError before the first page (PositionRefused where the source can tell).
   */
  cursorPages?(stream: StreamDefinition, window: CursorWindow, after?: string): AsyncIterable<PositionedPage>;
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
  constructor(message: string, options?: { cause?: unknown; status?: number; body?: string }) {
    super(message, options);
    this.name = 'SourceError';
    this.status = options?.status;
    this.body = options?.body;
  }
  readonly status?: number;
  /** A refused HTTP request: the body's scrubbed excerpt, for callers that read what the partner says is wrong. */
  readonly body?: string;
}

/** The partner refused a stored read position (an expired or unknown page token): the window must start over. */
export class PositionRefused extends SourceError {
  constructor(message: string, options?: { cause?: unknown; status?: number }) {
    super(message, options);
    this.name = 'PositionRefused';
  }
}

/**
 * A page-number or offset walk whose records kept shifting between pages over every walk allowed:
 * what was read is loaded (upserts), but the window is not complete, so the stream's start and
 * watermark must stay where the window began and the next run read it again.
 */
export class PageWalkUnstable extends SourceError {
  constructor(message: string) {
    super(message);
    this.name = 'PageWalkUnstable';
  }
}

/** A wait (Retry-After, backoff) would run past the run's budget: the stream ends cleanly, progress kept. */
export class BudgetExhausted extends SourceError {
  constructor(message: string) {
    super(message);
    this.name = 'BudgetExhausted';
  }
}
