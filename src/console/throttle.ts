/**
 * Sign-in rate limiting. Every wrong password is written to the audit log ('sign in failed', the
 * name tried, the address it came from), so the count lives in the store: every process serving
 * the console on one PostgreSQL store sees the same failures. Within a rolling window of
 * 15 minutes, 5 failures for one user name (since that user's last successful sign-in) or 10 from
 * one address lock further attempts out until enough of them have aged out of the window; a
 * locked-out attempt is answered 429 with Retry-After, is not checked against the password at all,
 * and is itself recorded ('sign in refused').
 */
import type { Store } from '../store/store.js';
import { fromStoreTimestamp } from '../store/values.js';

export const SIGN_IN_LIMITS = { windowMinutes: 15, perUser: 5, perAddress: 10 } as const;

export const FAILED = 'sign in failed';
export const REFUSED = 'sign in refused';

const storeTime = (ms: number): string => new Date(ms).toISOString().replace('Z', '000Z');
const msOf = (v: unknown): number => Date.parse(`${(fromStoreTimestamp(v) ?? '').slice(0, 23)}Z`);

/** Names are cut to what a user name can be, so a flood of long names does not grow the log much. */
export const triedName = (name: string): string => name.slice(0, 64);

/**
 * Seconds until an attempt for `name` from `address` may be checked again; 0 when it may be now.
 * The lockout ends when the failures counted in the window drop below the limit, i.e. when the
 * limit-th most recent of them leaves the window.
 */
export async function signInWait(store: Store, name: string, address: string): Promise<number> {
  const now = store.clock().getTime();
  const windowMs = SIGN_IN_LIMITS.windowMinutes * 60_000;
  const since = storeTime(now - windowMs);
  const lastSuccess = (await store.knex('console_audit').where({ action: 'sign in', user_name: triedName(name) }).where('at', '>=', since).max({ at: 'at' }).first()) as { at: unknown } | undefined;
  const userSince = lastSuccess?.at ? (fromStoreTimestamp(lastSuccess.at) ?? since) : since;
  const recent = async (column: 'user_name' | 'target', value: string, from: unknown, limit: number): Promise<number> => {
    const rows = (await store.knex('console_audit').where({ action: FAILED, [column]: value }).where('at', '>', from as string)
      .orderBy('at', 'desc').limit(limit).select('at')) as { at: unknown }[];
    if (rows.length < limit) return 0;
    return Math.max(1, Math.ceil((msOf(rows[limit - 1]!.at) + windowMs - now) / 1000));
  };
  const [byUser, byAddress] = await Promise.all([
    recent('user_name', triedName(name), userSince, SIGN_IN_LIMITS.perUser),
    recent('target', address, since, SIGN_IN_LIMITS.perAddress),
  ]);
  return Math.max(byUser, byAddress);
}
