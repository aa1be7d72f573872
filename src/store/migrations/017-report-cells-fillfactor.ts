import type { StoreMigration } from './migration.js';

/**
 * The report cells are updated in place by every loaded batch (docs/reports.md: each cell moves by
 * the batch's difference). On PostgreSQL a full page makes each such update write a new row version
 * on another page and a new entry in every index of the table; with room left on each page the
 * update stays on its page and touches no index (a heap-only tuple), which is cheaper per updated
 * cell (docs/reports.md; bench/README.md, Reports). Pages written from now on keep 30% free; a store's existing
 * pages get the room as VACUUM FULL or a facts rebuild rewrites them. SQLite has no such setting.
 */
const CELL_TABLES = ['report_cells', 'report_month_cells', 'report_purchase_cells'] as const;

export const reportCellsFillfactor: StoreMigration = {
  name: '017-report-cells-fillfactor',
  async up(knex, profile) {
    if (profile.kind !== 'postgres') return;
    for (const table of CELL_TABLES) await knex.raw('ALTER TABLE ?? SET (fillfactor = 70)', [table]);
  },
};
