import type { StoreMigration } from './migration.js';

/**
 * fraud_active_days kept, per partner, which customers had activity on which day: a copy of the
 * activity tables' own key (partner, date, customer, ...), written by every batch (keyed inserts
 * that were a share of a month's load transactions: bench/README.md, the whole pipeline). Detection now reads the customers of a
 * replaced day from the rows the replacement deleted, and whether a day has activity left from
 * the activity table itself. fraud_loaded_days stays.
 */
export const dropFraudActiveDays: StoreMigration = {
  name: '023-drop-fraud-active-days',
  async up(knex) {
    await knex.schema.dropTableIfExists('fraud_active_days');
  },
};
