import type { StoreMigration } from './migration.js';

/**
 * The deliverer claims a postback's unsettled events in seq order. Without an index of just those,
 * the claim walks every delivered event before them: its cost grew with the outbox's history
 * (bench/README.md, Postbacks). A partial index holds only the pending and
 * retrying ones, on both stores.
 */
export const postbackUnsettledIndex: StoreMigration = {
  name: '021-postback-unsettled-index',
  async up(knex) {
    await knex.raw(`CREATE INDEX postback_events_unsettled ON postback_events (postback_id, seq) WHERE state IN ('pending', 'retrying')`);
  },
};
