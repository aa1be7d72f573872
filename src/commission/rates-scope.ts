/**
 * What new or changed FX rates can move in the ledger (`fx import`, jobs/commission.ts): a
 * partner's holds, its customer-days missing a rate, and, for a rate that replaced another, every
 * transaction and activity row of that currency and day converted with it.
 */
import type { Knex } from 'knex';
import type { Variant } from '../types.js';
import { utcDay } from '../kernel/dates.js';
import { addDay, emptyScope, type Scope } from './scope.js';

/** The partner's scope for saved rates (`replaced`: the currency days whose rate changed). */
export async function ratesScope(knex: Knex, partner: string, variant: Variant, replaced: readonly { currency: string; date: string }[], runId: string): Promise<Scope> {
  const scope: Scope = emptyScope(partner, variant, runId);
  const holds: { customer_id: string | null }[] = await knex('commission_holds').where('partner_id', partner).select('customer_id');
  for (const h of holds) if (h.customer_id !== null) scope.customers.add(h.customer_id);
  const missingDays: { customer_id: string; date: unknown }[] = await knex('commission_customer_days').where('partner_id', partner).whereNotNull('missing').select('customer_id', 'date');
  for (const d of missingDays) addDay(scope, d.customer_id, String(d.date).slice(0, 10));
  for (const { currency, date } of replaced) {
    const txs: { customer_id: string; transaction_type: string; transaction_date: unknown }[] = await knex('transactions')
      .where('partner_id', partner).where('currency', currency).whereNull('amount_usd')
      .where('transaction_date', '>=', `${date}T00:00:00.000000Z`).where('transaction_date', '<=', `${date}T23:59:59.999999Z`)
      .select('customer_id', 'transaction_type', 'transaction_date');
    for (const t of txs) {
      scope.customers.add(t.customer_id);
      if (t.transaction_type === 'bonus') addDay(scope, t.customer_id, utcDay(String(t.transaction_date)));
    }
    if (variant === 'igaming') {
      const days: { customer_id: string }[] = await knex('gaming_activity').where({ partner_id: partner, date, currency }).select('customer_id');
      for (const d of days) addDay(scope, d.customer_id, date);
    }
  }
  return scope;
}
