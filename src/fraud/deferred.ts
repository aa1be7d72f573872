/**
 * What the fraud rules have left to judge (a run evaluated over its group, a push behind its
 * commit): customers (fraud_deferred) and a group's run days (fraud_deferred_days,
 * src/store/run-days.ts), written in the batch's transaction and taken by the evaluation in the
 * transaction that writes its flags.
 */
import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';
import type { ChangeSet } from '../pipeline/jobs.js';
import type { Variant } from '../types.js';
import { utcDay } from '../kernel/dates.js';
import { customersOfRunDays, type DeferredDay, type RunDayEntity } from '../store/run-days.js';
import { rawRows } from '../store/dialects.js';
import { dialectOf } from '../store/dialect/index.js';
import { fromStoreTimestamp } from '../store/values.js';

/** Records customers whose detection a bulk run defers (fraud_deferred), in the batch's transaction. */
export async function deferCustomers(trx: Knex.Transaction, partner: string, variant: Variant, customers: ReadonlySet<string>, now: string): Promise<void> {
  await dialectOf(trx).insertColumns(trx, 'fraud_deferred', { partner_id: ['text', partner], variant: ['text', variant], created_at: ['timestamptz', now] },
    { customer_id: ['text', [...customers]] }, { on: ['partner_id', 'customer_id'] });
}

/** Records the UTC days of a bulk batch's transactions and activity (fraud_deferred_days, src/store/run-days.ts), in its transaction. */
export async function deferDays(trx: Knex.Transaction, change: ChangeSet, now: string): Promise<void> {
  const writer = randomUUID();
  const rows: Record<string, string>[] = [];
  const add = (entity: RunDayEntity, days: Iterable<string>) => {
    for (const date of new Set(days)) rows.push({ partner_id: change.partner, variant: change.variant, run_id: change.runId, entity, date, writer, created_at: now });
  };
  add('transactions', change.records.transactions.map((t) => utcDay(String(t.transaction_date))));
  add('activity', change.records.activity.map((a) => String(a.date).slice(0, 10)));
  for (const part of dialectOf(trx).insertChunks(rows)) await trx('fraud_deferred_days').insert(part);
}

/**
 * Takes the partner's deferred days (fraud_deferred_days): deletes them and lists the customers of
 * the rows their runs wrote on them, with the oldest day's age (undefined: none). In the settle's
 * transaction, under the partner's fraud lock; rows a batch commits after the take wait with that
 * batch's own days.
 */
async function takeDays(trx: Knex.Transaction, partner: string): Promise<{ customers: Set<string>; variant: Variant; since: string } | undefined> {
  const taken = rawRows<DeferredDay>(await trx.raw('DELETE FROM fraud_deferred_days WHERE partner_id = ? RETURNING variant, run_id, entity, date, created_at', [partner]));
  if (taken.length === 0) return undefined;
  const customers = new Set<string>();
  await customersOfRunDays(trx, partner, taken, customers);
  const since = taken.map((r) => fromStoreTimestamp(r.created_at) as string).sort()[0] as string;
  return { customers, variant: taken[0]!.variant as Variant, since };
}


/**
 * Takes the next group of at most `chunk` customers to judge, in the evaluation's transaction: the
 * deferred customers and the customers of the deferred days together when they fit in one group
 * (the days' customers are then not written to fraud_deferred to be read back), otherwise the days'
 * customers join fraud_deferred and the first `chunk` of it, by id, are taken. Undefined: nothing left.
 */
export async function takeGroup(trx: Knex.Transaction, partner: string, chunk: number): Promise<{ variant: Variant; customers: Set<string> } | undefined> {
  const taken = await takeDays(trx, partner);
  const stored: { customer_id: string; variant: Variant }[] = await trx('fraud_deferred').where('partner_id', partner).limit(chunk + 1).select('customer_id', 'variant');
  const group = new Set([...stored.map((r) => r.customer_id), ...(taken?.customers ?? [])]);
  if (stored.length <= chunk && group.size <= chunk) {
    if (group.size === 0) return undefined;
    for (const part of dialectOf(trx).chunks(stored.map((r) => r.customer_id))) await trx('fraud_deferred').where('partner_id', partner).whereIn('customer_id', part).delete();
    return { variant: stored[0]?.variant ?? taken!.variant, customers: group };
  }
  if (taken && taken.customers.size > 0) await deferCustomers(trx, partner, taken.variant, taken.customers, taken.since);
  const rows: { customer_id: string; variant: Variant }[] = await trx('fraud_deferred').where('partner_id', partner).orderBy('customer_id').limit(chunk).select('customer_id', 'variant');
  if (rows.length === 0) return undefined;
  const ids = rows.map((r) => r.customer_id);
  for (const part of dialectOf(trx).chunks(ids)) await trx('fraud_deferred').where('partner_id', partner).whereIn('customer_id', part).delete();
  return { variant: rows[0]!.variant, customers: new Set(ids) };
}

/** Partners with customers a bulk run left to evaluate (a crash, or a run that did not settle). */
export async function deferredFraudPartners(knex: Knex): Promise<{ partner: string; variant: Variant }[]> {
  const rows = [
    ...(await knex('fraud_deferred').distinct('partner_id', 'variant') as { partner_id: string; variant: Variant }[]),
    ...(await knex('fraud_deferred_days').distinct('partner_id', 'variant') as { partner_id: string; variant: Variant }[]),
  ];
  const out = new Map(rows.map((r) => [r.partner_id, { partner: r.partner_id, variant: r.variant }]));
  return [...out.values()].sort((a, b) => (a.partner < b.partner ? -1 : a.partner > b.partner ? 1 : 0));
}
