import type { Knex } from 'knex';
import { countOpenRejects } from './rejects.js';
import { waitingSummary } from './waiting.js';

export interface LastRun {
  id: string;
  kind: string;
  status: string;
  started_at: string;
  finished_at: string | null;
  error: string | null;
  loaded: number;
  rejected: number;
}

export interface StreamSnapshot {
  partner: string;
  stream: string;
  state?: { watermark?: string; max_cursor?: string; last_day?: string; days?: Record<string, string> };
  lastRun?: LastRun;
  openRejects: number;
  waiting: number;
}

const key = (partner: string, stream: string) => `${partner}/${stream}`;

/**
 * The latest run of every (partner, stream) that has runs. Walks the (partner_id, stream,
 * started_at) index: the next pair after the previous one, then that pair's newest run, two index
 * seeks a pair; a correlated max() per run row read the whole table (bench/README.md, Measured
 * outside the benchmarks).
 */
async function latestRuns(knex: Knex): Promise<(LastRun & { partner_id: string; stream: string })[]> {
  const out: (LastRun & { partner_id: string; stream: string })[] = [];
  let after: { partner_id: string; stream: string } | undefined;
  for (;;) {
    const q = knex('runs').select('partner_id', 'stream').orderBy([{ column: 'partner_id' }, { column: 'stream' }]).first();
    if (after) {
      const { partner_id: p, stream: s } = after;
      // A row-value comparison: an index range in both PostgreSQL and SQLite.
      q.whereRaw('(partner_id, stream) > (?, ?)', [p, s]);
    }
    const pair = (await q) as { partner_id: string; stream: string } | undefined;
    if (!pair) return out;
    const last = (await knex('runs').where({ partner_id: pair.partner_id, stream: pair.stream }).orderBy('started_at', 'desc').first()) as (LastRun & { partner_id: string; stream: string }) | undefined;
    if (last) out.push(last);
    after = pair;
  }
}

/** What the store knows of every (partner, stream): state, latest run, open rejects, waiting records. */
export async function streamSnapshots(knex: Knex): Promise<Map<string, StreamSnapshot>> {
  const out = new Map<string, StreamSnapshot>();
  const get = (partner: string, stream: string): StreamSnapshot => {
    let s = out.get(key(partner, stream));
    if (!s) out.set(key(partner, stream), (s = { partner, stream, openRejects: 0, waiting: 0 }));
    return s;
  };
  const states = (await knex('sync_state').select('partner_id', 'stream', 'state')) as { partner_id: string; stream: string; state: unknown }[];
  for (const row of states) get(row.partner_id, row.stream).state = (typeof row.state === 'string' ? JSON.parse(row.state) : row.state) as StreamSnapshot['state'];
  const runs = await latestRuns(knex);
  for (const row of runs) {
    get(row.partner_id, row.stream).lastRun = {
      id: row.id, kind: row.kind, status: row.status, started_at: String(row.started_at), finished_at: row.finished_at === null ? null : String(row.finished_at),
      error: row.error, loaded: Number(row.loaded), rejected: Number(row.rejected),
    };
  }
  for (const [k, n] of await countOpenRejects(knex)) {
    const [partner, stream] = k.split('/') as [string, string];
    get(partner, stream).openRejects = n;
  }
  for (const w of await waitingSummary(knex)) get(w.partner_id, w.entity).waiting = w.count;
  return out;
}
