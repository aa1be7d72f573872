import type { StoreKind } from '../dialects.js';
import type { StoreMigration } from './index.js';

/**
 * Fraud-pattern detection (docs/fraud.md):
 * - fraud_flags: one row per pattern instance (partner, rule, instance_key), updated as more data
 *   arrives, never duplicated. `evidence` is JSON text: the rows and the computed numbers.
 *   status open | confirmed | dismissed; a decision keeps who, when and why. `unsupported_since`
 *   is set when a later evaluation no longer finds the pattern in the data (the flag stays).
 * - fraud_flag_customers: the customers a flag concerns (their commissions are held for review).
 * - fraud_decisions: every decision, append-only (triggers refuse UPDATE and DELETE).
 * - fraud_pending: what committed batches touched and detection has not evaluated yet, so a crash
 *   between a batch's commit and its evaluation loses nothing.
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

    await knex.schema.createTable('fraud_pending', (t) => {
      t.text('partner_id').notNullable();
      t.text('variant').notNullable();
      // customer (value: customer id) | affiliate_day (value: JSON [affiliate id, date])
      t.text('kind').notNullable();
      t.text('value').notNullable();
      t.specificType('created_at', timestamp).notNullable();
      t.primary(['partner_id', 'kind', 'value']);
    });
  },
};
