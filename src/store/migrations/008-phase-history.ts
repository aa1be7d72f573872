import type { StoreMigration } from './migration.js';
import { seedPhaseHistory008 } from './008-phase-history-seed.js';

/**
 * The prop-trading funnel's facts (docs/reports.md, Funnel):
 * - phase_history: each phase observed for a customer, in order (`seq` per customer), with its
 *   time (`observed_at`: the record's last_modified_date, else the time it was loaded; NULL for a
 *   stage passed at an unknown time, `time_source` = inferred) and, for `failed`, the stage it
 *   failed at (`failed_from`). Appended to by the load transaction; never rewritten.
 * - funnel_customers: one row per prop-trading customer, what the funnel counts: its attributes
 *   as last loaded, the stages reached, the first time of each, the days between stages, and the
 *   stage it failed at when its last phase is `failed`. Kept in the same transaction.
 * Times are UTC text `YYYY-MM-DDTHH:MM:SS.ffffffZ` (fixed width: text order is time order).
 * Customers loaded before this migration are seeded from their stored phase.
 */
export const phaseHistory: StoreMigration = {
  name: '008-phase-history',
  async up(knex, _profile, clock) {
    await knex.schema.createTable('phase_history', (t) => {
      t.text('partner_id').notNullable();
      t.text('customer_id').notNullable();
      t.integer('seq').notNullable();
      t.text('phase').notNullable();
      t.text('observed_at').nullable();
      t.text('time_source').notNullable();
      t.text('failed_from').nullable();
      t.text('run_id').nullable();
      t.text('loaded_at').notNullable();
      t.primary(['partner_id', 'customer_id', 'seq']);
    });
    await knex.schema.createTable('funnel_customers', (t) => {
      t.text('partner_id').notNullable();
      t.text('customer_id').notNullable();
      t.text('affiliate_id').notNullable();
      t.text('campaign_id').nullable();
      t.text('challenge_type').nullable();
      t.text('account_size').nullable();
      t.text('signup_date').notNullable();
      t.text('signup_day').notNullable();
      t.text('cohort').notNullable();
      t.text('current_phase').nullable();
      t.integer('last_seq').notNullable();
      t.integer('reached_phase_1').notNullable();
      t.integer('reached_phase_2').notNullable();
      t.integer('reached_funded').notNullable();
      t.text('phase_1_at').nullable();
      t.text('phase_2_at').nullable();
      t.text('funded_at').nullable();
      t.text('failed_stage').nullable();
      t.double('days_signup_phase_1').nullable();
      t.double('days_phase_1_phase_2').nullable();
      t.double('days_phase_2_funded').nullable();
      t.text('updated_at').notNullable();
      t.primary(['partner_id', 'customer_id']);
      t.index(['partner_id', 'signup_day']);
      t.index(['affiliate_id', 'signup_day']);
    });
    await seedPhaseHistory008(knex, clock);
  },
};
