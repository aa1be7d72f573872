import type { StoreMigration } from './migration.js';

/**
 * The customer-days still missing a rate are found through an index of those days alone: the
 * index on (partner, missing) held every customer-day, nearly all with no missing rate, and every
 * customer-day written paid for it (a month's 171,000). The two readers ask for the days missing
 * a rate of a partner (`fx import`) and of a partner's affiliates (a RevShare month's held rates).
 */
export const missingDaysIndex: StoreMigration = {
  name: '025-missing-days-index',
  async up(knex) {
    await knex.schema.alterTable('commission_customer_days', (t) => {
      t.dropIndex(['partner_id', 'missing']);
    });
    await knex.raw('CREATE INDEX commission_customer_days_missing ON commission_customer_days (partner_id, affiliate_id, date) WHERE missing IS NOT NULL');
  },
};
