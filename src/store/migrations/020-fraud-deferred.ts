import type { StoreMigration } from './migration.js';

/**
 * Bulk runs (import, backfill, a first sync) evaluate the fraud rules over the run's whole scope
 * instead of after every batch (docs/loading.md, Bulk runs). What a committed batch touched waits
 * here, written in the batch's own transaction, until the run settles it: a crash between the
 * load and the evaluation loses nothing; the next loading command or the worker settles it first.
 * One row per (partner, customer); `created_at` is when the first batch still unevaluated touched
 * the customer, which `status` shows as the age of what is not evaluated yet.
 */
export const fraudDeferred: StoreMigration = {
  name: '020-fraud-deferred',
  async up(knex, profile) {
    const { timestamp } = profile.types;
    await knex.schema.createTable('fraud_deferred', (t) => {
      t.text('partner_id').notNullable();
      t.text('variant').notNullable();
      t.text('customer_id').notNullable();
      t.specificType('created_at', timestamp).notNullable();
      t.primary(['partner_id', 'customer_id']);
    });
  },
};
