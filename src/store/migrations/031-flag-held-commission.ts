import type { StoreMigration } from './migration.js';

/**
 * fraud_flags.held_cents: the commission the flag holds for review, in USD cents (docs/fraud.md,
 * The review queue): what the review holds naming the flag withhold (booked before it) and keep
 * waiting (not booked while it is open), kept by the commission evaluation that writes those
 * holds. A whole number so that the queue sorts by it in the store (SQLite keeps decimals as
 * text). 0 until an evaluation names the flag. Indexed with the status: the queue is the open
 * flags, largest exposure first.
 * Plain schema, frozen here.
 */
export const flagHeldCommission: StoreMigration = {
  name: '031-flag-held-commission',
  async up(knex) {
    await knex.schema.alterTable('fraud_flags', (t) => {
      t.bigInteger('held_cents').notNullable().defaultTo(0);
      t.index(['status', 'held_cents'], 'fraud_flags_status_held');
    });
  },
};
