import type { StoreMigration } from './migration.js';

/**
 * The affiliate's own view (docs/console.md, Affiliates):
 * - console_users.affiliates: for the `affiliate` role, the affiliate ids the user is (JSON array
 *   of `AFF` or `PARTNER:AFF`); NULL for staff.
 * - console_invitations: a one-time link that lets an invited user set their password; the store
 *   keeps the SHA-256 of its token only, when it expires, and when it was used.
 * - postbacks.paused_at: a postback a manager paused (nothing is delivered until resumed; events
 *   keep being written, so none is lost).
 * Plain schema, frozen here.
 */
export const affiliateUsers: StoreMigration = {
  name: '032-affiliate-users',
  async up(knex, profile) {
    const { timestamp } = profile.types;
    await knex.schema.alterTable('console_users', (t) => {
      t.text('affiliates').nullable();
    });
    await knex.schema.createTable('console_invitations', (t) => {
      t.text('token_hash').primary();
      t.text('user_name').notNullable().references('name').inTable('console_users');
      t.specificType('created_at', timestamp).notNullable();
      t.specificType('expires_at', timestamp).notNullable();
      t.specificType('used_at', timestamp).nullable();
      t.index(['user_name']);
    });
    await knex.schema.alterTable('postbacks', (t) => {
      t.specificType('paused_at', timestamp).nullable();
    });
  },
};
