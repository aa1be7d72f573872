/**
 * Freshness of pushed streams, against the same targets as pulled ones (spec §1, §8):
 * - customers, transactions: a pushed stream is expected to keep delivering once it has started
 *   (a partner that pushes sends its events as they happen); it breaches (`behind`) when nothing
 *   has been received for more than 5 minutes. A partner with quiet hours should send its events
 *   by pull instead, or accept the alert: nothing tells silence from a broken delivery.
 * - activity: the previous UTC day must have been pushed by 06:00 UTC (`due` before, `late` after).
 * A stream fed both ways is fresh when either way is: the pull covers a push outage and the other
 * way round; when both lag, the pull's state is shown.
 */
import type { Knex } from 'knex';
import { ACTIVITY_DEADLINE_HOUR_UTC, DELTA_TARGET_MS, freshness, type Freshness } from '../freshness.js';
import type { Entity } from '../types.js';
import { pushStreams } from './store.js';

export interface PushedState {
  /** When a push last delivered records (UTC, store form). */
  last_received_at: string;
  /** For activity: the latest day pushed. */
  last_day?: string;
}

const since = (ms: number): string => (ms < 60_000 ? `${Math.round(ms / 1000)}s` : ms < 7_200_000 ? `${Math.round(ms / 60_000)}m` : `${(ms / 3_600_000).toFixed(1)}h`);

export function pushFreshness(entity: Entity, pushed: PushedState, now: Date): Freshness {
  if (entity !== 'activity') {
    const target = 'within 5 minutes';
    const lagMs = Math.max(0, now.getTime() - Date.parse(pushed.last_received_at));
    return lagMs <= DELTA_TARGET_MS
      ? { state: 'ok', lagMs, target, detail: `pushed ${since(lagMs)} ago` }
      : { state: 'behind', lagMs, target, detail: `nothing pushed for ${since(lagMs)} (target 5m)` };
  }
  const target = 'previous UTC day by 06:00 UTC';
  const today = now.toISOString().slice(0, 10);
  const yesterday = new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  if (pushed.last_day !== undefined && pushed.last_day >= yesterday) return { state: 'ok', lagMs: 0, target, detail: `${yesterday} pushed` };
  const deadline = Date.parse(`${today}T0${ACTIVITY_DEADLINE_HOUR_UTC}:00:00Z`);
  if (now.getTime() < deadline) return { state: 'due', lagMs: 0, target, detail: `${yesterday} due by 06:00 UTC (push)` };
  const lagMs = now.getTime() - deadline;
  return { state: 'late', lagMs, target, detail: `${yesterday} not pushed, ${since(lagMs)} past 06:00 UTC` };
}

export type FedBy = 'pull' | 'push' | 'both';

const FRESH = new Set(['ok', 'due']);

/**
 * A stream's freshness whichever way it is fed: `pulled` when a connector definition pulls it,
 * `state.pushed` when pushes have reached it. Undefined when neither.
 */
export function streamFreshness(
  entity: Entity,
  state: (Parameters<typeof freshness>[1] & { pushed?: PushedState }) | undefined,
  now: Date,
  pulled: boolean,
  mode?: 'cursor' | 'daily',
): { freshness: Freshness; fedBy: FedBy } | undefined {
  const pull = pulled ? freshness(entity, state, now, mode) : undefined;
  const push = state?.pushed ? pushFreshness(entity, state.pushed, now) : undefined;
  if (pull && push) return { freshness: FRESH.has(push.state) && !FRESH.has(pull.state) ? push : pull, fedBy: 'both' };
  if (push) return { freshness: push, fedBy: 'push' };
  if (pull) return { freshness: pull, fedBy: 'pull' };
  return undefined;
}

/** Adds what pushes delivered to stored stream states (keyed `partner/stream`), adding pushed-only streams. */
export async function withPushedStates<S extends object>(knex: Knex, states: Map<string, S>): Promise<Map<string, S & { pushed?: PushedState }>> {
  const out = states as Map<string, S & { pushed?: PushedState }>;
  for (const [key, p] of await pushStreams(knex)) {
    const pushed: PushedState = { last_received_at: p.lastReceivedAt, ...(p.lastDay ? { last_day: p.lastDay } : {}) };
    out.set(key, { ...(out.get(key) ?? ({} as S)), pushed });
  }
  return out;
}
