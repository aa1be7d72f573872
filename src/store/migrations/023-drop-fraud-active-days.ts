import type { StoreMigration } from './migration.js';

/**
 * fraud_active_days kept, per partner, which customers had activity on which day: a copy of the
 * activity tables' own key (partner, date, customer, ...), written by every batch (a month's
 * 171,000 keyed inserts, 0.8 s of its load transactions). Detection now reads the customers of a
 * replaced day from the rows the replacement deleted, and whether a day has activity left from
 * the activity table itself. fraud_loaded_days stays.
 */
export const dropFraudActiveDays: StoreMigration = {
  name: '023-drop-fraud-active-days',
  async up(knex) {
    await knex.schema.dropTableIfExists('fraud_active_days');
  },
};
