/**
 * One worker per SQLite store file. The lock is an exclusive SQLite lock on a small file beside
 * the store (`<store>.worker-lock`): the operating system drops it when the holding process ends,
 * however it ends (SIGKILL included), so a stale lock cannot outlive its worker and no pid guess is
 * needed. Who holds it is written beside it (`<store>.worker-lock.json`) for the message a second
 * worker prints. It works between containers sharing a volume on one host; on a network file
 * system, file locks are only as good as that file system's.
 */
import { hostname } from 'node:os';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';

export interface InstanceLock {
  readonly file: string;
  release(): void;
}

export class InstanceLockedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'InstanceLockedError';
  }
}

interface Holder {
  pid: number;
  host: string;
  started_at: string;
}

function describeHolder(infoFile: string): string {
  try {
    const h = JSON.parse(readFileSync(infoFile, 'utf8')) as Partial<Holder>;
    return `pid ${h.pid ?? '?'} on host ${h.host ?? '?'}, since ${h.started_at ?? '?'}`;
  } catch {
    return 'holder unknown';
  }
}

/** Takes the store's worker lock, or throws InstanceLockedError naming the worker that has it. */
export function acquireInstanceLock(storeFile: string, now: Date): InstanceLock {
  const file = `${storeFile}.worker-lock`;
  const infoFile = `${file}.json`;
  const db = new Database(file, { timeout: 0 });
  try {
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY' || (error as { code?: string }).code === 'SQLITE_LOCKED') {
      throw new InstanceLockedError(
        `another partner-sync worker is running on the SQLite store ${storeFile} (${describeHolder(infoFile)}); ` +
          'a SQLite store takes one worker. Stop that worker first, or use a PostgreSQL store (--store postgres://... or STORE_URL) to run several.',
        { cause: error },
      );
    }
    throw new Error(`cannot take the worker lock ${file}: ${(error as Error).message}`, { cause: error });
  }
  const holder: Holder = { pid: process.pid, host: hostname(), started_at: now.toISOString() };
  try {
    writeFileSync(infoFile, JSON.stringify(holder) + '\n');
  } catch {
    // Only the message of a refused worker uses it.
  }
  let released = false;
  return {
    file,
    release() {
      if (released) return;
      released = true;
      try {
        const current = JSON.parse(readFileSync(infoFile, 'utf8')) as Partial<Holder>;
        if (current.pid === holder.pid && current.started_at === holder.started_at) rmSync(infoFile, { force: true });
      } catch {
        // already gone
      }
      try {
        db.exec('ROLLBACK');
      } finally {
        db.close();
      }
    },
  };
}
