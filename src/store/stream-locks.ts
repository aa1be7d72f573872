/**
 * Mutual exclusion of (partner, stream) runs across processes: the worker's scheduled runs and
 * the runs started by hand (`run`, `backfill`, the console: jobs/exclusive-streams.ts) take the
 * same lock, named by `jobKey`.
 *
 * - PostgreSQL (`locking: 'advisory'`): `pg_try_advisory_lock` on a connection of its own, held
 *   for the run and unlocked after it (the connection kept for a later lock). A killed worker's
 *   session ends with its TCP connection, and PostgreSQL drops its locks with it: nothing to
 *   expire, nothing to clean up. Keepalives are on, so a worker whose host vanishes without
 *   closing its sockets is noticed too. The lock key hashes the store's schema with the name, so
 *   stores in several schemas of one database (tests) do not exclude each other.
 * - SQLite (`locking: 'single-process'`): one worker per store file (src/worker/instance-lock.ts) makes
 *   in-process exclusion enough.
 *
 * Which one a store gets is data from its dialect profile, not a test of the client name.
 */
import pg from 'pg';
import type { Logger } from '../log.js';
import type { DialectProfile } from './dialects.js';
import type { Store } from './store.js';

/** `partner/stream`: the name of a stream's lock, and of the worker's job for it. */
export const jobKey = (partner: string, stream: string): string => `${partner}/${stream}`;

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

/** A lock connection's name while it holds no lock (pg_stat_activity's application_name). */
const IDLE_NAME = 'partner-sync worker lock';

/**
 * Takes the lock if free and names the session after it ($2: an operator sees in pg_stat_activity
 * which stream a connection holds), in one round trip.
 */
const LOCK_SQL = `with l as (select pg_try_advisory_lock(hashtextextended(coalesce(current_schema(), '') || ':partner-sync:' || $1, 0)) as ok)
  select ok, set_config('application_name', case when ok then $2 else '${IDLE_NAME}' end, false) from l`;

/** Releases the session's locks and its name. */
const UNLOCK_SQL = `select pg_advisory_unlock_all(), set_config('application_name', '${IDLE_NAME}', false)`;

/**
 * Lock connections kept open after their lease ends, to take the next lock on: opening one starts
 * a backend on the server, once per stream run, and a worker's every-4-minute streams run a day of
 * them (test/worker/day.test.ts; bench/README.md, Measured outside the benchmarks). A kept connection holds no lock (unlocked when its lease ended).
 */
const IDLE_KEPT = 8;

interface LockConnection {
  client: pg.Client;
  /** The lock it holds, while it holds one. */
  name: string | undefined;
  ended: boolean;
}

/** PostgreSQL session advisory locks, one connection per held lock. */
export function advisoryLocks(options: AdvisoryLockOptions): StreamLocks {
  const open = new Set<LockConnection>();
  const idle: LockConnection[] = [];
  /** After close(), a lease released late ends its connection instead of keeping it. */
  let closed = false;

  const connect = async (): Promise<LockConnection> => {
    const client = new pg.Client({
      connectionString: options.connectionString,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      application_name: IDLE_NAME,
    });
    const conn: LockConnection = { client, name: undefined, ended: false };
    client.on('error', (error) => {
      if (conn.name !== undefined) options.logger.error(`lost the lock connection of ${conn.name} while holding it: ${error.message}; another worker may start this stream`, { lock: conn.name });
      conn.name = undefined;
    });
    client.on('end', () => {
      conn.ended = true;
      conn.name = undefined;
    });
    await client.connect();
    return conn;
  };

  /** Ends the connection (which releases whatever it holds). */
  const discard = async (conn: LockConnection): Promise<void> => {
    open.delete(conn);
    await conn.client.end().catch(() => undefined);
  };

  /** Keeps the connection for the next lock, or ends it when enough are kept. */
  const keep = async (conn: LockConnection): Promise<void> => {
    open.delete(conn);
    if (!closed && !conn.ended && idle.length < IDLE_KEPT) idle.push(conn);
    else await conn.client.end().catch(() => undefined);
  };

  /** Asks for the lock on `conn`; whether it got it. */
  const take = async (conn: LockConnection, name: string): Promise<boolean> => {
    open.add(conn);
    const { rows } = await conn.client.query<{ ok: boolean }>(LOCK_SQL, [name, `${IDLE_NAME} ${name}`.slice(0, 63)]);
    return rows[0]?.ok === true;
  };

  return {
    async tryAcquire(name) {
      let conn: LockConnection | undefined;
      let held = false;
      // A kept connection that has died since (a restarted server, a cut network) fails its query:
      // ended, and the lock asked for again on a new one.
      while (!conn && idle.length > 0) {
        const kept = idle.pop()!;
        if (kept.ended) continue;
        try {
          held = await take(kept, name);
          conn = kept;
        } catch {
          await discard(kept);
        }
      }
      if (!conn) {
        conn = await connect();
        try {
          held = await take(conn, name);
        } catch (error) {
          await discard(conn);
          throw error;
        }
      }
      if (!held) {
        await keep(conn);
        return undefined;
      }
      const leased = conn;
      leased.name = name;
      // Its connection may hold a later lease once this one is released: this lease's own end.
      let released = false;
      return {
        name,
        get held() {
          return !released && leased.name === name && !leased.ended;
        },
        async release() {
          if (released || !open.has(leased)) return;
          released = true;
          leased.name = undefined;
          try {
            await leased.client.query(UNLOCK_SQL);
          } catch {
            // Ending the session releases the lock.
            await discard(leased);
            return;
          }
          await keep(leased);
        },
      };
    },
    async close() {
      closed = true;
      const all = [...open, ...idle.splice(0)];
      open.clear();
      await Promise.all(all.map((c) => c.client.end().catch(() => undefined)));
    },
  };
}

/** The locks a store's profile calls for. */
export function locksFor(store: Store, logger: Logger): StreamLocks {
  const kinds: Record<DialectProfile['locking'], () => StreamLocks> = {
    advisory: () => advisoryLocks({ connectionString: store.location.target, logger }),
    'single-process': () => localLocks(),
  };
  return kinds[store.dialect.locking]();
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
