import type { StoreMigration } from './migration.js';

/**
 * Bulk runs (import, backfill, a first sync) recompute the report facts over each group of
 * batches instead of moving them after every batch (docs/loading.md, Bulk runs). What a committed
 * batch touched waits here, written in the batch's own transaction, until the run settles it:
 * `day` (a UTC day whose cells are recomputed), `ftd` (a customer whose first deposit is looked at
 * again) and `moved` (a customer whose cell or product changed: every day of its rows). A crash
 * between the load and the recompute loses nothing: the next loading command or the worker
 * settles it first. `created_at` is when the first batch still unsettled touched the entry.
 */
export const reportPending: StoreMigration = {
  name: '022-report-pending',
  async up(knex, profile) {
    const { timestamp } = profile.types;
    await knex.schema.createTable('report_pending', (t) => {
      t.text('partner_id').notNullable();
      t.text('variant').notNullable();
      t.text('kind').notNullable();
      t.text('value').notNullable();
      t.specificType('created_at', timestamp).notNullable();
      t.primary(['partner_id', 'kind', 'value']);
    });
  },
};
