import type { Knex } from 'knex';
import type { StoreMigration } from './migration.js';

/**
 * The first schema: the spec's entities scoped by partner, plus sync state, run history,
 * rejects and waiting records. Frozen once released: later changes are new migrations.
 */
export const initial: StoreMigration = {
  name: '001-initial',
  async up(knex, profile) {
    const { decimal, timestamp, date, json } = profile.types;
    type Kind = 'text' | 'timestamp' | 'date' | 'decimal' | 'integer';
    const add = (t: Knex.CreateTableBuilder, name: string, kind: Kind, required = false): void => {
      const col =
        kind === 'text' ? t.text(name)
        : kind === 'integer' ? t.bigInteger(name)
        : t.specificType(name, kind === 'decimal' ? decimal : kind === 'date' ? date : timestamp);
      if (required) col.notNullable();
      else col.nullable();
    };
    const lineage = (t: Knex.CreateTableBuilder): void => {
      add(t, 'run_id', 'text');
      add(t, 'loaded_at', 'timestamp', true);
    };

    await knex.schema.createTable('partners', (t) => {
      t.text('partner_id').primary();
      t.text('variant').notNullable();
      add(t, 'created_at', 'timestamp', true);
    });

    await knex.schema.createTable('customers', (t) => {
      add(t, 'partner_id', 'text', true);
      add(t, 'customer_id', 'text', true);
      add(t, 'signup_date', 'timestamp', true);
      add(t, 'affiliate_id', 'text', true);
      add(t, 'last_modified_date', 'timestamp');
      for (const c of ['campaign_id', 'click_id', 'lang_id', 'country_code', 'kyc_status_id', 'sales_status_id',
        'first_name', 'last_name', 'email', 'challenge_type', 'phase']) add(t, c, 'text');
      add(t, 'account_size', 'decimal');
      lineage(t);
      t.primary(['partner_id', 'customer_id']);
      t.index(['partner_id', 'affiliate_id']);
    });

    await knex.schema.createTable('transactions', (t) => {
      add(t, 'partner_id', 'text', true);
      add(t, 'transaction_id', 'text', true);
      add(t, 'customer_id', 'text', true);
      add(t, 'transaction_type', 'text', true);
      add(t, 'amount_currency', 'decimal', true);
      add(t, 'currency', 'text', true);
      add(t, 'transaction_date', 'timestamp', true);
      add(t, 'status', 'text', true);
      add(t, 'amount_usd', 'decimal');
      add(t, 'transaction_subtype', 'text');
      add(t, 'note', 'text');
      lineage(t);
      t.primary(['partner_id', 'transaction_id']);
      t.index(['partner_id', 'customer_id']);
      t.index(['partner_id', 'transaction_date']);
    });

    await knex.schema.createTable('gaming_activity', (t) => {
      add(t, 'partner_id', 'text', true);
      add(t, 'date', 'date', true);
      add(t, 'customer_id', 'text', true);
      add(t, 'game_type', 'text', true);
      add(t, 'currency', 'text', true);
      add(t, 'bets_count', 'integer');
      for (const c of ['total_bets', 'wins', 'ggr', 'ngr']) add(t, c, 'decimal');
      lineage(t);
      t.primary(['partner_id', 'date', 'customer_id', 'game_type', 'currency']);
      t.index(['partner_id', 'customer_id']);
    });

    await knex.schema.createTable('trading_activity', (t) => {
      add(t, 'partner_id', 'text', true);
      add(t, 'date', 'date', true);
      add(t, 'customer_id', 'text', true);
      add(t, 'instrument', 'text', true);
      add(t, 'lots_traded', 'decimal', true);
      add(t, 'pnl', 'decimal', true);
      add(t, 'currency', 'text', true);
      add(t, 'drawdown', 'decimal');
      add(t, 'max_drawdown', 'decimal');
      lineage(t);
      t.primary(['partner_id', 'date', 'customer_id', 'instrument', 'currency']);
      t.index(['partner_id', 'customer_id']);
    });

    // Valid transaction/activity records whose customer is not in the store yet.
    await knex.schema.createTable('waiting_records', (t) => {
      add(t, 'partner_id', 'text', true);
      add(t, 'entity', 'text', true);
      add(t, 'record_key', 'text', true);
      add(t, 'customer_id', 'text', true);
      t.specificType('record', json).notNullable();
      add(t, 'run_id', 'text');
      add(t, 'first_seen_at', 'timestamp', true);
      add(t, 'last_seen_at', 'timestamp', true);
      t.primary(['partner_id', 'entity', 'record_key']);
      t.index(['partner_id', 'customer_id']);
    });

    await knex.schema.createTable('rejects', (t) => {
      t.increments('id').primary();
      add(t, 'partner_id', 'text', true);
      add(t, 'variant', 'text', true);
      add(t, 'entity', 'text', true);
      // sha256 of the raw payload: the same bad record seen again is one reject, not two
      add(t, 'payload_hash', 'text', true);
      add(t, 'payload', 'text', true);
      t.specificType('errors', json).notNullable();
      add(t, 'position', 'integer');
      add(t, 'run_id', 'text');
      add(t, 'status', 'text', true);
      add(t, 'first_seen_at', 'timestamp', true);
      add(t, 'last_seen_at', 'timestamp', true);
      add(t, 'resolved_at', 'timestamp');
      t.unique(['partner_id', 'entity', 'payload_hash']);
      t.index(['partner_id', 'status']);
    });

    await knex.schema.createTable('sync_state', (t) => {
      add(t, 'partner_id', 'text', true);
      add(t, 'stream', 'text', true);
      t.specificType('state', json).notNullable();
      add(t, 'run_id', 'text');
      add(t, 'updated_at', 'timestamp', true);
      t.primary(['partner_id', 'stream']);
    });

    await knex.schema.createTable('runs', (t) => {
      t.text('id').primary();
      add(t, 'partner_id', 'text', true);
      add(t, 'stream', 'text', true);
      add(t, 'kind', 'text', true);
      add(t, 'status', 'text', true);
      add(t, 'started_at', 'timestamp', true);
      add(t, 'finished_at', 'timestamp');
      add(t, 'window_from', 'text');
      add(t, 'window_to', 'text');
      for (const c of ['pulled', 'valid', 'rejected', 'loaded', 'waiting', 'released', 'retries', 'throttled', 'duration_ms']) {
        t.bigInteger(c).notNullable().defaultTo(0);
      }
      add(t, 'final_cursor', 'text');
      add(t, 'error', 'text');
      t.index(['partner_id', 'stream', 'started_at']);
    });
  },
};
