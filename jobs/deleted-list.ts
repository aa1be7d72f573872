/**
 * A REST partner's endpoint of deleted ids (a stream's `deleted_list`, docs/loading.md, Deletes):
 * after each scheduled run of the stream, the ids the partner lists as deleted since the previous
 * completed run began (10 minutes earlier, so that two clocks a little apart lose nothing; a
 * repeated id deletes nothing) are deleted through the one load path, judged by the partner's
 * mass-delete guard, in the run. The first run of a stream reads no list: everything before it
 * was never loaded.
 */
import type { RestSourceClient } from '../connectors/rest/source.js';
import type { Source } from '../connectors/source.js';
import type { PartnerDefinition, RestStream } from '../src/config/definition.js';
import type { Loader } from '../src/pipeline/load.js';
import type { Run } from '../src/pipeline/run.js';
import { lastCompletedRunStart } from '../src/store/runs.js';
import { valueAt } from './cursor-window.js';

const OVERLAP_MS = 10 * 60_000;

/** Reads the stream's deleted list and deletes what it names; returns the ids it listed. */
export async function loadDeletedList(loader: Loader, source: Source, def: PartnerDefinition, entity: 'customers' | 'transactions', stream: RestStream, run: Run): Promise<number> {
  const list = stream.deleted_list;
  if (!list || !('query' in source)) return 0;
  const previous = await lastCompletedRunStart(loader.store.knex, def.partner, entity);
  if (previous === undefined) return 0;
  const since = new Date(Date.parse(previous) - OVERLAP_MS).toISOString().replace(/\.\d+Z$/, 'Z');
  const pages = (source as RestSourceClient).query({ ...stream, path: list.path, records_path: list.records_path, params: {} }, { [list.since_param]: since });
  const ids = new Set<string>();
  for await (const page of pages) {
    for (const item of page) {
      const id = typeof item === 'string' || typeof item === 'number' ? item : valueAt(item, list.id_field);
      if ((typeof id === 'string' && id !== '') || typeof id === 'number') ids.add(String(id));
    }
  }
  if (ids.size === 0) return 0;
  const r = await loader.remove({ partner: def.partner, variant: def.variant, entity, ids: [...ids], learnedVia: 'deleted_list', runId: run.id, ...(def.delete_guard ? { guard: def.delete_guard } : {}) });
  run.counts.deleted = (run.counts.deleted ?? 0) + r.deleted;
  if (r.held) run.counts.deletes_held = (run.counts.deletes_held ?? 0) + r.held.held;
  return ids.size;
}
