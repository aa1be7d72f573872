import type { Knex } from 'knex';
import type { StoreKind } from '../dialects.js';
import type { StoreMigration } from './migration.js';

/**
 * The commission engine's tables (docs/commissions.md):
 * - fx_rates: USD value of one unit of a currency, per UTC day (`partner-sync fx import`).
 * - commission_ledger: append-only lines; a correction is a new line. Triggers refuse UPDATE and DELETE.
 * - commission_holds: targets that cannot be computed yet (a missing FX rate); state, not ledger.
 * - commission_customer_days: GGR, NGR and wagering per customer and UTC day in USD, derived from
 *   activity and bonus transactions, so that a batch re-derives only the days it touched.
 * - commission_customers: the affiliate those days are attributed to (to find re-attributions).
 * - commission_affiliate_months: the sums of those days per affiliate and month, kept by deltas,
 *   so that a month's RevShare base costs one row read however long the history is.
 * - commission_pending: scopes whose evaluation failed after their data committed; retried first.
 */

/** Append-only enforcement as data: the statements per backend. */
const APPEND_ONLY: Record<StoreKind, string[]> = {
  sqlite: [
    `CREATE TRIGGER commission_ledger_no_update BEFORE UPDATE ON commission_ledger
       BEGIN SELECT RAISE(ABORT, 'commission_ledger is append-only: add a correcting line'); END`,
    `CREATE TRIGGER commission_ledger_no_delete BEFORE DELETE ON commission_ledger
       BEGIN SELECT RAISE(ABORT, 'commission_ledger is append-only: add a correcting line'); END`,
  ],
  postgres: [
    `CREATE FUNCTION commission_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'commission_ledger is append-only: add a correcting line'; END $$`,
    `CREATE TRIGGER commission_ledger_append_only BEFORE UPDATE OR DELETE ON commission_ledger
       FOR EACH ROW EXECUTE FUNCTION commission_ledger_append_only()`,
  ],
};

export const commissions: StoreMigration = {
  name: '003-commissions',
  async up(knex, profile) {
    const { decimal, timestamp, date, json } = profile.types;
    const dec = (t: Knex.CreateTableBuilder, name: string, required = false) => {
      const c = t.specificType(name, decimal);
      if (required) c.notNullable();
      else c.nullable();
    };

    await knex.schema.createTable('fx_rates', (t) => {
      t.text('currency').notNullable();
      t.specificType('date', date).notNullable();
      // USD per one unit of `currency`: amount_usd = amount × rate.
      dec(t, 'rate', true);
      t.text('source').nullable();
      t.specificType('loaded_at', timestamp).notNullable();
      t.primary(['currency', 'date']);
    });

    await knex.schema.createTable('commission_ledger', (t) => {
      t.bigIncrements('id').primary();
      // The target this line moves: the sum of a key's lines per affiliate is its amount so far.
      t.text('line_key').notNullable();
      t.text('plan_id').notNullable();
      t.text('plan_kind').notNullable();
      t.text('partner_id').notNullable();
      t.text('affiliate_id').notNullable();
      t.text('customer_id').nullable();
      // YYYY-MM: the month the earning or the clawback belongs to.
      t.text('period').notNullable();
      t.text('reason').notNullable();
      dec(t, 'amount_usd', true);
      // The key's total for this affiliate after this line (previous total + amount_usd).
      dec(t, 'total_usd', true);
      // The record that decides the line (FTD, fee transaction); CPA clawbacks find the paid deposit through it.
      t.text('ref_id').nullable();
      t.specificType('sources', json).notNullable();
      t.specificType('basis', json).notNullable();
      t.text('run_id').nullable();
      t.specificType('created_at', timestamp).notNullable();
      t.index(['line_key']);
      t.index(['affiliate_id', 'period']);
      t.index(['partner_id', 'period']);
    });
    for (const sql of APPEND_ONLY[profile.kind]) await knex.raw(sql);

    await knex.schema.createTable('commission_holds', (t) => {
      t.text('line_key').notNullable();
      t.text('affiliate_id').notNullable();
      t.text('plan_id').notNullable();
      t.text('plan_kind').notNullable();
      t.text('partner_id').notNullable();
      t.text('customer_id').nullable();
      t.text('period').notNullable();
      t.specificType('missing', json).notNullable();
      t.specificType('since', timestamp).notNullable();
      t.specificType('updated_at', timestamp).notNullable();
      t.primary(['line_key', 'affiliate_id']);
      t.index(['partner_id']);
    });

    await knex.schema.createTable('commission_customer_days', (t) => {
      t.text('partner_id').notNullable();
      t.text('customer_id').notNullable();
      t.specificType('date', date).notNullable();
      t.text('affiliate_id').notNullable();
      // NULL while a rate is missing (then `missing` lists the currency and day).
      dec(t, 'ggr_usd');
      dec(t, 'ngr_usd');
      dec(t, 'bets_usd');
      t.text('missing').nullable();
      t.specificType('updated_at', timestamp).notNullable();
      t.primary(['partner_id', 'customer_id', 'date']);
      t.index(['partner_id', 'date']);
      t.index(['partner_id', 'missing']);
    });

    // The affiliate each customer's customer-days are attributed to: a re-sent customer record
    // whose affiliate differs is found by one indexed lookup, not by scanning its history.
    await knex.schema.createTable('commission_customers', (t) => {
      t.text('partner_id').notNullable();
      t.text('customer_id').notNullable();
      t.text('affiliate_id').notNullable();
      t.specificType('updated_at', timestamp).notNullable();
      t.primary(['partner_id', 'customer_id']);
    });

    await knex.schema.createTable('commission_affiliate_months', (t) => {
      t.text('partner_id').notNullable();
      t.text('affiliate_id').notNullable();
      t.text('month').notNullable();
      dec(t, 'ggr_usd', true);
      dec(t, 'ngr_usd', true);
      t.bigInteger('days').notNullable();
      t.bigInteger('missing_days').notNullable();
      t.specificType('updated_at', timestamp).notNullable();
      t.primary(['partner_id', 'affiliate_id', 'month']);
    });

    await knex.schema.createTable('commission_pending', (t) => {
      t.text('partner_id').notNullable();
      t.text('variant').notNullable();
      // customer | record (value: customer id), day (value: JSON [customer id, date]), replaced (value: date)
      t.text('kind').notNullable();
      t.text('value').notNullable();
      t.specificType('created_at', timestamp).notNullable();
      t.primary(['partner_id', 'kind', 'value']);
    });
  },
};
