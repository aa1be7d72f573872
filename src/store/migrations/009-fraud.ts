import type { StoreKind } from '../dialects.js';
import type { StoreMigration } from './migration.js';

/**
 * Fraud-pattern detection (docs/fraud.md):
 * - fraud_flags: one row per pattern instance (partner, rule, instance_key), updated as more data
 *   arrives, never duplicated. `evidence` is JSON text: the rows and the computed numbers.
 *   status open | confirmed | dismissed; a decision keeps who, when and why. `unsupported_since`
 *   is set when a later evaluation no longer finds the pattern in the data (the flag stays).
 * - fraud_flag_customers: the customers a flag concerns (their commissions are held for review).
 * - fraud_decisions: every decision, append-only (triggers refuse UPDATE and DELETE).
 * - fraud_customers, fraud_customer_days, fraud_identities, fraud_active_days: what detection
 *   derives per customer (first deposit, days to funded; per day deposits, reversals, refunds after
 *   a fee; normalized identity keys; the days with activity), re-derived from the customer's rows whenever a batch touches it, so
 *   the per-affiliate and per-identity rules read a few indexed rows instead of the history.
 *   Detection writes these and the flags in the load's own transaction: a batch and its flags
 *   commit together, so a crash loses neither.
 */
const APPEND_ONLY: Record<StoreKind, string[]> = {
  sqlite: [
    `CREATE TRIGGER fraud_decisions_no_update BEFORE UPDATE ON fraud_decisions
       BEGIN SELECT RAISE(ABORT, 'fraud_decisions is append-only'); END`,
    `CREATE TRIGGER fraud_decisions_no_delete BEFORE DELETE ON fraud_decisions
       BEGIN SELECT RAISE(ABORT, 'fraud_decisions is append-only'); END`,
  ],
  postgres: [
    `CREATE FUNCTION fraud_decisions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'fraud_decisions is append-only'; END $$`,
    `CREATE TRIGGER fraud_decisions_append_only BEFORE UPDATE OR DELETE ON fraud_decisions
       FOR EACH ROW EXECUTE FUNCTION fraud_decisions_append_only()`,
  ],
};

export const fraud: StoreMigration = {
  name: '009-fraud',
  async up(knex, profile) {
    const { timestamp } = profile.types;

    await knex.schema.createTable('fraud_flags', (t) => {
      t.bigIncrements('id').primary();
      t.text('partner_id').notNullable();
      t.text('variant').notNullable();
      t.text('rule').notNullable();
      // What identifies this instance of the pattern within its rule (docs/fraud.md, per rule).
      t.text('instance_key').notNullable();
      t.text('affiliate_id').nullable();
      // low | medium | high
      t.text('severity').notNullable();
      // open | confirmed | dismissed
      t.text('status').notNullable();
      t.text('evidence').notNullable();
      t.specificType('first_seen', timestamp).notNullable();
      t.specificType('last_seen', timestamp).notNullable();
      t.specificType('unsupported_since', timestamp).nullable();
      t.text('decided_by').nullable();
      t.specificType('decided_at', timestamp).nullable();
      t.text('decision_reason').nullable();
      t.unique(['partner_id', 'rule', 'instance_key']);
      t.index(['partner_id', 'status']);
      t.index(['partner_id', 'affiliate_id']);
    });

    await knex.schema.createTable('fraud_flag_customers', (t) => {
      t.bigInteger('flag_id').notNullable();
      t.text('partner_id').notNullable();
      t.text('customer_id').notNullable();
      t.primary(['flag_id', 'customer_id']);
      t.index(['partner_id', 'customer_id']);
    });

    await knex.schema.createTable('fraud_decisions', (t) => {
      t.bigIncrements('id').primary();
      t.bigInteger('flag_id').notNullable();
      // confirmed | dismissed
      t.text('decision').notNullable();
      t.text('by').notNullable();
      t.specificType('at', timestamp).notNullable();
      t.text('reason').notNullable();
      // The flag's evidence as it stood when decided (detection may update it later).
      t.text('evidence').notNullable();
      t.index(['flag_id']);
    });
    for (const sql of APPEND_ONLY[profile.kind]) await knex.raw(sql);

    await knex.schema.createTable('fraud_customers', (t) => {
      t.text('partner_id').notNullable();
      t.text('customer_id').notNullable();
      t.text('affiliate_id').notNullable();
      // The first approved deposit: its UTC day, USD amount (NULL without a rate) and whether it looks farmed (0/1, NULL unknown).
      t.text('ftd_date').nullable();
      t.text('ftd_usd').nullable();
      t.integer('farmed').nullable();
      // Prop trading: days from signup to the record that shows phase funded (NULL when not funded).
      t.double('funded_days').nullable();
      t.primary(['partner_id', 'customer_id']);
      t.index(['partner_id', 'affiliate_id', 'ftd_date']);
    });

    await knex.schema.createTable('fraud_customer_days', (t) => {
      t.text('partner_id').notNullable();
      t.text('customer_id').notNullable();
      t.text('date').notNullable();
      t.text('affiliate_id').notNullable();
      t.integer('deposits').notNullable();
      t.integer('reversals').notNullable();
      t.integer('refunds').notNullable();
      t.primary(['partner_id', 'customer_id', 'date']);
      t.index(['partner_id', 'affiliate_id', 'date']);
    });

    // Who has activity on which day: a replaced activity day re-evaluates the customers it had.
    await knex.schema.createTable('fraud_active_days', (t) => {
      t.text('partner_id').notNullable();
      t.text('date').notNullable();
      t.text('customer_id').notNullable();
      t.primary(['partner_id', 'date', 'customer_id']);
    });

    await knex.schema.createTable('fraud_identities', (t) => {
      t.text('partner_id').notNullable();
      t.text('customer_id').notNullable();
      // email | name | click
      t.text('kind').notNullable();
      t.text('value').notNullable();
      t.primary(['partner_id', 'customer_id', 'kind']);
      t.index(['partner_id', 'kind', 'value']);
    });

    // The wagering of a customer's few windows is read by customer and day range.
    await knex.schema.alterTable('gaming_activity', (t) => {
      t.index(['partner_id', 'customer_id', 'date'], 'gaming_activity_fraud_customer_day');
    });
    // Mirrored and copied trading compare accounts on one instrument and day.
    await knex.schema.alterTable('trading_activity', (t) => {
      t.index(['partner_id', 'instrument', 'date'], 'trading_activity_fraud_instrument_day');
    });
  },
};
