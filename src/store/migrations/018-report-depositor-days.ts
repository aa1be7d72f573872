import type { StoreMigration } from './migration.js';

/**
 * A batch that only adds deposits to a customer reads its depositor days from the month of the
 * earliest new deposit on (src/reports/customer-reads.ts): the index by customer gets the day as
 * its last column, so that read is a range of the index, however long the customer's history.
 */
export const reportDepositorDays: StoreMigration = {
  name: '018-report-depositor-days',
  async up(knex) {
    await knex.schema.alterTable('report_depositors', (t) => {
      t.dropIndex(['partner_id', 'customer_id'], 'report_depositors_customer_idx');
      t.index(['partner_id', 'customer_id', 'day'], 'report_depositors_customer_day_idx');
    });
  },
};
