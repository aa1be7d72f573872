/**
 * The per-token request limit (spec §8: 1000 requests per minute per access token), over a
 * rolling minute counted in one-second buckets: a request is refused when the token's requests
 * of the last 60 seconds (this one included) would pass the limit. Refused requests do not count.
 * Retry-After is the number of seconds until enough of the oldest requests leave the window.
 * One process (SQLite store): counted in memory, exactly. Several processes on one PostgreSQL
 * store: StoreRateLimiter below.
 */
import type pg from 'pg';
import type { Store } from '../store/store.js';

/** A SQL string literal (standard_conforming_strings, PostgreSQL's default since 9.1). */
function sqlText(value: string): string {
  if (value.includes('\0')) throw new Error('a rate limit key cannot hold NUL');
  return `'${value.replace(/'/g, "''")}'`;
}

export const RATE_LIMIT_PER_MINUTE = 1000;
export const WINDOW_S = 60;

export interface RateDecision {
  allowed: boolean;
  /** Seconds until a request would be allowed (0 when allowed). */
  retryAfterS: number;
}

export interface RateLimiter {
  readonly limit: number;
  take(key: string): RateDecision | Promise<RateDecision>;
  close(): Promise<void>;
}

/** Counts of one key per second of the window: a ring of WINDOW_S buckets stamped with their second. */
export class SecondBuckets {
  private readonly counts = new Int32Array(WINDOW_S);
  private readonly seconds = new Float64Array(WINDOW_S).fill(-1);

  add(second: number, n: number): void {
    const i = second % WINDOW_S;
    if (this.seconds[i] !== second) {
      this.seconds[i] = second;
      this.counts[i] = 0;
    }
    this.counts[i]! += n;
  }

  /** Sets the count of a second (from the shared store). */
  set(second: number, n: number): void {
    const i = second % WINDOW_S;
    this.seconds[i] = second;
    this.counts[i] = n;
  }

  get(second: number): number {
    const i = second % WINDOW_S;
    return this.seconds[i] === second ? this.counts[i]! : 0;
  }

  /** Requests in the window ending at `second` (the WINDOW_S seconds up to and including it). */
  total(second: number): number {
    let sum = 0;
    for (let i = 0; i < WINDOW_S; i++) {
      const s = this.seconds[i]!;
      if (s > second - WINDOW_S && s <= second) sum += this.counts[i]!;
    }
    return sum;
  }

  /** Seconds from `second` until the window holds at most limit - 1 requests. */
  retryAfter(second: number, limit: number): number {
    let excess = this.total(second) - (limit - 1);
    if (excess <= 0) return 0;
    for (let s = second - WINDOW_S + 1; s <= second; s++) {
      excess -= this.get(s);
      // The requests of second s leave the window at s + WINDOW_S.
      if (excess <= 0) return Math.max(1, s + WINDOW_S - second);
    }
    return WINDOW_S;
  }

  empty(second: number): boolean {
    return this.total(second) === 0;
  }
}

/** One process's limiter (the SQLite store: one `serve` process). */
export class MemoryRateLimiter implements RateLimiter {
  private readonly keys = new Map<string, SecondBuckets>();
  private sweptAt = 0;

  constructor(
    readonly limit: number = RATE_LIMIT_PER_MINUTE,
    private readonly nowMs: () => number = Date.now,
  ) {}

  take(key: string): RateDecision {
    const second = Math.floor(this.nowMs() / 1000);
    let buckets = this.keys.get(key);
    if (!buckets) this.keys.set(key, (buckets = new SecondBuckets()));
    if (buckets.total(second) + 1 > this.limit) return { allowed: false, retryAfterS: buckets.retryAfter(second, this.limit) };
    buckets.add(second, 1);
    if (second - this.sweptAt >= WINDOW_S) this.sweep(second);
    return { allowed: true, retryAfterS: 0 };
  }

  private sweep(second: number): void {
    this.sweptAt = second;
    for (const [key, b] of this.keys) if (b.empty(second)) this.keys.delete(key);
  }

  async close(): Promise<void> {}
}

interface Lease {
  key: string;
  second: number;
  left: number;
}

interface KeyState {
  lease?: Lease;
  claiming?: Promise<RateDecision | undefined>;
  /** The store refused in this second: later requests of the second are refused without asking again. */
  refused?: { second: number; decision: RateDecision };
}

interface PendingClaim {
  key: string;
  second: number;
  expired: Lease | undefined;
  resolve(result: { granted: number; retryAfterS: number }): void;
  reject(error: unknown): void;
}

export interface StoreRateLimiterOptions {
  limit?: number;
  /** Requests one claim takes from the store at most (default limit / 50, at least 1). */
  chunk?: number;
  nowMs?: () => number;
  /** Called when a claim or a return fails (the request is then decided by this process alone). */
  onError?: (error: Error) => void;
}

/**
 * The limit held across every process on one PostgreSQL store. A process claims quota from the
 * store in small leases (api_rate_counts, per token and second, under a transaction advisory lock
 * per token) and admits requests from its lease without asking again; a lease lives until the end
 * of the second it was claimed in, and what it did not use is given back. So the store never
 * counts more than `limit` admitted requests in a rolling minute, whatever the number of
 * processes: the limit is never exceeded. It can refuse a little early, by at most the unused
 * leases of the other processes (at most `chunk` each) until they are given back (within a second).
 * Cost: one round trip to the store per `chunk` requests of a token in one process; a token past
 * its limit costs one round trip per second per process, however many requests it sends. Claims
 * of several tokens that fall due together (every busy token at the turn of a second) share one
 * round trip and one transaction, and so do the leases given back; their commits do not wait for
 * the WAL flush.
 */
export class StoreRateLimiter implements RateLimiter {
  readonly limit: number;
  private readonly chunk: number;
  private readonly nowMs: () => number;
  private readonly keys = new Map<string, KeyState>();
  private readonly returns = new Set<Promise<void>>();
  private readonly timer: NodeJS.Timeout;
  private sweptAt = 0;
  private pendingClaims: PendingClaim[] = [];
  private claimRunning = false;

  constructor(
    private readonly store: Store,
    private readonly options: StoreRateLimiterOptions = {},
  ) {
    if (store.dialect.kind !== 'postgres') throw new Error('StoreRateLimiter needs a PostgreSQL store (one SQLite process counts in memory)');
    this.limit = options.limit ?? RATE_LIMIT_PER_MINUTE;
    this.chunk = Math.max(1, options.chunk ?? Math.floor(this.limit / 50));
    this.nowMs = options.nowMs ?? Date.now;
    // Idle keys give their unused lease back within a second.
    this.timer = setInterval(() => this.expireLeases(), 500);
    this.timer.unref();
  }

  take(key: string): RateDecision | Promise<RateDecision> {
    const second = Math.floor(this.nowMs() / 1000);
    let state = this.keys.get(key);
    if (!state) this.keys.set(key, (state = {}));
    if (state.lease && state.lease.second === second && state.lease.left > 0) {
      state.lease.left--;
      return { allowed: true, retryAfterS: 0 };
    }
    // A flood past the limit costs one claim per second per process, not one per request.
    if (state.refused && state.refused.second === second) return state.refused.decision;
    return this.takeClaimed(key, state, second);
  }

  private async takeClaimed(key: string, state: KeyState, second: number): Promise<RateDecision> {
    // Requests arriving while a claim is under way wait for it, then use its lease.
    while (state.claiming) {
      const refusal = await state.claiming;
      if (refusal && !refusal.allowed) return refusal;
      if (state.lease && state.lease.second === second && state.lease.left > 0) {
        state.lease.left--;
        return { allowed: true, retryAfterS: 0 };
      }
    }
    // A lease of an earlier second goes back in the same transaction that claims the next one.
    const expired = state.lease;
    state.lease = undefined;
    const claiming = this.claim(key, second, expired).then(
      (result) => {
        if (result.granted === 0) {
          const decision = { allowed: false, retryAfterS: result.retryAfterS };
          state.refused = { second, decision };
          return decision;
        }
        state.lease = { key, second, left: result.granted };
        return undefined;
      },
      (error: unknown) => {
        this.options.onError?.(error as Error);
        // The store failed: admit this one request rather than refuse every partner.
        state.lease = { key, second, left: 1 };
        return undefined;
      },
    );
    state.claiming = claiming;
    const refusal = await claiming;
    state.claiming = undefined;
    if (refusal) return refusal;
    state.lease!.left--;
    return { allowed: true, retryAfterS: 0 };
  }

  /**
   * Takes quota for `key` in `second` from the store: up to `chunk` requests, and at most an
   * eighth of what is left, so that near the limit each process claims one request at a time and
   * no process sits on quota another one needs. Claims asked for while a round trip is under way
   * go together in the next one (many tokens at a second's turn cost one transaction, not one
   * each).
   */
  private claim(key: string, second: number, expired: Lease | undefined): Promise<{ granted: number; retryAfterS: number }> {
    return new Promise((resolve, reject) => {
      this.pendingClaims.push({ key, second, expired, resolve, reject });
      if (!this.claimRunning) this.runClaims();
    });
  }

  private runClaims(): void {
    const batch = this.pendingClaims.splice(0);
    if (batch.length === 0) return;
    this.claimRunning = true;
    this.claimBatch(batch)
      .then(
        (results) => batch.forEach((c, i) => c.resolve(results[i] as { granted: number; retryAfterS: number })),
        (error: unknown) => batch.forEach((c) => c.reject(error)),
      )
      .finally(() => {
        this.claimRunning = false;
        this.runClaims();
      });
  }

  /**
   * One round trip: a transaction of simple statements sent together. The token locks come first,
   * in key order (two processes never wait on each other in a cycle), so each count that follows
   * sees every earlier claim. The counters are a limit's bookkeeping, not records: the commit does
   * not wait for the WAL flush (synchronous_commit off; a crash of the database may forget the
   * last fraction of a second of counts, never corrupt them).
   */
  private async claimBatch(batch: readonly PendingClaim[]): Promise<{ granted: number; retryAfterS: number }[]> {
    const sorted = [...batch].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const sql: string[] = ['BEGIN', 'SET LOCAL synchronous_commit = off'];
    for (const c of sorted) sql.push(`SELECT pg_advisory_xact_lock(hashtextextended(coalesce(current_schema(), '') || ':' || ${sqlText(`rate:${c.key}`)}, 0))`);
    const at = new Map<PendingClaim, { granted: number; seconds: number }>();
    for (const c of sorted) {
      const token = sqlText(c.key);
      const from = c.second - WINDOW_S;
      if (c.expired && c.expired.left > 0) sql.push(`UPDATE api_rate_counts SET count = count - ${c.expired.left} WHERE token_id = ${token} AND second = ${c.expired.second}`);
      at.set(c, { granted: sql.length, seconds: sql.length + 1 });
      sql.push(
        `WITH used AS (SELECT coalesce(sum(count), 0) AS n FROM api_rate_counts WHERE token_id = ${token} AND second > ${from}),
              grant_ AS (SELECT greatest(1, least(${this.chunk}, floor((${this.limit} - n) / 8)))::int AS n FROM used WHERE n < ${this.limit}),
              claimed AS (INSERT INTO api_rate_counts (token_id, second, count) SELECT ${token}, ${c.second}, n FROM grant_
                          ON CONFLICT (token_id, second) DO UPDATE SET count = api_rate_counts.count + excluded.count RETURNING 1)
         SELECT coalesce((SELECT n FROM grant_), 0) AS granted, (SELECT count(*) FROM claimed) AS claimed`,
        `SELECT second, count FROM api_rate_counts WHERE token_id = ${token} AND second > ${from}`,
      );
    }
    sql.push('COMMIT');
    const results = await this.query(sql.join(';\n'));
    const answers = batch.map((c) => {
      const where = at.get(c) as { granted: number; seconds: number };
      const granted = Number(results[where.granted]?.rows[0]?.granted ?? 0);
      let retryAfterS = 0;
      if (granted === 0) {
        const buckets = new SecondBuckets();
        for (const r of results[where.seconds]?.rows ?? []) buckets.set(Number(r.second), Number(r.count));
        retryAfterS = buckets.retryAfter(c.second, this.limit);
      }
      return { granted, retryAfterS };
    });
    const second = Math.max(...batch.map((c) => c.second));
    if (second - this.sweptAt >= WINDOW_S) {
      this.sweptAt = second;
      this.track(this.store.knex('api_rate_counts').where('second', '<=', second - 2 * WINDOW_S).delete().then(() => undefined));
    }
    return answers;
  }

  /** Several statements in one round trip on one pooled connection; every statement's result, in order. */
  private async query(sql: string): Promise<pg.QueryResult[]> {
    const client = this.store.knex.client as { acquireConnection(): Promise<pg.Client>; releaseConnection(c: pg.Client): Promise<void> };
    const conn = await client.acquireConnection();
    try {
      const out = (await conn.query(sql)) as unknown as pg.QueryResult | pg.QueryResult[];
      return Array.isArray(out) ? out : [out];
    } catch (error) {
      await conn.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      await client.releaseConnection(conn);
    }
  }

  /** Gives the unused part of these leases back to the store, in one round trip. */
  private giveBack(states: readonly KeyState[]): void {
    const updates: string[] = [];
    for (const state of states) {
      const lease = state.lease;
      state.lease = undefined;
      if (!lease || lease.left <= 0) continue;
      updates.push(`UPDATE api_rate_counts SET count = count - ${lease.left} WHERE token_id = ${sqlText(lease.key)} AND second = ${lease.second}`);
    }
    if (updates.length === 0) return;
    this.track(this.query(['BEGIN', 'SET LOCAL synchronous_commit = off', ...updates, 'COMMIT'].join(';\n')).then(() => undefined));
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.options.onError?.(error as Error)).finally(() => this.returns.delete(tracked));
    this.returns.add(tracked);
  }

  private expireLeases(): void {
    const second = Math.floor(this.nowMs() / 1000);
    const done: KeyState[] = [];
    for (const state of this.keys.values()) {
      if (!state.claiming && state.lease && state.lease.second !== second) done.push(state);
    }
    this.giveBack(done);
    for (const [key, state] of this.keys) if (!state.lease && !state.claiming) this.keys.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    while (this.claimRunning) await new Promise((resolve) => setTimeout(resolve, 5));
    this.giveBack([...this.keys.values()]);
    await Promise.all([...this.returns]);
  }
}
