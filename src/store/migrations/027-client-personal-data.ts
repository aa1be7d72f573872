import type { StoreMigration } from './migration.js';

/**
 * An API client's personal-data policy (`partner-sync clients add --personal-data`, as JSON:
 * `{"email":"hash"}`): what its pushes keep of the personal customer fields. Clients created before
 * this migration have none and keep them, as they did.
 */
export const clientPersonalData: StoreMigration = {
  name: '027-client-personal-data',
  async up(knex) {
    await knex.schema.alterTable('api_clients', (t) => {
      t.text('personal_data');
    });
  },
};
