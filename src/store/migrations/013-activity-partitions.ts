import type { Knex } from 'knex';
import type { StoreMigration } from './migration.js';
import type { Clock } from '../../kernel/clock.js';

/**
 * PostgreSQL: the activity tables become partitioned by month (RANGE on `date`, one partition per
 * UTC month, ../partitions.ts), so replacing a day, vacuuming and reading a month touch one
 * month's table and indexes, never the whole history. The rows are moved in this migration
 * (renamed table, new partitioned one, INSERT ... SELECT, old one dropped); the indexes are built
 * after the rows are in, under the same names.
 *
 * Both stores: `gaming_activity (partner_id, customer_id)` is dropped. Migration 009's
 * `(partner_id, customer_id, date)` serves every query it served (same leading columns), and
 * each index is maintained on every row a load writes.
 */
const TABLES: { name: string; key: string[]; indexes: { name: string; columns: string[] }[] }[] = [
  {
    name: 'gaming_activity',
    key: ['partner_id', 'date', 'customer_id', 'game_type', 'currency'],
    indexes: [{ name: 'gaming_activity_fraud_customer_day', columns: ['partner_id', 'customer_id', 'date'] }],
  },
  {
    name: 'trading_activity',
    key: ['partner_id', 'date', 'customer_id', 'instrument', 'currency'],
    indexes: [
      { name: 'trading_activity_partner_id_customer_id_index', columns: ['partner_id', 'customer_id'] },
      { name: 'trading_activity_fraud_instrument_day', columns: ['partner_id', 'instrument', 'date'] },
    ],
  },
];

// The partition names and bounds of this version, written out here (../partitions.ts keeps the live
// ones; this migration must not change with them).
const partitionName = (table: string, month: string): string => `${table}_p${month.replace('-', '')}`;
const defaultPartitionName = (table: string): string => `${table}_default`;
function nextMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
}

async function partition(knex: Knex, table: (typeof TABLES)[number], clock: Clock): Promise<void> {
  const old = `${table.name}_unpartitioned`;
  await knex.raw('ALTER TABLE ?? RENAME TO ??', [table.name, old]);
  await knex.raw('CREATE TABLE ?? (LIKE ?? INCLUDING DEFAULTS) PARTITION BY RANGE (date)', [table.name, old]);
  const { rows } = (await knex.raw(`SELECT DISTINCT to_char(date, 'YYYY-MM') AS month FROM ?? ORDER BY 1`, [old])) as { rows: { month: string }[] };
  // The months held, and this one with the next two (the worker keeps creating them ahead).
  const months = new Set(rows.map((r) => r.month));
  let month = clock().toISOString().slice(0, 7);
  for (let i = 0; i < 3; i++, month = nextMonth(month)) months.add(month);
  for (const m of [...months].sort()) {
    if (!/^\d{4}-\d{2}$/.test(m)) throw new Error(`not a month: ${m}`);
    // DDL takes no bind parameters: the bounds are literals of a checked month.
    await knex.raw(`CREATE TABLE ?? PARTITION OF ?? FOR VALUES FROM ('${m}-01') TO ('${nextMonth(m)}-01')`, [partitionName(table.name, m), table.name]);
  }
  await knex.raw('INSERT INTO ?? SELECT * FROM ??', [table.name, old]);
  await knex.raw('DROP TABLE ??', [old]);
  // Rows of a month without a partition, from writers that do not create one (../partitions.ts).
  await knex.raw('CREATE TABLE ?? PARTITION OF ?? DEFAULT', [defaultPartitionName(table.name), table.name]);
  const list = (cols: string[]) => cols.map((c) => knex.raw('??', [c]).toQuery()).join(', ');
  await knex.raw(`ALTER TABLE ?? ADD CONSTRAINT ?? PRIMARY KEY (${list(table.key)})`, [table.name, `${table.name}_pkey`]);
  for (const index of table.indexes) await knex.raw(`CREATE INDEX ?? ON ?? (${list(index.columns)})`, [index.name, table.name]);
}

export const activityPartitions: StoreMigration = {
  name: '013-activity-partitions',
  async up(knex, profile, clock) {
    await knex.raw('DROP INDEX IF EXISTS gaming_activity_partner_id_customer_id_index');
    if (profile.kind === 'postgres') for (const table of TABLES) await partition(knex, table, clock);
  },
};
