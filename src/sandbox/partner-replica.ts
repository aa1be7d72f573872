/**
 * A partner-style replica: the sandbox's data, in the partner style of partner-style.ts, as the
 * tables of a partner database with camelCase columns, BIGINT ids, epoch-millisecond business
 * times, amounts in cents and numeric codes: for iGaming players, payments, daily_gaming; for prop
 * trading traders (stage codes, account sizes in thousands), trader_payments, daily_trading. Written as SQL
 * statements for MariaDB/MySQL, PostgreSQL or SQLite; `scripts/partner-replica.ts` prints them
 * (samples/partner-replica/ holds a generated MariaDB file) and the onboarding tests load them.
 *
 * Change stamps (lastUpdate, updatedAt) are date-time columns with an index (stamp, id): the
 * keyset a db stream pages by.
 */
import type { Variant } from '../types.js';
import type { SandboxData } from './data.js';
import { toPartnerStyle } from './partner-style.js';

export type ReplicaClient = 'mysql' | 'postgres' | 'sqlite';

interface Column {
  name: string;
  type: 'bigint' | 'int' | 'text' | 'code' | 'stamp' | 'date' | 'decimal';
  nullable?: boolean;
}

interface ReplicaTable {
  name: string;
  entity: 'customers' | 'transactions' | 'activity';
  columns: Column[];
  key: string[];
  index?: string[];
}

/** The columns both variants' customer tables share after their id (a player or a trader). */
const PERSON_COLUMNS: ReplicaTable['columns'] = [
      { name: 'signupTime', type: 'bigint' },
      { name: 'affiliateCode', type: 'code' },
      { name: 'lastUpdate', type: 'stamp' },
      { name: 'campaignId', type: 'text', nullable: true },
      { name: 'clickId', type: 'text', nullable: true },
      { name: 'language', type: 'code', nullable: true },
      { name: 'country', type: 'code', nullable: true },
      { name: 'firstName', type: 'text', nullable: true },
      { name: 'lastName', type: 'text', nullable: true },
      { name: 'emailAddress', type: 'text', nullable: true },
      { name: 'kycStatus', type: 'int', nullable: true },
];

/** The columns both variants' payment tables share after the payment's and the customer's ids. */
const PAYMENT_COLUMNS: ReplicaTable['columns'] = [
      { name: 'type', type: 'code' },
      { name: 'amountCents', type: 'bigint' },
      { name: 'currencyCode', type: 'code' },
      { name: 'createdAt', type: 'bigint' },
      { name: 'statusCode', type: 'int' },
      { name: 'usdAmount', type: 'decimal', nullable: true },
      { name: 'method', type: 'code', nullable: true },
      { name: 'comment', type: 'text', nullable: true },
      { name: 'updatedAt', type: 'stamp' },
];

const IGAMING_TABLES: ReplicaTable[] = [
  {
    name: 'players',
    entity: 'customers',
    columns: [
      { name: 'playerId', type: 'bigint' },
      ...PERSON_COLUMNS,
      { name: 'salesStage', type: 'code', nullable: true },
    ],
    key: ['playerId'],
    index: ['lastUpdate', 'playerId'],
  },
  {
    name: 'payments',
    entity: 'transactions',
    columns: [
      { name: 'txId', type: 'bigint' },
      { name: 'playerId', type: 'bigint' },
      ...PAYMENT_COLUMNS,
    ],
    key: ['txId'],
    index: ['updatedAt', 'txId'],
  },
  {
    name: 'daily_gaming',
    entity: 'activity',
    columns: [
      { name: 'day', type: 'date' },
      { name: 'playerId', type: 'bigint' },
      { name: 'gameCategory', type: 'code' },
      { name: 'currencyCode', type: 'code' },
      { name: 'betCount', type: 'int' },
      { name: 'betsCents', type: 'bigint' },
      { name: 'winsCents', type: 'bigint' },
      { name: 'ggrCents', type: 'bigint' },
      { name: 'ngrCents', type: 'bigint' },
    ],
    key: ['day', 'playerId', 'gameCategory', 'currencyCode'],
  },
];

const PROP_TABLES: ReplicaTable[] = [
  {
    name: 'traders',
    entity: 'customers',
    columns: [
      { name: 'traderId', type: 'bigint' },
      ...PERSON_COLUMNS,
      { name: 'plan', type: 'code', nullable: true },
      { name: 'stage', type: 'code', nullable: true },
      { name: 'accountSizeK', type: 'int', nullable: true },
      { name: 'salesStage', type: 'code', nullable: true },
    ],
    key: ['traderId'],
    index: ['lastUpdate', 'traderId'],
  },
  {
    name: 'trader_payments',
    entity: 'transactions',
    columns: [
      { name: 'txId', type: 'bigint' },
      { name: 'traderId', type: 'bigint' },
      ...PAYMENT_COLUMNS,
    ],
    key: ['txId'],
    index: ['updatedAt', 'txId'],
  },
  {
    name: 'daily_trading',
    entity: 'activity',
    columns: [
      { name: 'day', type: 'date' },
      { name: 'traderId', type: 'bigint' },
      { name: 'instrument', type: 'code' },
      { name: 'currencyCode', type: 'code' },
      { name: 'lotsX100', type: 'bigint' },
      { name: 'pnlCents', type: 'bigint' },
      { name: 'drawdownCents', type: 'bigint', nullable: true },
      { name: 'maxDrawdownCents', type: 'bigint', nullable: true },
    ],
    key: ['day', 'traderId', 'instrument', 'currencyCode'],
  },
];

/** The replica's tables for a variant. */
export const REPLICA_TABLES: Record<Variant, ReplicaTable[]> = { igaming: IGAMING_TABLES, 'prop-trading': PROP_TABLES };

const TYPES: Record<ReplicaClient, Record<Column['type'], string>> = {
  mysql: { bigint: 'BIGINT', int: 'INT', text: 'VARCHAR(255)', code: 'VARCHAR(40)', stamp: 'DATETIME(6)', date: 'DATE', decimal: 'DECIMAL(15,2)' },
  postgres: { bigint: 'bigint', int: 'integer', text: 'varchar(255)', code: 'varchar(40)', stamp: 'timestamp(6)', date: 'date', decimal: 'numeric(15,2)' },
  sqlite: { bigint: 'BIGINT', int: 'INTEGER', text: 'TEXT', code: 'TEXT', stamp: 'DATETIME', date: 'DATE', decimal: 'DECIMAL(15,2)' },
};

const quote = (client: ReplicaClient, name: string): string => (client === 'mysql' ? `\`${name}\`` : `"${name}"`);

function literal(value: unknown, column: Column): string {
  if (value === undefined || value === null) return 'NULL';
  if (column.type === 'stamp' && (typeof value === 'string' || typeof value === 'number')) {
    // A zone-less UTC date-time with microseconds, as a replica in UTC holds it (from ISO text or epoch milliseconds).
    const utc = new Date(typeof value === 'number' ? value : Date.parse(value)).toISOString();
    const fraction = /\.(\d+)/.exec(typeof value === 'number' ? utc : value)?.[1] ?? '';
    return `'${utc.slice(0, 19).replace('T', ' ')}.${(fraction + '000000').slice(0, 6)}'`;
  }
  if (typeof value === 'number') return String(value);
  return `'${String(value).replace(/'/g, "''")}'`;
}

/** The statements creating and filling the replica (drops first, so it can be applied again). */
export function partnerReplicaSql(client: ReplicaClient, data: SandboxData, variant: Variant = 'igaming'): string[] {
  const q = (name: string) => quote(client, name);
  const statements: string[] = [];
  const tables = REPLICA_TABLES[variant];
  for (const table of [...tables].reverse()) statements.push(`DROP TABLE IF EXISTS ${q(table.name)}`);
  for (const table of tables) {
    const columns = table.columns.map((c) => `  ${q(c.name)} ${TYPES[client][c.type]}${c.nullable ? '' : ' NOT NULL'}`);
    statements.push(`CREATE TABLE ${q(table.name)} (\n${columns.join(',\n')},\n  PRIMARY KEY (${table.key.map(q).join(', ')})\n)`);
    if (table.index) statements.push(`CREATE INDEX ${q(`${table.name}_${table.index[0]}`)} ON ${q(table.name)} (${table.index.map(q).join(', ')})`);
    const records =
      table.entity === 'customers' ? data.customers(variant)
      : table.entity === 'transactions' ? data.transactions(variant)
      : data.activity(variant);
    const rows = records.map((r) => {
      const partner = toPartnerStyle(table.entity, r, variant);
      return `(${table.columns.map((c) => literal(partner[c.name], c)).join(', ')})`;
    });
    for (let i = 0; i < rows.length; i += 200) {
      statements.push(`INSERT INTO ${q(table.name)} (${table.columns.map((c) => q(c.name)).join(', ')}) VALUES\n${rows.slice(i, i + 200).join(',\n')}`);
    }
  }
  return statements;
}
