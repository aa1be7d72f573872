/**
 * The mass-delete guard (docs/loading.md, Deletes): a partner bug that empties a table must not
 * claw back a month of commissions. Before deletes are applied, the guard counts what their scope
 * would have deleted (a run's deletes, or the pushed deletes of a UTC day) against what the
 * partner holds: customers against the partner's customers, transactions against the
 * transactions of each day they fall on. Past `max_share` of either (and past `min_records`, so
 * that a small partner can still delete a few), the deletes are held, not applied: a hold in the
 * store, the run's `deletes_held`, a `status` line, a console notice and the worker's alert, until
 * an operator applies or discards them (`partner-sync deletes apply|discard`). Once a scope is
 * held, the rest of its deletes join the hold.
 */
import type { Knex } from 'knex';
import type { DeleteGuard } from '../config/definition.js';
import { customerBase, holdDeletes, liveDays, openHold, transactionBase } from '../store/delete-holds.js';
import type { Removal } from '../store/tombstones.js';

export type { DeleteGuard };

export const DEFAULT_DELETE_GUARD: DeleteGuard = { max_share: 0.05, min_records: 20 };

/** The guard's scope of a removal: the run, or for pushed deletes the UTC day. */
export const guardScope = (r: Pick<Removal, 'learnedVia' | 'runId' | 'now'>): string => (r.learnedVia === 'push' ? `push:${r.now.slice(0, 10)}` : r.runId);

const limitOf = (guard: DeleteGuard, base: number): number => Math.max(guard.min_records, Math.floor(guard.max_share * base));

/**
 * Judges a removal: undefined to apply it, or the hold it went to (with why). Only the live
 * records count; ids the store has no live row for delete nothing and are never held.
 */
export async function judgeDeletes(trx: Knex.Transaction, r: Removal, guard: DeleteGuard): Promise<{ holdId: number; held: number; reason: string } | undefined> {
  const scope = guardScope(r);
  const days = await liveDays(trx, r.partner, r.variant, r.entity, r.ids);
  if (days.size === 0) return undefined;
  const hold = (reason: string) => holdDeletes(trx, { partner: r.partner, variant: r.variant, entity: r.entity, learnedVia: r.learnedVia, scope, runId: r.runId, reason, ids: [...days.keys()], now: r.now }).then((holdId) => ({ holdId, held: days.size, reason }));
  const open = await openHold(trx, r.partner, r.entity, scope);
  if (open) return hold(open.reason);
  const share = `${Math.round(guard.max_share * 10_000) / 100}%`;
  if (r.entity === 'customers') {
    const base = await customerBase(trx, r.partner, r.variant, scope);
    const would = base.deleted + days.size;
    const of = base.live + base.deleted;
    if (would > limitOf(guard, of)) return hold(`would delete ${would} of the partner's ${of} customers, over the guard's ${share} (at least ${guard.min_records})`);
    return undefined;
  }
  const perDay = new Map<string, number>();
  for (const day of days.values()) perDay.set(day, (perDay.get(day) ?? 0) + 1);
  const bases = await transactionBase(trx, r.partner, r.variant, scope, [...perDay.keys()].sort());
  for (const [day, n] of [...perDay].sort()) {
    const base = bases.get(day) ?? { live: 0, deleted: 0 };
    const would = base.deleted + n;
    const of = base.live + base.deleted;
    if (would > limitOf(guard, of)) return hold(`would delete ${would} of the ${of} transactions of ${day}, over the guard's ${share} (at least ${guard.min_records})`);
  }
  return undefined;
}
