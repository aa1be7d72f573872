/**
 * One read = one read-only transaction that sees one consistent snapshot: every page of a window
 * comes from the same state of the source, so a row updated between two pages cannot move from a
 * page not yet read to one already read (and be missed), and nothing read can be written.
 *
 * - MySQL/MariaDB: `START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY` (InnoDB takes the
 *   snapshot at once, not at the first read).
 * - PostgreSQL: `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`.
 * - SQLite: a deferred read transaction (the snapshot is taken at the first read).
 *
 * The transaction is held while pages are yielded and ends when the read completes (COMMIT), fails,
 * or is abandoned (`return()` of the iterator), which also releases the connection.
 */
import type { SqlConnection } from './connection.js';
import type { SqlSession } from './session.js';

export async function* inSnapshot<T>(db: SqlConnection, what: string, read: (session: SqlSession) => AsyncIterable<T>): AsyncGenerator<T> {
  const session = await db.acquire(what);
  let open = false;
  let completed = false;
  try {
    await session.query(db.dialect.beginSnapshot, {}, `${what}: starting a read-only snapshot`);
    open = true;
    yield* read(session);
    completed = true;
  } finally {
    if (open && session.usable) {
      // A connection whose transaction could not be ended must not serve the next read.
      await session.query(completed ? 'COMMIT' : 'ROLLBACK', {}, `${what}: ending the snapshot`).catch(() => session.discard());
    }
    await session.release();
  }
}
