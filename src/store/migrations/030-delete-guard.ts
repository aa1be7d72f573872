import type { StoreMigration } from './migration.js';

/**
 * What stands between a delete learned at the source and the ledger (docs/loading.md, Deletes):
 * - delete_holds: deletes the mass-delete guard held instead of applying (a run, reconcile or
 *   push that would have deleted more than the guard's share of a partner's customers or of a
 *   day's transactions). `ids` is the JSON array of the record ids held; `scope` is what the
 *   guard counted over (a run id, or the UTC day of pushed deletes); `state` is held, applied or
 *   discarded, decided by an operator (`partner-sync deletes apply|discard`), who is recorded.
 *   `alerted_at` is when the worker's alert went out.
 * - delete_candidates: keys a reconcile scan found in the store and not at the source. Such a key
 *   becomes a delete only when the next scan finds it missing again; a scan replaces the
 *   entity's candidates, so a key one scan missed (an outage, a page fault) deletes nothing.
 * - tombstones.record_day: the record's business day (a transaction's date, a customer's signup
 *   date), which the guard counts a day's deletes by.
 * - tombstones.restored_at: when a deleted customer sent again brought this tombstone's row back
 *   (a transaction or activity row that went with it), or when the customer itself came back.
 * - runs.deletes_held: records of the run whose deletes the guard held.
 * Plain schema, frozen here.
 */
export const deleteGuard: StoreMigration = {
  name: '030-delete-guard',
  async up(knex, profile) {
    const { timestamp, json } = profile.types;
    await knex.schema.createTable('delete_holds', (t) => {
      t.bigIncrements('id').primary();
      t.text('partner_id').notNullable();
      t.text('variant').notNullable();
      t.text('entity').notNullable();
      t.text('learned_via').notNullable();
      t.text('scope').notNullable();
      t.text('run_id').nullable();
      t.specificType('held_at', timestamp).notNullable();
      t.text('reason').notNullable();
      t.specificType('ids', json).notNullable();
      t.integer('count').notNullable();
      t.text('state').notNullable();
      t.specificType('decided_at', timestamp).nullable();
      t.text('decided_by').nullable();
      t.specificType('outcome', json).nullable();
      t.specificType('alerted_at', timestamp).nullable();
      t.index(['partner_id', 'state']);
      t.index(['partner_id', 'entity', 'scope']);
    });
    await knex.schema.createTable('delete_candidates', (t) => {
      t.text('partner_id').notNullable();
      t.text('entity').notNullable();
      t.text('record_id').notNullable();
      t.text('day').notNullable();
      t.specificType('first_seen_at', timestamp).notNullable();
      t.integer('scans').notNullable();
      t.primary(['partner_id', 'entity', 'record_id']);
    });
    await knex.schema.alterTable('tombstones', (t) => {
      t.text('record_day').nullable();
      t.specificType('restored_at', timestamp).nullable();
      t.index(['cascade_of']);
    });
    await knex.schema.alterTable('runs', (t) => {
      t.integer('deletes_held').notNullable().defaultTo(0);
    });
  },
};
