/**
 * A run of a partner's streams: customers first (so that transactions and activity find their
 * customers), then transactions, then activity. Streams share one source client (one token, one
 * rate limit); a failing stream is reported and the others go on. The streams' bulk runs (a
 * backfill, a first sync) settle together at the end (Loader.settleTogether): each customer is
 * judged by the fraud rules and commissions once, over all its records, not once per stream.
 */
import { createSource, type SourceDeps } from '../connectors/index.js';
import type { PartnerDefinition } from '../src/config/definition.js';
import type { Loader, SettleGroup } from '../src/pipeline/load.js';
import { ENTITIES, type Entity } from '../src/types.js';
import { emptyCounts } from '../src/store/runs.js';
import { syncStream, type StreamRunResult, type SyncDeps, type SyncPlan } from './sync-stream.js';

export interface RunPartnerDeps extends Omit<SourceDeps, 'deadline'> {
  loader: Loader;
  /**
   * Runs one stream's sync holding the lock a worker takes for it, so a manual run never overlaps
   * a worker's; resolves `{ ran: false }` when another process holds it. Absent: no locking.
   */
  exclusive?: <T>(partner: string, stream: Entity, work: () => Promise<T>) => Promise<{ ran: true; value: T } | { ran: false }>;
  progress?: SyncDeps['progress'];
  /** Builds the source (tests pass their own); default by the definition's source type. */
  source?: typeof createSource;
}

export async function runPartner(deps: RunPartnerDeps, def: PartnerDefinition, plan: SyncPlan, only?: Entity): Promise<StreamRunResult[]> {
  const streams = ENTITIES.filter((e) => def.streams[e] && (only === undefined || e === only));
  if (only !== undefined && streams.length === 0) {
    throw new Error(`partner ${def.partner} has no ${only} stream (it has: ${ENTITIES.filter((e) => def.streams[e]).join(', ')})`);
  }
  const source = (deps.source ?? createSource)(def, deps);
  const results: StreamRunResult[] = [];
  let synced = false;
  try {
    await deps.loader.settleTogether(async (group) => {
      await syncStreams(group);
      synced = true;
    });
  } catch (error) {
    if (!synced) throw error;
    // What loaded stays loaded and waits on disk (status shows it); the next loading command or the worker evaluates it.
    const detail = deps.redact((error as Error).message ?? String(error));
    deps.logger.error(`${def.partner}: evaluating the run's records failed, they stay pending: ${detail}`, { partner: def.partner });
    for (const r of results) if (r.status === 'succeeded' && r.runId !== '') Object.assign(r, { status: 'failed', error: `evaluating the run's records failed, they stay pending: ${detail}` });
  } finally {
    await source.close?.();
  }
  return results;

  async function syncStreams(group: SettleGroup): Promise<void> {
    for (const entity of streams) {
      const sync = () => syncStream({ loader: deps.loader, source, logger: deps.logger, redact: deps.redact, progress: deps.progress, together: group }, def, entity, plan);
      if (!deps.exclusive) {
        results.push(await sync());
        continue;
      }
      const outcome = await deps.exclusive(def.partner, entity, sync);
      results.push(outcome.ran ? outcome.value : {
        partner: def.partner, stream: entity, runId: '', kind: plan.kind, status: 'skipped', windows: '', counts: emptyCounts(),
        error: `another run of ${def.partner}/${entity} is in progress (a worker or another command); nothing done`, durationMs: 0,
      });
    }
  }
}
