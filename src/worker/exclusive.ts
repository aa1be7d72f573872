/**
 * A run outside the worker's schedule (a manual `run` or `backfill`, a backfill started from the
 * console) takes the same per-stream locks as the worker, so it never pulls a stream the worker
 * is pulling. Here, beside the locks, so that every face that starts such a run uses this one.
 */
import type { RunPartnerDeps } from '../../jobs/run-partner.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';
import { jobKey } from './jobs.js';
import { locksFor, withStreamLock } from './locks.js';

/** The worker's per-stream locks, for a manual run or backfill (PostgreSQL; SQLite takes one writer process). */
export async function withExclusiveStreams<T>(store: Store, logger: Logger, work: (exclusive: RunPartnerDeps['exclusive']) => Promise<T>): Promise<T> {
  const locks = locksFor(store, logger);
  try {
    return await work((partner, stream, run) => withStreamLock(locks, jobKey(partner, stream), run));
  } finally {
    await locks.close();
  }
}
