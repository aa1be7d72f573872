import type { StoreMigration } from './migration.js';

/**
 * The push side of the HTTP API:
 * - push_idempotency: one row per (client, Idempotency-Key): a hash of the request it answered and
 *   the answer (status, body), written in the same transaction as the request's records, so a
 *   repeat within 24 hours returns the same answer and writes nothing. Expired rows are purged.
 * - push_streams: per (partner, entity), when a push last delivered records, how many in all, and
 *   for activity the latest day pushed: what `status` and the freshness monitor read for pushed
 *   streams (a pulled stream keeps its state in sync_state).
 */
export const push: StoreMigration = {
  name: '006-push',
  async up(knex, profile) {
    const { timestamp, date } = profile.types;
    await knex.schema.createTable('push_idempotency', (t) => {
      t.text('client_id').notNullable();
      t.text('idempotency_key').notNullable();
      t.text('request_hash').notNullable();
      t.integer('status').notNullable();
      t.text('body').notNullable();
      t.specificType('created_at', timestamp).notNullable();
      t.specificType('expires_at', timestamp).notNullable();
      t.primary(['client_id', 'idempotency_key']);
      t.index(['expires_at']);
    });
    await knex.schema.createTable('push_streams', (t) => {
      t.text('partner_id').notNullable();
      t.text('entity').notNullable();
      t.specificType('first_received_at', timestamp).notNullable();
      t.specificType('last_received_at', timestamp).notNullable();
      t.bigInteger('records').notNullable().defaultTo(0);
      t.specificType('last_day', date).nullable();
      t.primary(['partner_id', 'entity']);
    });
  },
};
