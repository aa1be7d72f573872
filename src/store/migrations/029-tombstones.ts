import type { StoreMigration } from './migration.js';

/**
 * Records deleted at the source (docs/loading.md, Deletes). A delete moves the row out of its live
 * table into `tombstones`, so it leaves every list, report, funnel and export without any of their
 * queries knowing of deletes; the row is kept whole (`row`, JSON) for the audit and for what a job
 * reads of it. A record sent again loads as a new version into the live table; its tombstone stays.
 * - learned_via: how the delete was learned ('push', 'soft_delete', 'rest_flag', 'reconcile').
 * - cascade_of: the tombstone of the deleted customer a transaction or activity row went with.
 * - record_key: the row's key as the waiting records keep it (src/store/rows.ts recordKey: the id,
 *   or the JSON array of a composite key).
 * - runs: `deleted`, records a run's source said were deleted (a soft-delete column or flag),
 *   applied as deletes.
 * Plain schema, frozen here.
 */
export const tombstones: StoreMigration = {
  name: '029-tombstones',
  async up(knex, profile) {
    const { timestamp, json } = profile.types;
    await knex.schema.createTable('tombstones', (t) => {
      t.bigIncrements('id').primary();
      t.text('partner_id').notNullable();
      t.text('variant').notNullable();
      t.text('entity').notNullable();
      t.text('record_key').notNullable();
      t.text('customer_id').notNullable();
      t.text('learned_via').notNullable();
      t.specificType('learned_at', timestamp).notNullable();
      t.text('run_id').nullable();
      t.bigInteger('cascade_of').nullable();
      t.specificType('row', json).notNullable();
      t.index(['partner_id', 'entity', 'record_key']);
      t.index(['partner_id', 'customer_id']);
    });
    await knex.schema.alterTable('runs', (t) => {
      t.bigInteger('deleted').notNullable().defaultTo(0);
    });
  },
};
