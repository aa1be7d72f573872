import type { StoreMigration } from './migration.js';

/**
 * Postbacks to affiliates' trackers (docs/postbacks.md). Plain schema, frozen here: nothing of
 * src/postbacks/ is imported, so the code may change without changing what this migration did.
 * - postbacks: the definitions, one per (affiliate, optional campaign, event kinds, URL). The
 *   signing secret is NOT stored: `secret_salt` is random, and the secret is derived from it with
 *   a key held in the environment (POSTBACK_SECRET_KEY), so the store file alone reveals nothing
 *   a receiver would accept. `removed_at` keeps a removed definition for its event log.
 * - postback_events: the outbox, one row per (definition, fact), written in the transaction of the
 *   change that causes it. UNIQUE (postback_id, fact_key) is what makes a fact fire once: a
 *   re-sent, replayed or backfilled record inserts nothing (insert-or-ignore). `seq` orders the
 *   events of one `order_key` (a customer): one is not sent before the earlier ones are settled.
 *   `lease_until`/`lease_token` claim a row for one delivering process; an expired lease (a killed
 *   process) makes it claimable again, with the same event id.
 * - commission_approvals: an affiliate's closed month approved by a manager, once, with the net
 *   of its ledger lines then (what the `commission_approved` postback announces).
 */
export const postbacks: StoreMigration = {
  name: '019-postbacks',
  async up(knex, profile) {
    const { timestamp, json } = profile.types;
    await knex.schema.createTable('postbacks', (t) => {
      t.text('id').primary();
      t.text('affiliate_id').notNullable();
      t.text('campaign_id').nullable();
      // comma-separated event kinds
      t.text('events').notNullable();
      t.text('method').notNullable();
      t.text('url').notNullable();
      t.integer('include_personal').notNullable().defaultTo(0);
      t.integer('allow_private').notNullable().defaultTo(0);
      t.integer('rate_per_second').notNullable();
      t.text('secret_salt').notNullable();
      t.specificType('created_at', timestamp).notNullable();
      t.specificType('removed_at', timestamp).nullable();
      t.index(['affiliate_id']);
    });
    await knex.schema.createTable('postback_events', (t) => {
      t.bigIncrements('seq').primary();
      t.text('event_id').notNullable().unique();
      t.text('postback_id').notNullable().references('id').inTable('postbacks');
      t.text('fact_key').notNullable();
      t.text('kind').notNullable();
      t.text('order_key').notNullable();
      t.text('partner_id').nullable();
      t.text('customer_id').nullable();
      t.text('affiliate_id').notNullable();
      t.specificType('data', json).notNullable();
      // pending | retrying | delivered | dead
      t.text('state').notNullable();
      t.integer('attempts').notNullable().defaultTo(0);
      t.specificType('next_attempt_at', timestamp).notNullable();
      // retries stop this long after window_start (created, or replayed)
      t.specificType('window_start', timestamp).notNullable();
      t.specificType('lease_until', timestamp).nullable();
      t.text('lease_token').nullable();
      t.integer('last_status').nullable();
      t.text('last_error').nullable();
      t.specificType('last_attempt_at', timestamp).nullable();
      t.specificType('created_at', timestamp).notNullable();
      t.specificType('delivered_at', timestamp).nullable();
      t.unique(['postback_id', 'fact_key']);
      t.index(['state', 'next_attempt_at']);
      t.index(['postback_id', 'order_key', 'seq']);
    });
    await knex.schema.createTable('commission_approvals', (t) => {
      t.text('affiliate_id').notNullable();
      t.text('month').notNullable();
      t.specificType('net_usd', profile.types.decimal).notNullable();
      t.integer('lines').notNullable();
      t.text('approved_by').notNullable();
      t.specificType('approved_at', timestamp).notNullable();
      t.primary(['affiliate_id', 'month']);
    });
  },
};
