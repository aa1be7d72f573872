/**
 * A bulk run's batches mark what they wrote by day (the run's id and the UTC days of their
 * transactions or activity) instead of by customer: a batch writes a few markers, not one per
 * record. The jobs list the rows behind a marker when they settle: the rows of the partner that
 * carry the run's id (run_id, written with every row) on those days, a range scan of the table's
 * day index. A row a later run rewrote carries that run's id and is listed by that run's markers;
 * a row no run rewrote since holds what its own run's markers were written for.
 */
import type { Knex } from 'knex';
import { addDays } from '../kernel/dates.js';
import { append } from '../kernel/collections.js';
import { entityTable } from './tables.js';
import type { Variant } from '../types.js';

export type RunDayEntity = 'transactions' | 'activity';

/**
 * Whether the jobs mark a batch's transactions and activity by run day rather than by customer:
 * a run evaluated over its group (src/pipeline/jobs.ts, policy `group`). Not a push's (`behind`):
 * its runs are one request each, and listing a request's rows would scan its day's rows once per request.
 */
export const marksByRunDay = (change: { policy: string }): boolean => change.policy === 'group';

/** Sorted days as runs of consecutive days, [first, last]. */
export function dayRanges(days: Iterable<string>): [string, string][] {
  const out: [string, string][] = [];
  for (const d of [...new Set(days)].sort()) {
    const last = out[out.length - 1];
    if (last && addDays(last[1], 1) === d) last[1] = d;
    else out.push([d, d]);
  }
  return out;
}

/** The partner's rows of `entity` the run wrote on the UTC days [from, to]. */
export function runRows(db: Knex | Knex.Transaction, partner: string, variant: Variant, entity: RunDayEntity, runId: string, from: string, to: string): Knex.QueryBuilder {
  const table = entityTable(variant, entity).name;
  const q = db(table).where('partner_id', partner).where('run_id', runId);
  if (entity === 'activity') return q.where('date', '>=', from).where('date', '<=', to);
  return q.where('transaction_date', '>=', `${from}T00:00:00.000000Z`).where('transaction_date', '<', `${addDays(to, 1)}T00:00:00.000000Z`);
}

/** The customers of the rows the run wrote on these days (of transactions: of this type only, with `type`). */
export async function runCustomers(db: Knex | Knex.Transaction, partner: string, variant: Variant, entity: RunDayEntity, runId: string, days: Iterable<string>, into: Set<string>, type?: string): Promise<void> {
  for (const [from, to] of dayRanges(days)) {
    const q = runRows(db, partner, variant, entity, runId, from, to);
    if (type !== undefined) q.where('transaction_type', type);
    for (const r of (await q.distinct('customer_id')) as { customer_id: string }[]) into.add(r.customer_id);
  }
}

/** Adds the customers of the rows these deferred days name to `into`: one listing per run, entity and run of days. */
export async function customersOfRunDays(db: Knex | Knex.Transaction, partner: string, days: readonly DeferredDay[], into: Set<string>): Promise<void> {
  const groups = new Map<string, DeferredDay[]>();
  for (const d of days) append(groups, `${d.run_id}\u0000${d.entity}`, d);
  for (const list of groups.values()) {
    const [first] = list as [DeferredDay];
    await runCustomers(db, partner, first.variant as Variant, first.entity as RunDayEntity, first.run_id, list.map((d) => d.date), into);
  }
}

export interface DeferredDay { variant: string; run_id: string; entity: string; date: string; created_at: unknown }
