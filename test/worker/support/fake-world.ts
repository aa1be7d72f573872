/**
 * A partner world for scheduler tests without a store: stream states, run history and run
 * behaviour in memory, seen through the same ports as the store-backed ones.
 */
import type { StreamRunResult } from '../../../jobs/sync-stream.js';
import { dailyDays, recordDay } from '../../../jobs/windows.js';
import { emptyCounts } from '../../../src/store/runs.js';
import type { StreamState } from '../../../src/worker/freshness-monitor.js';
import type { StreamJob } from '../../../src/worker/jobs.js';
import type { SchedulerPorts } from '../../../src/worker/scheduler.js';
import type { Timers } from '../../../src/worker/timers.js';

export interface RunRecord {
  key: string;
  worker: string;
  startedAt: Date;
  finishedAt?: Date;
  scheduledFor: Date;
  status?: string;
  /** Daily runs: the days pulled. */
  days?: string[];
}

/** What a run does: succeed (default), fail, or wait for the returned promise first. */
export type Behaviour = (job: StreamJob, scheduledFor: Date, now: Date) => 'succeed' | 'fail' | Promise<'succeed' | 'fail'>;

export class FakeWorld {
  readonly states = new Map<string, StreamState>();
  readonly runs: RunRecord[] = [];
  behaviour: Behaviour = () => 'succeed';

  constructor(private readonly timers: Timers) {}

  runsOf(key: string): RunRecord[] {
    return this.runs.filter((r) => r.key === key);
  }

  ports(worker = 'w1'): SchedulerPorts {
    return {
      run: async (job, scheduledFor): Promise<StreamRunResult> => {
        const record: RunRecord = { key: job.key, worker, startedAt: this.timers.now(), scheduledFor };
        this.runs.push(record);
        const outcome = await this.behaviour(job, scheduledFor, this.timers.now());
        const now = this.timers.now();
        record.finishedAt = now;
        record.status = outcome === 'succeed' ? 'succeeded' : 'failed';
        if (outcome === 'succeed') {
          if (job.mode === 'delta') this.states.set(job.key, { watermark: record.startedAt.toISOString() });
          else {
            record.days = dailyDays({ mode: 'daily', late_days: 2, start: '' }, this.states.get(job.key), scheduledFor);
            let state = this.states.get(job.key);
            for (const day of record.days) state = recordDay(state, day, now.toISOString());
            if (state) this.states.set(job.key, state);
          }
        }
        return {
          partner: job.partner, stream: job.stream, runId: `run-${this.runs.length}`, kind: 'run', status: record.status as 'succeeded' | 'failed',
          windows: '', counts: { ...emptyCounts(), pulled: 3, loaded: 3 }, durationMs: now.getTime() - record.startedAt.getTime(),
          ...(outcome === 'fail' ? { error: 'the partner has not closed the day yet (503)' } : {}),
        };
      },
      ranSince: async (job, since) => this.runs.some((r) => r.key === job.key && r.startedAt >= since),
      dayLoaded: async (job, day) => {
        const s = this.states.get(job.key);
        return Boolean(s?.days?.[day]) || (s?.last_day !== undefined && s.last_day >= day);
      },
    };
  }

  readStates = async (): Promise<Map<string, StreamState>> => new Map(this.states);
}

/** A promise a test settles by hand. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
