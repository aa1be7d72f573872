/**
 * Freshness against the spec's targets (§1): customers and transactions within 5 minutes;
 * the previous UTC day's activity delivered by 06:00 UTC.
 */
import type { Entity } from './types.js';

export const DELTA_TARGET_MS = 5 * 60_000;
export const ACTIVITY_DEADLINE_HOUR_UTC = 6;

/** `stopped`: the last window rejected more than the stream's max_reject_ratio and did not advance. */
export type FreshnessState = 'ok' | 'behind' | 'due' | 'late' | 'never' | 'stopped';

export interface Freshness {
  state: FreshnessState;
  /** How far behind: now − watermark for delta streams; for activity, time past the 06:00 deadline. */
  lagMs: number | null;
  /** Human-readable target. */
  target: string;
  detail: string;
}

/**
 * Whether a stream's freshness breaches its target: behind, late, or never loaded when it should
 * have. The one rule of `status --check`, the worker's alerts and the console's Partners page.
 */
export const isBreach = (f: Freshness): boolean => f.state === 'behind' || f.state === 'late' || f.state === 'never' || f.state === 'stopped';

const minutes = (ms: number): string => (ms < 60_000 ? `${Math.round(ms / 1000)}s` : ms < 7_200_000 ? `${Math.round(ms / 60_000)}m` : `${(ms / 3_600_000).toFixed(1)}h`);

export function freshness(entity: Entity, state: { watermark?: string; last_day?: string; days?: Record<string, string>; halted?: { detail: string } } | undefined, now: Date, mode: 'cursor' | 'daily' = entity === 'activity' ? 'daily' : 'cursor'): Freshness {
  // A stream stopped by the reject-rate guard is not fresh, however recent its watermark: its records are not loading.
  if (state?.halted) {
    const lagMs = state.watermark ? Math.max(0, now.getTime() - Date.parse(state.watermark)) : null;
    return { state: 'stopped', lagMs, target: mode === 'cursor' ? 'within 5 minutes' : 'previous UTC day by 06:00 UTC', detail: `stopped: ${state.halted.detail}` };
  }
  // A stream read by whole closed days (activity; a warehouse's customers and transactions) can
  // at best hold yesterday: it is measured against the daily delivery target.
  if (mode === 'cursor') {
    const target = 'within 5 minutes';
    if (!state?.watermark) return { state: 'never', lagMs: null, target, detail: 'never loaded' };
    const lagMs = Math.max(0, now.getTime() - Date.parse(state.watermark));
    return lagMs <= DELTA_TARGET_MS
      ? { state: 'ok', lagMs, target, detail: `${minutes(lagMs)} behind` }
      : { state: 'behind', lagMs, target, detail: `${minutes(lagMs)} behind (target 5m)` };
  }
  const target = 'previous UTC day by 06:00 UTC';
  const today = now.toISOString().slice(0, 10);
  const yesterday = new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  const deadline = Date.parse(`${today}T0${ACTIVITY_DEADLINE_HOUR_UTC}:00:00Z`);
  const loaded = Boolean(state?.days?.[yesterday]) || (state?.last_day !== undefined && state.last_day >= yesterday);
  if (loaded) return { state: 'ok', lagMs: 0, target, detail: `${yesterday} loaded` };
  if (now.getTime() < deadline) return { state: 'due', lagMs: 0, target, detail: `${yesterday} due by 06:00 UTC` };
  const lagMs = now.getTime() - deadline;
  return { state: state?.last_day ? 'late' : 'never', lagMs, target, detail: `${yesterday} not loaded, ${minutes(lagMs)} past 06:00 UTC` };
}
