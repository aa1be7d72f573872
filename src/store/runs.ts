import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

/** Run history: one row per run of one (partner, stream), whatever started it. */
export type RunKind = 'import' | 'run' | 'backfill' | 'replay';
export type RunStatus = 'running' | 'succeeded' | 'failed' | 'partial';

export interface RunCounts {
  pulled: number;
  valid: number;
  rejected: number;
  loaded: number;
  waiting: number;
  /** Valid records not applied because a newer version of their key was stored (pulled = loaded + rejected + waiting + stale). */
  stale: number;
  released: number;
  retries: number;
  throttled: number;
}

export const emptyCounts = (): RunCounts => ({ pulled: 0, valid: 0, rejected: 0, loaded: 0, waiting: 0, stale: 0, released: 0, retries: 0, throttled: 0 });

export function addCounts(into: RunCounts, more: Partial<RunCounts>): RunCounts {
  for (const [k, v] of Object.entries(more) as [keyof RunCounts, number][]) into[k] += v;
  return into;
}

export interface RunStart {
  partner: string;
  stream: string;
  kind: RunKind;
  windowFrom?: string;
  windowTo?: string;
}

export async function startRun(knex: Knex, start: RunStart, now: string): Promise<string> {
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
  });
  return id;
}

export async function finishRun(
  knex: Knex,
  id: string,
  end: { status: RunStatus; counts: RunCounts; finalCursor?: string; error?: string; durationMs: number },
  now: string,
): Promise<void> {
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
