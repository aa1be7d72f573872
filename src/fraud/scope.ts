/**
 * Which customers the fraud rules judge: those a committed batch touched, including those whose
 * activity day it replaced, and the partner's loaded days (fraud_loaded_days) the wagering
 * windows wait for.
 */
import type { Knex } from 'knex';
import type { ChangeSet } from '../pipeline/jobs.js';
import type { Variant } from '../types.js';
import { addDays } from '../kernel/dates.js';
import { dialectOf } from '../store/dialect/index.js';
import { entityTable } from '../store/tables.js';
import type { RuleSettings } from './config.js';

/** Whether any activity of the partner is loaded for each of these days (fraud_loaded_days). */
async function coverage(trx: Knex.Transaction, partner: string, days: readonly string[]): Promise<Map<string, boolean>> {
  const out = new Map<string, boolean>(days.map((d) => [d, false]));
  for (const part of dialectOf(trx).chunks(days, 500)) {
    for (const r of (await trx('fraud_loaded_days').where('partner_id', partner).whereIn('date', part).select('date')) as { date: string }[]) out.set(r.date, true);
  }
  return out;
}

/**
 * The customers a committed batch touched, including those whose activity day it replaced (the
 * day's rows were deleted; the re-sent ones come in the batches after it). iGaming: a day whose
 * activity is loaded for the partner for the first time re-judges the customers whose wagering
 * windows waited for it (fraud_customers.pending_*); a day left without any activity (replaced,
 * not re-sent yet) re-judges the customers with a deposit or bonus whose windows may reach it.
 * Which customers have activity on a day is the activity table's own key (partner, date,
 * customer, ...): no copy of it is kept.
 */
export async function touchedCustomers(trx: Knex.Transaction, change: ChangeSet, settings: RuleSettings | undefined, byDay: boolean): Promise<Set<string>> {
  // Rows a day replacement or a delete took away: their customers are judged again without them.
  const ids = new Set<string>(change.removed.activity.map((r) => String(r.customer_id)));
  for (const entity of ['customers', 'transactions'] as const) for (const r of change.removed[entity]) ids.add(String(r.customer_id));
  // `byDay`: the customers of the batch's transactions and activity are deferred by day (deferDays).
  for (const entity of byDay ? ['customers'] as const : ['customers', 'transactions', 'activity'] as const) for (const r of change.records[entity]) ids.add(String(r.customer_id));
  const partner = change.partner;
  const batchDays = [...new Set(change.records.activity.map((r) => String(r.date).slice(0, 10)))].sort();
  const watch = change.variant === 'igaming' && settings ? [...new Set([...batchDays, ...change.replacedDays])].sort() : [];
  const before = await coverage(trx, partner, watch);
  // The partner's loaded days: the batch's days are loaded; a replaced day stays loaded only if
  // some row of it is left.
  for (const part of dialectOf(trx).insertChunks(batchDays.map((date) => ({ partner_id: partner, date })))) await trx('fraud_loaded_days').insert(part).onConflict(['partner_id', 'date']).ignore();
  const activity = entityTable(change.variant, 'activity').name;
  for (const d of change.replacedDays) {
    if (batchDays.includes(d)) continue;
    if ((await trx(activity).where({ partner_id: partner, date: d }).first('customer_id')) === undefined) await trx('fraud_loaded_days').where({ partner_id: partner, date: d }).delete();
  }
  if (watch.length > 0 && settings) {
    const after = await coverage(trx, partner, watch);
    const reach = Math.max(settings.cpa_farming.within_days - 1, settings.bonus_bust_out.within_days, settings.deposit_cycling.within_days);
    for (const d of watch) {
      if (before.get(d) === after.get(d)) continue;
      if (after.get(d)) {
        const waiting: { customer_id: string }[] = await trx('fraud_customers').where('partner_id', partner).where('pending_to', '>=', d).where('pending_from', '<=', d).select('customer_id');
        for (const r of waiting) ids.add(r.customer_id);
      } else {
        const judged: { customer_id: string }[] = await trx('transactions').where('partner_id', partner).whereIn('transaction_type', ['deposit', 'bonus'])
          .where('transaction_date', '>=', `${addDays(d, -reach)}T00:00:00.000000Z`).where('transaction_date', '<', `${addDays(d, 1)}T00:00:00.000000Z`).distinct('customer_id');
        for (const r of judged) ids.add(r.customer_id);
      }
    }
  }
  return ids;
}

/** The partner's loaded days, rebuilt from its activity rows (a rescan). */
export async function rebuildLoadedDays(trx: Knex.Transaction, partner: string, variant: Variant): Promise<void> {
  const activity = entityTable(variant, 'activity').name;
  await trx('fraud_loaded_days').where('partner_id', partner).delete();
  const day = dialectOf(trx).dateText('date');
  await trx.raw(`INSERT INTO fraud_loaded_days (partner_id, date) SELECT DISTINCT partner_id, ${day} FROM ${activity} WHERE partner_id = ?`, [partner]);
}

/** The customers a scan judges: every customer of the partner, or those with a signup, transaction or activity on or after `from`. */
export async function scanCustomers(trx: Knex.Transaction, partner: string, variant: Variant, from?: string): Promise<string[]> {
  const customers = new Set<string>();
  let c = trx('customers').where('partner_id', partner);
  if (from) c = c.where('signup_date', '>=', `${from}T00:00:00.000000Z`);
  for (const r of (await c.select('customer_id')) as { customer_id: string }[]) customers.add(r.customer_id);
  if (from) {
    const tx: { customer_id: string }[] = await trx('transactions').where('partner_id', partner).where('transaction_date', '>=', `${from}T00:00:00.000000Z`).distinct('customer_id');
    const act: { customer_id: string }[] = await trx(entityTable(variant, 'activity').name).where('partner_id', partner).where('date', '>=', from).distinct('customer_id');
    for (const r of [...tx, ...act]) customers.add(r.customer_id);
  }
  return [...customers].sort();
}
