/**
 * What the worker schedules: one job per (partner, stream), so that locks, overlap and retries are
 * per stream. A cursor stream (customers, transactions) is a delta job: each run pulls from its
 * watermark, whatever time it was scheduled for. A daily stream (activity, or anything a
 * warehouse serves by day) is a daily job: the run scheduled for T loads the closed UTC days up to
 * T's previous day, and is retried until that day has loaded.
 */
import type { PartnerDefinition } from '../config/definition.js';
import { jobKey } from '../store/stream-locks.js';
import { ENTITIES, type Entity } from '../types.js';
import { parseCron, type CronSchedule } from './cron.js';

export type JobMode = 'delta' | 'daily';

export interface StreamJob {
  /** `partner/stream` */
  key: string;
  partner: string;
  stream: Entity;
  mode: JobMode;
  schedule: CronSchedule;
}

/** The UTC day a daily run scheduled for `scheduledFor` must load: the previous one. */
export function requiredDay(scheduledFor: Date): string {
  return new Date(Date.UTC(scheduledFor.getUTCFullYear(), scheduledFor.getUTCMonth(), scheduledFor.getUTCDate() - 1)).toISOString().slice(0, 10);
}

export function jobsOf(def: PartnerDefinition): StreamJob[] {
  return ENTITIES.flatMap((stream) => {
    const s = def.streams[stream];
    if (!s) return [];
    return [{
      key: jobKey(def.partner, stream),
      partner: def.partner,
      stream,
      mode: s.incremental.mode === 'daily' ? 'daily' : 'delta',
      schedule: parseCron(s.schedule),
    } satisfies StreamJob];
  });
}

export const jobsFromDefinitions = (defs: readonly PartnerDefinition[]): StreamJob[] => defs.flatMap(jobsOf);
