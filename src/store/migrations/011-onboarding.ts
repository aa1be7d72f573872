import type { StoreMigration } from './migration.js';

/**
 * The go-live checklist of each partner (`partner-sync onboard`): one row per (partner, item),
 * the result of its last verification, when it was verified, and when it first passed (kept once
 * set: the go-live item's first_ok_at is the partner's go-live time).
 */
export const onboarding: StoreMigration = {
  name: '011-onboarding',
  async up(knex, profile) {
    const { timestamp } = profile.types;
    await knex.schema.createTable('onboarding_checklist', (t) => {
      t.text('partner_id').notNullable();
      t.text('item').notNullable();
      t.boolean('ok').notNullable();
      t.text('detail').notNullable();
      t.specificType('checked_at', timestamp).notNullable();
      t.specificType('first_ok_at', timestamp).nullable();
      t.primary(['partner_id', 'item']);
    });
  },
};
