import type { StoreMigration } from './migration.js';

/**
 * The web console (src/console/):
 * - console_users: who may sign in, their role (operator | manager) and a salted scrypt hash of
 *   their password (src/access/secret-hash.ts, the same hashing as API client secrets).
 * - console_sessions: a signed-in browser; the cookie carries a random id, the store keeps only its
 *   SHA-256, the CSRF token of the session, and when it expires.
 * - console_audit: every action taken in the console, append-only in use: who, when, what, and
 *   its outcome.
 */
export const consoleTables: StoreMigration = {
  name: '012-console',
  async up(knex, profile) {
    const { timestamp } = profile.types;
    await knex.schema.createTable('console_users', (t) => {
      t.text('name').primary();
      t.text('role').notNullable();
      t.text('kdf').notNullable();
      t.text('salt').notNullable();
      t.text('hash').notNullable();
      t.specificType('created_at', timestamp).notNullable();
      t.specificType('disabled_at', timestamp).nullable();
    });
    await knex.schema.createTable('console_sessions', (t) => {
      t.text('id_hash').primary();
      t.text('user_name').notNullable().references('name').inTable('console_users');
      t.text('csrf').notNullable();
      t.specificType('created_at', timestamp).notNullable();
      t.specificType('expires_at', timestamp).notNullable();
    });
    await knex.schema.createTable('console_audit', (t) => {
      t.bigIncrements('id').primary();
      t.specificType('at', timestamp).notNullable();
      t.text('user_name').notNullable();
      t.text('action').notNullable();
      t.text('target').notNullable();
      t.text('detail').notNullable();
      t.index(['at']);
    });
  },
};
