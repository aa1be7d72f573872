/**
 * A run outside the worker's schedule (a manual `run` or `backfill`, a backfill started from the
 * console) takes the same per-stream locks as the worker, so it never pulls a stream the worker
 * is pulling. Here, below the faces, so that every face that starts such a run uses this one.
 */
import type { Logger } from '../src/log.js';
import { jobKey, locksFor, withStreamLock } from '../src/store/stream-locks.js';
import type { Store } from '../src/store/store.js';
import type { RunPartnerDeps } from './run-partner.js';

/** The worker's per-stream locks, for a manual run or backfill (PostgreSQL; SQLite takes one writer process). */
export async function withExclusiveStreams<T>(store: Store, logger: Logger, work: (exclusive: RunPartnerDeps['exclusive']) => Promise<T>): Promise<T> {
  const locks = locksFor(store, logger);
  try {
    return await work((partner, stream, run) => withStreamLock(locks, jobKey(partner, stream), run));
  } finally {
    await locks.close();
  }
}
