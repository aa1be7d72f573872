import type { StoreMigration } from './migration.js';

/**
 * The report facts move by difference (docs/reports.md): a customer's depositor days are read by
 * customer when its deposits or its cell change, so report_depositors gets an index by customer.
 */
export const reportDepositorCustomers: StoreMigration = {
  name: '016-report-depositor-customers',
  async up(knex) {
    await knex.schema.alterTable('report_depositors', (t) => {
      t.index(['partner_id', 'customer_id'], 'report_depositors_customer_idx');
    });
  },
};
