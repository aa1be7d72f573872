import { maskStoredIdentities } from './015-mask-identities.js';
import type { StoreMigration } from './migration.js';

/**
 * Fraud detection judges wagering only over days whose activity is loaded (docs/fraud.md,
 * Wagering): a window with a day not loaded yet is pending, not "no play". fraud_customers keeps
 * the first and last such day per customer, so the batch that loads a day's activity finds the
 * customers waiting for it through an index instead of re-reading every recent depositor. It
 * also keeps the customer's signup, so that detection can tell which facts a batch changed.
 * E-mail and name identity keys stored in clear are replaced by their masked form and digest.
 */
export const fraudPending: StoreMigration = {
  name: '015-fraud-pending',
  async up(knex) {
    await knex.schema.alterTable('fraud_customers', (t) => {
      t.text('pending_from').nullable();
      t.text('pending_to').nullable();
      // The record's signup (duplicate identity links by it): a batch that changes none of a
      // customer's facts re-judges none of the instances they feed.
      t.text('signup_date').nullable();
      t.index(['partner_id', 'pending_to'], 'fraud_customers_pending');
    });
    // The days whose activity is loaded per partner (any customer's row): whether a window's days
    // are loaded is one small look-up, not a search among every customer's active days.
    await knex.schema.createTable('fraud_loaded_days', (t) => {
      t.text('partner_id').notNullable();
      t.text('date').notNullable();
      t.primary(['partner_id', 'date']);
    });
    await knex('fraud_loaded_days').insert(knex('fraud_active_days').distinct('partner_id', 'date'));
    // E-mail and name keys are no longer stored in clear (docs/fraud.md, duplicate_identity).
    await maskStoredIdentities(knex);
  },
};
