/**
 * Mutual exclusion of (partner, stream) runs across worker processes.
 *
 * - PostgreSQL (`locking: 'advisory'`): `pg_try_advisory_lock` on a connection of its own, held
 *   for the run and closed after it. A killed worker's session ends with its TCP connection, and
 *   PostgreSQL drops its locks with it: nothing to expire, nothing to clean up. Keepalives are on,
 *   so a worker whose host vanishes without closing its sockets is noticed too. The lock key
 *   hashes the store's schema with the name, so stores in several schemas of one database (tests)
 *   do not exclude each other.
 * - SQLite (`locking: 'single-process'`): one worker per store file (instance-lock.ts) makes
 *   in-process exclusion enough.
 *
 * Which one a store gets is data from its dialect profile, not a test of the client name.
 */
import pg from 'pg';
import type { Logger } from '../log.js';
import type { DialectProfile } from '../store/dialects.js';
import type { Store } from '../store/store.js';

export interface Lease {
  readonly name: string;
  /** False once the lock is known lost (its connection ended). */
  readonly held: boolean;
  release(): Promise<void>;
}

export interface StreamLocks {
  /** The lock of `name` when no one (in any worker) holds it; undefined when someone does. */
  tryAcquire(name: string): Promise<Lease | undefined>;
  /** Releases every lease still held. */
  close(): Promise<void>;
}

/** In-process locks: enough where one process is the only worker (SQLite). */
export function localLocks(): StreamLocks {
  const held = new Set<string>();
  return {
    async tryAcquire(name) {
      if (held.has(name)) return undefined;
      held.add(name);
      let released = false;
      return {
        name,
        get held() {
          return !released;
        },
        async release() {
          released = true;
          held.delete(name);
        },
      };
    },
    async close() {
      held.clear();
    },
  };
}

export interface AdvisoryLockOptions {
  /** PostgreSQL connection string (the store's: same database, same search_path). */
  connectionString: string;
  logger: Logger;
  /** Seconds before a connection attempt for a lock gives up. */
  connectTimeoutMs?: number;
}

const LOCK_SQL = "select pg_try_advisory_lock(hashtextextended(coalesce(current_schema(), '') || ':partner-sync:' || $1, 0)) as ok";

/** PostgreSQL session advisory locks, one connection per held lock. */
export function advisoryLocks(options: AdvisoryLockOptions): StreamLocks {
  const open = new Set<pg.Client>();
  return {
    async tryAcquire(name) {
      const client = new pg.Client({
        connectionString: options.connectionString,
        keepAlive: true,
        keepAliveInitialDelayMillis: 10_000,
        connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
        application_name: `partner-sync worker lock ${name}`.slice(0, 63),
      });
      let held = false;
      let ended = false;
      client.on('error', (error) => {
        if (held) options.logger.error(`lost the lock connection of ${name} while holding it: ${error.message}; another worker may start this stream`, { lock: name });
        held = false;
      });
      client.on('end', () => {
        ended = true;
        held = false;
      });
      await client.connect();
      open.add(client);
      try {
        const { rows } = await client.query<{ ok: boolean }>(LOCK_SQL, [name]);
        held = rows[0]?.ok === true;
      } catch (error) {
        open.delete(client);
        await client.end().catch(() => undefined);
        throw error;
      }
      if (!held) {
        open.delete(client);
        await client.end().catch(() => undefined);
        return undefined;
      }
      return {
        name,
        get held() {
          return held && !ended;
        },
        async release() {
          if (!open.delete(client)) return;
          held = false;
          // Ending the session releases the lock; an explicit unlock first keeps it short if end() stalls.
          await client.query('select pg_advisory_unlock_all()').catch(() => undefined);
          await client.end().catch(() => undefined);
        },
      };
    },
    async close() {
      const clients = [...open];
      open.clear();
      await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    },
  };
}

/** The locks a store's profile calls for. */
export function locksFor(store: Store, logger: Logger): StreamLocks {
  const kinds: Record<DialectProfile['locking'], () => StreamLocks> = {
    advisory: () => advisoryLocks({ connectionString: store.location.target, logger }),
    'single-process': () => localLocks(),
  };
  return kinds[store.profile.locking]();
}

/**
 * Runs `work` holding the lock a worker takes for `partner/stream` (for `run` and `backfill` on
 * PostgreSQL, so that a manual run never overlaps a worker's); `{ ran: false }` when it is held.
 */
export async function withStreamLock<T>(locks: StreamLocks, key: string, work: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
  const lease = await locks.tryAcquire(key);
  if (!lease) return { ran: false };
  try {
    return { ran: true, value: await work() };
  } finally {
    await lease.release();
  }
}
