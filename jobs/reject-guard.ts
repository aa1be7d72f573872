/**
 * The reject-rate guard: a window that rejects more than `max_reject_ratio` of its records is
 * not a partner sending a few bad records but a broken mapping or a changed source format. Such a
 * window ends `failed`, naming the most common reasons, and the stream's start does not move, so
 * the records are read again once the definition is fixed. The rejects are kept (they show what
 * went wrong). Small windows are not judged: below MIN_RECORDS a few bad records are a high ratio
 * by chance.
 */
import type { BatchResult } from '../src/pipeline/batch.js';

/** Windows with fewer records are not judged. */
export const MIN_RECORDS = 20;
export const DEFAULT_MAX_REJECT_RATIO = 0.5;

export class RejectRateExceeded extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RejectRateExceeded';
  }
}

export interface RejectGuard {
  /** Counts a loaded batch of the window. */
  add(result: Pick<BatchResult, 'received' | 'rejected' | 'rejects'>): void;
  /** Throws RejectRateExceeded when the window so far rejects more than allowed. */
  check(): void;
}

export function rejectGuard(maxRatio: number, what: string): RejectGuard {
  let received = 0;
  let rejected = 0;
  // field + rule → records rejected for it (a record counts once per distinct reason).
  const reasons = new Map<string, number>();
  return {
    add(result) {
      received += result.received;
      rejected += result.rejected;
      for (const reject of result.rejects) {
        const seen = new Set<string>();
        for (const error of reject.errors) {
          const key = `${error.field || '(record)'} ${error.rule}`;
          if (seen.has(key)) continue;
          seen.add(key);
          reasons.set(key, (reasons.get(key) ?? 0) + 1);
        }
      }
    },
    check() {
      if (received < MIN_RECORDS || rejected <= maxRatio * received) return;
      const top = [...reasons].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 3);
      const percent = Math.round((rejected / received) * 1000) / 10;
      throw new RejectRateExceeded(
        `${what}: ${rejected} of ${received} records rejected (${percent}%), more than max_reject_ratio ${maxRatio}: ` +
        `the window is stopped and the stream's start does not move; fix the definition or the source, then run again. ` +
        `Top reasons: ${top.map(([reason, n]) => `${reason} (${n})`).join(', ')}`,
      );
    },
  };
}
