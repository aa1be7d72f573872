import type { StoreMigration } from './migration.js';

/**
 * The process that started a run (`host:pid`), so that a run left `running` by a process that
 * ended without closing it (killed, or its store failing under it) is told apart from one still
 * going, and closed as failed by the next run of its stream (src/store/runs.ts). Runs started
 * before this migration have none and are left as they are.
 */
export const runOwner: StoreMigration = {
  name: '026-run-owner',
  async up(knex) {
    await knex.schema.alterTable('runs', (t) => {
      t.text('owner');
    });
  },
};
