import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Knex } from 'knex';

/** Run history: one row per run of one (partner, stream), whatever started it. */
export type RunKind = 'import' | 'run' | 'backfill' | 'replay' | 'deletes';
export type RunStatus = 'running' | 'succeeded' | 'failed' | 'partial';

export interface RunCounts {
  pulled: number;
  valid: number;
  rejected: number;
  loaded: number;
  waiting: number;
  /** Valid records not applied because a newer version of their key was stored (pulled = loaded + rejected + waiting + stale + deleted). */
  stale: number;
  released: number;
  retries: number;
  throttled: number;
  /** Records of erased customers loaded without their personal fields (src/store/erasures.ts). */
  erased: number;
  /** Records whose source rows said they were deleted at the source (a soft-delete column), applied as deletes; absent when none. */
  deleted?: number;
  /** Records whose source rows said they were deleted that the mass-delete guard held (src/pipeline/delete-guard.ts); absent when none. */
  deletes_held?: number;
}

export const emptyCounts = (): RunCounts => ({ pulled: 0, valid: 0, rejected: 0, loaded: 0, waiting: 0, stale: 0, released: 0, retries: 0, throttled: 0, erased: 0 });

export function addCounts(into: RunCounts, more: Partial<RunCounts>): RunCounts {
  for (const [k, v] of Object.entries(more) as [keyof RunCounts, number][]) into[k] = (into[k] ?? 0) + v;
  return into;
}

export interface RunStart {
  partner: string;
  stream: string;
  kind: RunKind;
  windowFrom?: string;
  windowTo?: string;
}

/**
 * Runs left `running`. A run is closed by the process that started it, but not always: a killed
 * process never gets there, and one whose store fails under it (a full disk) cannot write the
 * close either. So each run records its owner (`host:pid`), and every run that starts closes as
 * `failed` the runs of its (partner, stream) still `running` whose owner is gone: on this host,
 * a process that no longer exists, or this very process when the run is not one it has open (a
 * worker that failed to close a run, or a restarted container that got the same pid). A run
 * owned by another host is left until a run of the stream starts there (that host alone can
 * tell); runs of stores older than the `owner` column are left as they are.
 */
const ownProcess = `${hostname()}:${process.pid}`;
/** The runs this process has started and not yet closed. */
const openHere = new Set<string>();

/** Whether the process named by a run's owner (`host:pid`) is gone; undefined when this host cannot tell. */
export function ownerGone(owner: string, runId: string): boolean | undefined {
  const cut = owner.lastIndexOf(':');
  const host = owner.slice(0, cut);
  const pid = Number(owner.slice(cut + 1));
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0) return undefined;
  if (pid === process.pid) return !openHere.has(runId);
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // EPERM: the process exists, owned by another user.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The reason written on a run closed because its process was gone. */
export const ABANDONED_RUN = 'abandoned: the process running it ended before closing it (killed, or the store failed under it)';

/** Closes as failed the (partner, stream)'s runs still `running` whose owner is gone (see above); returns their ids. */
export async function closeAbandonedRuns(knex: Knex, partner: string, stream: string, now: string): Promise<string[]> {
  const rows: { id: string; owner: string | null }[] = await knex('runs').where({ partner_id: partner, stream, status: 'running' }).whereNotNull('owner').select('id', 'owner');
  const gone = rows.filter((r) => ownerGone(r.owner as string, r.id) === true).map((r) => r.id);
  if (gone.length > 0) await knex('runs').whereIn('id', gone).where('status', 'running').update({ status: 'failed', finished_at: now, error: ABANDONED_RUN });
  return gone;
}

export async function startRun(knex: Knex, start: RunStart, now: string): Promise<string> {
  await closeAbandonedRuns(knex, start.partner, start.stream, now);
  const id = randomUUID();
  await knex('runs').insert({
    id,
    partner_id: start.partner,
    stream: start.stream,
    kind: start.kind,
    status: 'running',
    started_at: now,
    window_from: start.windowFrom ?? null,
    window_to: start.windowTo ?? null,
    owner: ownProcess,
  });
  openHere.add(id);
  return id;
}

export async function finishRun(
  knex: Knex,
  id: string,
  end: { status: RunStatus; counts: RunCounts; finalCursor?: string; error?: string; durationMs: number },
  now: string,
): Promise<void> {
  // Whether or not the close below is written, this process has done with the run: if it is not
  // written (the store failing), the next run of the stream closes it as abandoned.
  openHere.delete(id);
  await knex('runs').where({ id }).update({
    status: end.status,
    finished_at: now,
    ...end.counts,
    duration_ms: Math.round(end.durationMs),
    final_cursor: end.finalCursor ?? null,
    error: end.error ?? null,
  });
}

/** Whether some incremental run of the stream has completed: until one has, every run is still its first sync. */
export async function hasCompletedRun(knex: Knex, partner: string, stream: string): Promise<boolean> {
  return (await knex('runs').where({ partner_id: partner, stream, kind: 'run' }).whereIn('status', ['succeeded', 'partial']).first('id')) !== undefined;
}

/** When the latest completed incremental run of the stream started (a store timestamp), or undefined. */
export async function lastCompletedRunStart(knex: Knex, partner: string, stream: string): Promise<string | undefined> {
  const row = (await knex('runs').where({ partner_id: partner, stream, kind: 'run' }).whereIn('status', ['succeeded', 'partial']).orderBy('started_at', 'desc').first('started_at')) as { started_at: unknown } | undefined;
  if (!row) return undefined;
  return row.started_at instanceof Date ? row.started_at.toISOString() : String(row.started_at);
}
