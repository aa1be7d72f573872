/**
 * An operator's decision on deletes the mass-delete guard held (src/pipeline/delete-guard.ts;
 * `partner-sync deletes apply|discard`). Applying deletes what is still live through the one load
 * path (Loader.remove, the guard off), so the after-load jobs take back what the records counted
 * for exactly as if the guard had let them through; a record the partner sent again after the
 * hold (loaded since) is not deleted and is named. The deletes and the hold's close are one
 * transaction: a crash leaves the hold held and nothing deleted, and applying again is the same.
 */
import type { Loader } from '../src/pipeline/load.js';
import { Run } from '../src/pipeline/run.js';
import { decideHold, listHolds, type DeleteHold } from '../src/store/delete-holds.js';
import { entityTable } from '../src/store/tables.js';
import { fromStoreTimestamp } from '../src/store/values.js';

export interface HoldDecision {
  hold: DeleteHold;
  /** Records deleted (applied); 0 when discarded. */
  deleted: number;
  /** Held ids whose record was loaded again after the hold: kept. */
  cameBack: string[];
  /** Held ids deleted meanwhile, or never stored now. */
  gone: string[];
  runId?: string;
}

export class HoldError extends Error {}

async function heldOne(loader: Loader, id: number): Promise<DeleteHold> {
  const [hold] = await listHolds(loader.store.knex, { id });
  if (!hold) throw new HoldError(`no delete hold ${id}`);
  if (hold.state !== 'held') throw new HoldError(`delete hold ${id} was ${hold.state} already (${hold.decidedAt ?? ''} by ${hold.decidedBy ?? ''})`);
  return hold;
}

/** Ids of the hold whose live row was loaded after it was held (the partner sent them again). */
async function loadedSince(loader: Loader, hold: DeleteHold): Promise<Set<string>> {
  const table = entityTable(hold.variant, hold.entity);
  const idColumn = table.key[0] as string;
  const out = new Set<string>();
  for (const part of loader.store.dialect.chunks(hold.ids, 500)) {
    const rows = (await loader.store.knex(table.name).where('partner_id', hold.partner).whereIn(idColumn, part).select(idColumn, 'loaded_at')) as Record<string, unknown>[];
    for (const r of rows) if ((fromStoreTimestamp(r.loaded_at) ?? '') > hold.heldAt) out.add(String(r[idColumn]));
  }
  return out;
}

/** Applies a held hold: its records deleted (the guard off), the jobs evaluated, the hold closed. */
export async function applyHold(loader: Loader, id: number, by: string): Promise<HoldDecision> {
  const hold = await heldOne(loader, id);
  const since = await loadedSince(loader, hold);
  const ids = hold.ids.filter((x) => !since.has(x));
  const run = await Run.start(loader, { partner: hold.partner, stream: hold.entity, kind: 'deletes' }, 'group');
  try {
    const r = await loader.transaction(async (tx) => {
      const removed = await tx.remove({ partner: hold.partner, variant: hold.variant, entity: hold.entity, ids, learnedVia: hold.learnedVia, runId: run.id, guard: false });
      const outcome = { deleted: removed.deleted, came_back: [...since], gone: [...removed.alreadyDeleted, ...removed.unknown], run_id: run.id };
      const decided = await tx.run((trx) => decideHold(trx, id, { state: 'applied', by, now: loader.store.now(), outcome }));
      if (!decided) throw new HoldError(`delete hold ${id} was decided meanwhile`);
      return removed;
    });
    run.counts.deleted = r.deleted;
    await run.settle();
    await run.finish('succeeded');
    const [after] = await listHolds(loader.store.knex, { id });
    return { hold: after ?? hold, deleted: r.deleted, cameBack: [...since], gone: [...r.alreadyDeleted, ...r.unknown], runId: run.id };
  } catch (error) {
    await run.settle().catch(() => undefined);
    await run.finish('failed', { error: (error as Error).message });
    throw error;
  }
}

/** Discards a held hold: nothing is deleted; the records stay as they are. */
export async function discardHold(loader: Loader, id: number, by: string): Promise<HoldDecision> {
  const hold = await heldOne(loader, id);
  const decided = await loader.store.knex.transaction((trx) => decideHold(trx, id, { state: 'discarded', by, now: loader.store.now() }));
  if (!decided) throw new HoldError(`delete hold ${id} was decided meanwhile`);
  const [after] = await listHolds(loader.store.knex, { id });
  return { hold: after ?? hold, deleted: 0, cameBack: [], gone: [] };
}
