import type { StoreMigration } from './index.js';

/**
 * Fraud detection judges wagering only over days whose activity is loaded (docs/fraud.md,
 * Wagering): a window with a day not loaded yet is pending, not "no play". fraud_customers keeps
 * the first and last such day per customer, so the batch that loads a day's activity finds the
 * customers waiting for it through an index instead of re-reading every recent depositor.
 */
export const fraudPending: StoreMigration = {
  name: '015-fraud-pending',
  async up(knex) {
    await knex.schema.alterTable('fraud_customers', (t) => {
      t.text('pending_from').nullable();
      t.text('pending_to').nullable();
      t.index(['partner_id', 'pending_to'], 'fraud_customers_pending');
    });
  },
};
