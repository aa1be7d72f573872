import type { StoreMigration } from './migration.js';

/**
 * Review holds (docs/commissions.md, Review holds): commission keys of customers under an open
 * fraud flag. State, not ledger, like commission_holds (FX): one row per key and affiliate,
 * replaced at each evaluation of the key.
 * - withheld_usd: booked in the ledger before the flag, withheld from payout while it is open.
 * - waiting_usd: not booked while the flag is open (a target; a RevShare month's share held
 *   apart); NULL when FX rates are missing as well.
 */
export const reviewHolds: StoreMigration = {
  name: '010-review-holds',
  async up(knex, profile) {
    const { decimal, timestamp, json } = profile.types;
    await knex.schema.createTable('commission_review_holds', (t) => {
      t.text('line_key').notNullable();
      t.text('affiliate_id').notNullable();
      t.text('plan_id').notNullable();
      t.text('plan_kind').notNullable();
      t.text('partner_id').notNullable();
      t.text('customer_id').nullable();
      t.text('period').notNullable();
      // [{ id, rule }] of the open flags
      t.specificType('flags', json).notNullable();
      t.specificType('withheld_usd', decimal).notNullable();
      t.specificType('waiting_usd', decimal).nullable();
      t.specificType('since', timestamp).notNullable();
      t.specificType('updated_at', timestamp).notNullable();
      t.primary(['line_key', 'affiliate_id']);
      t.index(['partner_id']);
    });
  },
};
