import type { StoreMigration } from './migration.js';

/**
 * Erasures of one person's personal data (src/privacy/erase.ts, docs/personal-data.md): which
 * customer of which partner, who asked, through which face, when, and how many rows of each table
 * were touched; never the values erased. The row is also what a later load reads to drop the
 * personal fields of that customer at ingest (`runs.erased` counts the records it did so for).
 */
export const erasures: StoreMigration = {
  name: '028-erasures',
  async up(knex, profile) {
    await knex.schema.createTable('erasures', (t) => {
      t.bigIncrements('id').primary();
      t.text('partner_id').notNullable();
      t.text('customer_id').notNullable();
      t.text('requested_by').notNullable();
      t.text('via').notNullable();
      t.specificType('erased_at', profile.types.timestamp).notNullable();
      t.text('tables').notNullable();
      t.index(['partner_id', 'customer_id']);
    });
    await knex.schema.alterTable('runs', (t) => {
      t.integer('erased').notNullable().defaultTo(0);
    });
  },
};
