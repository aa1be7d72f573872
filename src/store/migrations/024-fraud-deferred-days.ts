import type { StoreMigration } from './migration.js';

/**
 * A bulk run's batches defer the fraud rules for the customers of their transactions and activity
 * by day (src/store/run-days.ts): one row per batch, run, entity and UTC day, where fraud_deferred
 * had one per customer (keyed inserts that were a share of a month's load transactions:
 * bench/README.md, the whole pipeline). The
 * settle lists the customers of the run's rows of those days into fraud_deferred, then evaluates
 * as before. `writer` keeps each batch's rows its own: a batch committing while a settle took a
 * shared row would add nothing, and its rows would wait for no marker.
 */
export const fraudDeferredDays: StoreMigration = {
  name: '024-fraud-deferred-days',
  async up(knex, profile) {
    const { timestamp } = profile.types;
    await knex.schema.createTable('fraud_deferred_days', (t) => {
      t.text('partner_id').notNullable();
      t.text('variant').notNullable();
      t.text('run_id').notNullable();
      t.text('entity').notNullable();
      t.text('date').notNullable();
      t.text('writer').notNullable();
      t.specificType('created_at', timestamp).notNullable();
      t.primary(['partner_id', 'run_id', 'entity', 'date', 'writer']);
    });
  },
};
