import type { StoreMigration } from './migration.js';

/**
 * Record versions and the reject lifecycle.
 * - customers, transactions: `source_version`, the version a stored row was loaded at (the
 *   customer's last_modified_date, or the source's cursor value such as a transaction's
 *   updated_at), as a UTC text that sorts chronologically (../versions.ts). An older version never
 *   overwrites it.
 * - waiting_records: the same version of a parked record, so an older one cannot replace it.
 * - runs: `stale`, records not applied because the store held a newer version of their key.
 * - rejects: the record key and version when they can be read, and how a reject was closed
 *   (resolution loaded | replayed | superseded | discarded, the run, who and why for a discard).
 *   Status is now open | resolved; earlier `replayed` rows become resolved by replay.
 */
export const versionsAndRejectLifecycle: StoreMigration = {
  name: '004-versions-and-reject-lifecycle',
  async up(knex, profile) {
    // Versions compare as text: byte order, whatever the database's default collation.
    const versionText = profile.kind === 'postgres' ? 'text COLLATE "C"' : 'text';
    for (const table of ['customers', 'transactions']) {
      await knex.schema.alterTable(table, (t) => {
        t.specificType('source_version', versionText).nullable();
      });
    }
    await knex.schema.alterTable('waiting_records', (t) => {
      t.specificType('version', versionText).nullable();
    });
    await knex.schema.alterTable('runs', (t) => {
      t.bigInteger('stale').notNullable().defaultTo(0);
    });
    await knex.schema.alterTable('rejects', (t) => {
      t.text('record_key').nullable();
      t.specificType('version', versionText).nullable();
      t.text('resolution').nullable();
      t.text('resolved_run_id').nullable();
      t.text('resolved_by').nullable();
      t.text('resolution_reason').nullable();
      t.index(['partner_id', 'entity', 'record_key']);
    });
    await knex('rejects').where('status', 'replayed').update({ status: 'resolved', resolution: 'replayed' });
  },
};
