import type { StoreMigration } from './migration.js';

/**
 * The HTTP API's own state (src/api/):
 * - api_clients: OAuth client credentials. The secret is kept only as a salted scrypt hash with
 *   the parameters it was made with (`secret_kdf`), so stronger parameters can come later without
 *   invalidating older secrets. `revoked_at` set: its tokens are refused on every process.
 * - api_settings: values every `serve` process on one store must share, such as the token
 *   signing key when none is given in the environment.
 * - api_rate_counts: requests per access token and second, the rate limit's shared counter.
 */
export const apiClients: StoreMigration = {
  name: '005-api-clients',
  async up(knex, profile) {
    const { timestamp } = profile.types;
    await knex.schema.createTable('api_clients', (t) => {
      t.text('client_id').primary();
      t.text('partner_id').notNullable();
      t.text('variant').notNullable();
      // Space-separated, as in OAuth: "read write".
      t.text('scopes').notNullable();
      t.text('affiliate_id').nullable();
      t.text('secret_kdf').notNullable();
      t.text('secret_salt').notNullable();
      t.text('secret_hash').notNullable();
      t.specificType('created_at', timestamp).notNullable();
      t.specificType('revoked_at', timestamp).nullable();
      t.index(['partner_id']);
    });
    await knex.schema.createTable('api_settings', (t) => {
      t.text('name').primary();
      t.text('value').notNullable();
      t.specificType('created_at', timestamp).notNullable();
    });
    await knex.schema.createTable('api_rate_counts', (t) => {
      t.text('token_id').notNullable();
      // Unix second the requests fell in.
      t.bigInteger('second').notNullable();
      t.integer('count').notNullable();
      t.primary(['token_id', 'second']);
      t.index(['second']);
    });
  },
};
