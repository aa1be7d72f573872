import type { StoreMigration } from './migration.js';

/**
 * Indexes the web console's pages read by (their figures on a store of 10,000,000 activity rows
 * are in the README's "Web console" section):
 * - runs (started_at): the Runs page's latest runs of every partner, newest first, without sorting
 *   the whole history.
 * - commission_ledger (period, affiliate_id, partner_id, amount_usd): a month's affiliates, one page
 *   at a time, and the sums per month of the Commissions and Reports pages, read from the index
 *   alone.
 */
export const consoleIndexes: StoreMigration = {
  name: '014-console-indexes',
  async up(knex) {
    await knex.schema.alterTable('runs', (t) => {
      t.index(['started_at'], 'runs_started_at_index');
    });
    await knex.schema.alterTable('commission_ledger', (t) => {
      t.index(['period', 'affiliate_id', 'partner_id', 'amount_usd'], 'commission_ledger_period_index');
    });
  },
};
