import type { StoreMigration } from './migration.js';

/** Rejects of pulled records keep the partner's source record; replay must map it again. */
export const rejectOrigin: StoreMigration = {
  name: '002-reject-origin',
  async up(knex) {
    await knex.schema.alterTable('rejects', (t) => {
      t.text('origin').notNullable().defaultTo('spec');
    });
  },
};
