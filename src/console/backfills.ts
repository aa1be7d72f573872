/**
 * Backfills started from the console, while they run: the console starts the same job as
 * `partner-sync backfill` (jobs/run-partner.ts, handed in by the route as `run`) without waiting
 * for it, and keeps what its progress callback reports (the days window being read, records
 * pulled and loaded, per stream) so the page can poll it. Finished backfills are kept for an hour
 * (at most 50) so their final counts stay visible; their runs are in the store's runs table like
 * any other. Progress lives in the serving process (a second process serving the same store shows
 * the runs, not the live progress).
 */
import { randomBytes } from 'node:crypto';
import type { StreamRunResult, SyncProgress } from '../../jobs/sync-stream.js';

export interface StreamProgress {
  stream: string;
  /** Days windows read so far (the one being read included) and in all. */
  window: number;
  windows: number;
  /** The days of the window being read. */
  days: string;
  pulled: number;
  loaded: number;
  /** Filled in when the stream is done. */
  status?: string;
  rejected?: number;
  error?: string;
}

export interface BackfillJob {
  id: string;
  partner: string;
  from: string;
  to: string;
  by: string;
  startedAt: string;
  finishedAt?: string;
  state: 'running' | 'done' | 'failed';
  streams: StreamProgress[];
  error?: string;
}

const KEEP_MS = 3600_000;
const KEEP_MAX = 50;

export class Backfills {
  private readonly jobs = new Map<string, BackfillJob>();

  constructor(private readonly clock: () => Date) {}

  /**
   * Starts `run` (which reports through `progress`) and returns at once; `finished` is called
   * with the job once it has ended (the route records it in the audit log).
   */
  start(
    meta: { partner: string; from: string; to: string; by: string; streams: readonly string[] },
    run: (progress: (p: SyncProgress) => void) => Promise<StreamRunResult[]>,
    finished: (job: BackfillJob) => Promise<void>,
  ): BackfillJob {
    this.prune();
    const job: BackfillJob = {
      id: randomBytes(9).toString('base64url'), partner: meta.partner, from: meta.from, to: meta.to, by: meta.by,
      startedAt: this.clock().toISOString(), state: 'running',
      streams: meta.streams.map((stream) => ({ stream, window: 0, windows: 0, days: '', pulled: 0, loaded: 0 })),
    };
    this.jobs.set(job.id, job);
    const streamOf = (name: string): StreamProgress => {
      let s = job.streams.find((x) => x.stream === name);
      if (!s) job.streams.push((s = { stream: name, window: 0, windows: 0, days: '', pulled: 0, loaded: 0 }));
      return s;
    };
    const progress = (p: SyncProgress) => {
      Object.assign(streamOf(p.stream), { window: p.windowIndex, windows: p.windows, days: p.window.replace(/T00:00:00(\.0+)?Z/g, ''), pulled: p.pulled, loaded: p.loaded });
    };
    void (async () => {
      try {
        const results = await run(progress);
        for (const r of results) {
          Object.assign(streamOf(r.stream), { status: r.status, pulled: r.counts.pulled, loaded: r.counts.loaded, rejected: r.counts.rejected, error: r.error });
        }
        job.state = 'done';
      } catch (error) {
        job.state = 'failed';
        job.error = error instanceof Error ? error.message : String(error);
      }
      job.finishedAt = this.clock().toISOString();
      await finished(job).catch(() => undefined);
    })();
    return job;
  }

  get(id: string): BackfillJob | undefined {
    return this.jobs.get(id);
  }

  /** Latest first. */
  list(): BackfillJob[] {
    this.prune();
    return [...this.jobs.values()].reverse();
  }

  private prune(): void {
    const now = this.clock().getTime();
    for (const [id, job] of this.jobs) {
      if (job.finishedAt && now - Date.parse(job.finishedAt) > KEEP_MS) this.jobs.delete(id);
    }
    const ids = [...this.jobs.keys()];
    for (const id of ids.slice(0, Math.max(0, ids.length - KEEP_MAX))) {
      if (this.jobs.get(id)?.state !== 'running') this.jobs.delete(id);
    }
  }
}

export const summaryOf = (job: BackfillJob): string =>
  job.state === 'failed' ? `failed: ${job.error ?? ''}`
    : job.streams.map((s) => `${s.stream} ${s.status ?? '?'}: ${s.loaded} loaded, ${s.rejected ?? 0} rejected${s.error ? ` (${s.error})` : ''}`).join('; ');
