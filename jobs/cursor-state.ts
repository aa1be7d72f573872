/**
 * A cursor stream's position, kept by the source's data rather than by our clock.
 *
 * The partner stamps its change field with ITS clock (or a replica with its primary's): records
 * stamped behind our clock (skew, a lagging read replica, a batch job stamping business time, a
 * long transaction committing late) would never be read again if the next window started from
 * our clock. So the next window starts at
 *
 *     min(the run's upper bound, the greatest cursor value the window loaded) − lookback
 *
 * and a window that loaded nothing keeps its start. The start never goes back, and never passes
 * the run's upper bound: a record stamped in our future (a partner clock ahead, a bogus year-2099
 * stamp) loads at once (windows are read without an upper limit), but it does not count towards
 * the greatest value loaded (only values up to the upper bound do), so it cannot carry the start
 * past what the source had written when the run began: a partner whose clock runs behind ours and
 * that once wrote a bogus future stamp still has its later changes read. Such a record is read
 * again by each run until our clock passes its stamp; the upsert makes that harmless.
 *
 * A window in progress keeps where it stands (`resume`), committed with each page in the page's
 * own transaction, so a crash or the run budget ends a long first sync at its last page instead
 * of at the window's start. `watermark` (freshness is measured from it) and `start` still move
 * only when a window completes.
 */
import { toUtcTimestamp } from '../src/kernel/timestamp.js';

/** State of a cursor stream in sync_state. */
export interface CursorState {
  /** Upper bound of the last window that loaded completely, ISO 8601 UTC (freshness is measured from it). */
  watermark?: string;
  /**
   * Where the next window starts before the lookback: min(that window's upper bound, the greatest
   * cursor value it loaded), in UTC at microseconds; never decreases. Absent in states written
   * before it existed: min(watermark, max_cursor) then.
   */
  start?: string;
  /** Greatest cursor value loaded, exactly as the source wrote it (precision kept, never rounded). */
  max_cursor?: string;
  /** A window begun and not finished: the next run continues it after its last committed page. */
  resume?: ResumePoint;
  /** The last window was stopped by the reject-rate guard: why (cleared when a window completes). */
  halted?: { at: string; detail: string };
}

export interface ResumePoint {
  /** The window's lower bound (its upper bound is the resuming run's). */
  from: string;
  /** The source's position after the last committed page (a page token, a page number, a keyset position). */
  after: string;
  /** Pages committed so far in this window. */
  pages: number;
  /** Greatest cursor value the window loaded so far, as the source wrote it. */
  max_cursor?: string;
}

/** A date-time in UTC at microseconds, or undefined when the text is not a date-time with a zone. */
export function utcMicros(value: string): string | undefined {
  try {
    return toUtcTimestamp(value);
  } catch {
    return undefined;
  }
}

/** The greatest cursor value offered, compared in UTC at full precision, kept as the source wrote it. */
export class MaxCursor {
  private normalized: string | undefined;
  /** `ceiling` (UTC at microseconds): values stamped after it are not offered (see nextStart). */
  constructor(public value: string | undefined, private readonly ceiling?: string) {
    this.normalized = value === undefined ? undefined : utcMicros(value);
  }

  offer(candidate: unknown): void {
    if (typeof candidate !== 'string' || candidate === this.value) return;
    const utc = utcMicros(candidate);
    if (utc !== undefined && this.ceiling !== undefined && utc > this.ceiling) return;
    if (utc !== undefined && (this.normalized === undefined || utc > this.normalized)) {
      this.value = candidate;
      this.normalized = utc;
    }
  }
}

const earlier = (a: string | undefined, b: string | undefined): string | undefined => (a === undefined ? b : b === undefined ? a : a < b ? a : b);
const later = (a: string | undefined, b: string | undefined): string | undefined => (a === undefined ? b : b === undefined ? a : a > b ? a : b);

/** Where the next window starts before the lookback (UTC at microseconds); undefined for a stream never loaded. */
export function currentStart(state: CursorState | undefined): string | undefined {
  if (!state) return undefined;
  if (state.start !== undefined) return utcMicros(state.start);
  // A state from before `start` existed: its watermark was our clock, which may be ahead of the partner's data.
  const watermark = state.watermark === undefined ? undefined : utcMicros(state.watermark);
  const max = state.max_cursor === undefined ? undefined : utcMicros(state.max_cursor);
  return watermark === undefined ? undefined : earlier(watermark, max);
}

/**
 * The start after a window completed: min(upper bound, greatest cursor value loaded), never
 * before the start the window was read from; unchanged when the window loaded nothing.
 */
export function nextStart(previous: string | undefined, upperBound: string, loadedMax: string | undefined): string | undefined {
  const prev = previous === undefined ? undefined : utcMicros(previous);
  if (loadedMax === undefined) return prev;
  const max = utcMicros(loadedMax);
  const upper = utcMicros(upperBound);
  return later(prev, earlier(upper, max));
}
