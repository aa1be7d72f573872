/**
 * Readiness, apart from liveness: a process can be alive (its loop turns, it answers HTTP) and
 * still unable to do its work, because its store does not answer or is not at this code's schema.
 * A load balancer or an orchestrator asks `/readyz` to know whether to send work; `/healthz`
 * stays "the process is alive", so that a store outage does not get every process restarted.
 *
 * The store must answer within a bound (a hung connection is as bad as a refused one, and a probe
 * has its own timeout), and every migration this code knows must be applied. Each face adds its
 * own checks (the worker: its definitions loaded and its scheduler alive) and serves the same
 * document: `{"status":"ready"|"not ready","checks":{"<name>":{"ok":...,"detail":"..."}}}`.
 */
import { MIGRATIONS } from './migrations/index.js';
import type { Store } from './store.js';

export interface Check {
  ok: boolean;
  detail: string;
}

export interface Readiness {
  ok: boolean;
  body: { status: 'ready' | 'not ready'; checks: Record<string, Check> };
}

/** How long the store has to answer a readiness probe (below a usual probe timeout of a few seconds). */
export const READINESS_TIMEOUT_MS = 2_000;

class TimedOut extends Error {}

async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new TimedOut()), Math.max(0, ms));
    timer.unref();
  });
  // The work goes on after a timeout (a query cannot be taken back); its outcome no longer matters.
  work.catch(() => undefined);
  try {
    return await Promise.race([work, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves when the store answers a trivial query within `timeoutMs`; throws saying why not. */
export async function pingStore(store: Store, timeoutMs = READINESS_TIMEOUT_MS): Promise<void> {
  try {
    await within(timeoutMs, Promise.resolve(store.knex.raw('select 1')));
  } catch (error) {
    throw new Error(error instanceof TimedOut ? `no answer within ${timeoutMs} ms` : `unreachable: ${(error as Error).message}`, { cause: error });
  }
}

/** The store answers within `timeoutMs`, and its applied migrations are all of this code's. */
export async function storeChecks(store: Store, timeoutMs = READINESS_TIMEOUT_MS): Promise<{ store: Check; migrations: Check }> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  try {
    await pingStore(store, timeoutMs);
  } catch (error) {
    return { store: { ok: false, detail: (error as Error).message }, migrations: { ok: false, detail: 'not checked: the store does not answer' } };
  }
  const answered: Check = { ok: true, detail: `answered in ${elapsed()} ms` };
  let applied: string[];
  try {
    applied = await within(timeoutMs - elapsed(), store.appliedMigrations());
  } catch (error) {
    const detail = error instanceof TimedOut ? `the applied migrations not read within ${timeoutMs} ms` : `cannot read the applied migrations: ${(error as Error).message}`;
    return { store: answered, migrations: { ok: false, detail } };
  }
  const done = new Set(applied);
  const pending = MIGRATIONS.map((m) => m.name).filter((name) => !done.has(name));
  const migrations: Check = pending.length === 0
    ? { ok: true, detail: `${MIGRATIONS.length} applied, none pending` }
    : { ok: false, detail: `${pending.length} pending (${pending.join(', ')}): partner-sync migrate applies them` };
  return { store: answered, migrations };
}

/** Ready when every check is. */
export function readiness(checks: Record<string, Check>): Readiness {
  const ok = Object.values(checks).every((c) => c.ok);
  return { ok, body: { status: ok ? 'ready' : 'not ready', checks } };
}
