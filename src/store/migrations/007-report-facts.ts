import type { Knex } from 'knex';
import type { StoreMigration } from './migration.js';

/**
 * The report facts (docs/reports.md): what the affiliate report reads instead of scanning raw rows.
 * Kept by the after-load job src/reports/ in the load transaction: every cell a batch can change
 * is recomputed from the raw rows, so the facts equal the raw tables whenever a batch commits.
 * - report_ftd: each customer's first approved deposit (FTD) and its USD amount.
 * - report_cells: sums per (partner, affiliate, campaign, UTC day); campaign '' when none.
 * - report_month_cells: the same per month: the sum of its day cells, with the month's distinct depositors.
 * - report_purchase_cells: challenge purchases per cell and product (challenge_type, account_size).
 * - report_depositors: one row per customer and UTC day with an approved deposit, so that a
 *   month or a range counts each depositor once.
 */
export const reportFacts: StoreMigration = {
  name: '007-report-facts',
  async up(knex, profile) {
    const { decimal, timestamp, date } = profile.types;
    const dec = (t: Knex.CreateTableBuilder, name: string, nullable = false) => {
      const c = t.specificType(name, decimal);
      if (nullable) c.nullable();
      else c.notNullable();
    };
    const cellKey = (t: Knex.CreateTableBuilder) => {
      t.text('partner_id').notNullable();
      t.text('affiliate_id').notNullable();
      t.text('campaign_id').notNullable();
      t.specificType('day', date).notNullable();
    };

    await knex.schema.createTable('report_ftd', (t) => {
      t.text('partner_id').notNullable();
      t.text('customer_id').notNullable();
      t.text('transaction_id').notNullable();
      t.specificType('transaction_date', timestamp).notNullable();
      t.specificType('day', date).notNullable();
      dec(t, 'amount_currency');
      t.text('currency').notNullable();
      // NULL when neither amount_usd nor an FX rate of the day is known (counted as unconverted).
      dec(t, 'amount_usd', true);
      t.primary(['partner_id', 'customer_id']);
      t.index(['partner_id', 'day']);
    });

    await knex.schema.createTable('report_cells', (t) => {
      cellKey(t);
      // unconverted_*: source records left out of the USD sums (no amount_usd, no rate), per source.
      for (const c of ['registrations', 'ftd_count', 'depositors', 'deposit_count', 'challenge_purchases', 'unconverted_tx', 'unconverted_activity', 'unconverted_ftd']) t.bigInteger(c).notNullable();
      for (const c of ['ftd_usd', 'deposits_usd', 'withdrawals_usd', 'bonuses_usd', 'bets_usd', 'ggr_usd', 'ngr_usd',
        'challenge_fees_usd', 'reset_fees_usd', 'refunds_usd', 'payouts_usd']) dec(t, c);
      t.primary(['partner_id', 'day', 'affiliate_id', 'campaign_id']);
      t.index(['partner_id', 'affiliate_id', 'day']);
    });

    // The same sums per month (depositors: distinct customers of the month), so that a month's
    // report reads one row per affiliate and campaign instead of thirty.
    await knex.schema.createTable('report_month_cells', (t) => {
      t.text('partner_id').notNullable();
      t.text('affiliate_id').notNullable();
      t.text('campaign_id').notNullable();
      t.text('month').notNullable();
      for (const c of ['registrations', 'ftd_count', 'depositors', 'deposit_count', 'challenge_purchases', 'unconverted_tx', 'unconverted_activity', 'unconverted_ftd']) t.bigInteger(c).notNullable();
      for (const c of ['ftd_usd', 'deposits_usd', 'withdrawals_usd', 'bonuses_usd', 'bets_usd', 'ggr_usd', 'ngr_usd',
        'challenge_fees_usd', 'reset_fees_usd', 'refunds_usd', 'payouts_usd']) dec(t, c);
      t.primary(['partner_id', 'month', 'affiliate_id', 'campaign_id']);
    });

    await knex.schema.createTable('report_purchase_cells', (t) => {
      cellKey(t);
      t.text('challenge_type').notNullable();
      // The account size as its exact decimal text ('' when none), so that it can be part of the key.
      t.text('account_size').notNullable();
      t.bigInteger('purchases').notNullable();
      dec(t, 'fees_usd');
      t.bigInteger('unconverted').notNullable();
      t.primary(['partner_id', 'day', 'affiliate_id', 'campaign_id', 'challenge_type', 'account_size']);
    });

    await knex.schema.createTable('report_depositors', (t) => {
      t.text('partner_id').notNullable();
      t.specificType('day', date).notNullable();
      t.text('customer_id').notNullable();
      t.text('affiliate_id').notNullable();
      t.text('campaign_id').notNullable();
      t.primary(['partner_id', 'day', 'customer_id']);
      t.index(['partner_id', 'affiliate_id', 'day']);
    });

    // Registrations of a day are found by signup date.
    await knex.schema.alterTable('customers', (t) => {
      t.index(['partner_id', 'signup_date'], 'customers_partner_signup_idx');
    });
  },
};
