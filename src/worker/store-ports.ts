/**
 * What the scheduler asks the store, and the run itself: one (partner, stream) through
 * `runPartner`, the same code as `partner-sync run`, told the time it was scheduled for.
 */
import { createSource } from '../../connectors/index.js';
import { runPartner } from '../../jobs/run-partner.js';
import type { StreamRunResult } from '../../jobs/sync-stream.js';
import type { PartnerDefinition } from '../config/definition.js';
import type { Logger, Redact } from '../log.js';
import type { Loader } from '../pipeline/load.js';
import { pingStore } from '../store/readiness.js';
import type { Store } from '../store/store.js';
import type { RawRecord, SpecRecord } from '../types.js';
import type { StreamState } from './freshness-monitor.js';
import type { StreamJob } from './jobs.js';
import { withPushedStates } from '../push/freshness.js';
import type { SchedulerPorts } from './scheduler.js';

/** A time as the store writes it (UTC, six fraction digits: text order is time order in SQLite). */
export const storeTime = (date: Date): string => date.toISOString().replace('Z', '000Z');

const parseState = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

export async function readStates(store: Store): Promise<Map<string, StreamState>> {
  const rows = (await store.knex('sync_state').select('partner_id', 'stream', 'state')) as { partner_id: string; stream: string; state: unknown }[];
  // What pushes delivered, beside what pulls did: the monitor covers pushed streams too.
  return withPushedStates(store.knex, new Map(rows.map((r) => [`${r.partner_id}/${r.stream}`, parseState(r.state) as StreamState])));
}

export async function dayLoaded(store: Store, partner: string, stream: string, day: string): Promise<boolean> {
  const row = (await store.knex('sync_state').where({ partner_id: partner, stream }).first('state')) as { state: unknown } | undefined;
  const state = row ? (parseState(row.state) as StreamState) : undefined;
  return Boolean(state?.days?.[day]) || (state?.last_day !== undefined && state.last_day >= day);
}

export interface StorePortsOptions {
  store: Store;
  loader: Loader;
  logger: Logger;
  redact: Redact;
  /** The current definition of a partner (a reload replaces them). */
  definition(partner: string): PartnerDefinition | undefined;
  source?: typeof createSource;
}

const ABANDONED = 'abandoned: the worker running it stopped or died before it finished; its state did not move past what it committed, so the next run continues from there';

/** Closes run rows of a stream left `running` (a dead or stopped worker): call only with the stream's lock held. */
export async function closeAbandonedRuns(store: Store, partner: string, stream: string): Promise<number> {
  return store.knex('runs')
    .where({ partner_id: partner, stream, kind: 'run', status: 'running' })
    .update({ status: 'failed', finished_at: store.now(), error: ABANDONED });
}

/**
 * Loads records that wait for a customer who has arrived meanwhile. A customers batch releases
 * the records parked for it, but when it commits while a concurrent transactions (or activity)
 * batch is parking records for the same customer, that batch's records miss the release. Done
 * with the stream's lock held, so no newer version of these records can load at the same time.
 */
export async function releaseArrived(loader: Loader, def: PartnerDefinition, stream: 'transactions' | 'activity', runId: string): Promise<number> {
  return loader.transaction(async (tx) => {
    const rows = (await tx.trx('waiting_records as w')
      .join('customers as c', function () {
        this.on('c.partner_id', '=', 'w.partner_id').andOn('c.customer_id', '=', 'w.customer_id');
      })
      .where('w.partner_id', def.partner)
      .where('w.entity', stream)
      .select('w.record')) as { record: unknown }[];
    if (rows.length === 0) return 0;
    const records: RawRecord[] = rows.map((r, i) => ({ position: i + 1, value: parseState(r.record) as SpecRecord }));
    const result = await tx.load({ partner: def.partner, variant: def.variant, entity: stream, runId, records });
    return result.loaded;
  });
}

export function storePorts(options: StorePortsOptions): SchedulerPorts {
  const { store, loader, logger, redact } = options;
  const definition = (job: StreamJob): PartnerDefinition => {
    const def = options.definition(job.partner);
    if (!def) throw new Error(`no definition of partner ${job.partner} any more`);
    return def;
  };
  return {
    async run(job, scheduledFor): Promise<StreamRunResult> {
      const results = await runPartner(
        { loader, clock: store.clock, logger, redact, source: options.source },
        definition(job), { kind: 'run', scheduledFor }, job.stream,
      );
      const result = results[0];
      if (!result) throw new Error(`partner ${job.partner} returned no result for ${job.stream}`);
      return result;
    },
    async ranSince(job, since) {
      // Asked with the stream's lock held: a row still `running` belongs to a dead worker, and
      // neither it nor one closed as abandoned has done the slot's work.
      const row = await store.knex('runs')
        .where({ partner_id: job.partner, stream: job.stream, kind: 'run' })
        .where('started_at', '>=', storeTime(since))
        .whereNot('status', 'running')
        .where((q) => q.whereNull('error').orWhere('error', 'not like', 'abandoned:%'))
        .first('id');
      return row !== undefined;
    },
    dayLoaded: (job, day) => dayLoaded(store, job.partner, job.stream, day),
    ping: () => pingStore(store),
    async beforeRun(job) {
      const closed = await closeAbandonedRuns(store, job.partner, job.stream);
      if (closed > 0) logger.warn(`closed ${closed} run(s) left running by a worker that stopped or died`, { partner: job.partner, stream: job.stream });
    },
    async afterRun(job, result) {
      if (job.stream === 'customers' || !result.runId) return;
      const released = await releaseArrived(loader, definition(job), job.stream, result.runId);
      if (released > 0) logger.info(`released ${released} waiting record(s) whose customer arrived in a concurrent run`, { partner: job.partner, stream: job.stream, run_id: result.runId });
    },
  };
}
