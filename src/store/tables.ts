import type { Entity, Variant } from '../types.js';

/** How a spec field is stored: the dialect profile turns each kind into a column type. */
export type ColumnKind = 'text' | 'timestamp' | 'date' | 'decimal' | 'integer';

export interface Column {
  name: string;
  kind: ColumnKind;
}

/** The store table of one entity of one variant: its spec columns and its upsert key (after partner_id). */
export interface EntityTable {
  name: string;
  entity: Entity;
  key: readonly string[];
  columns: readonly Column[];
}

const text = (name: string): Column => ({ name, kind: 'text' });
const timestamp = (name: string): Column => ({ name, kind: 'timestamp' });
const date = (name: string): Column => ({ name, kind: 'date' });
const decimal = (name: string): Column => ({ name, kind: 'decimal' });
const integer = (name: string): Column => ({ name, kind: 'integer' });

const CUSTOMERS: EntityTable = {
  name: 'customers',
  entity: 'customers',
  key: ['customer_id'],
  columns: [
    text('customer_id'), timestamp('signup_date'), text('affiliate_id'), timestamp('last_modified_date'),
    text('campaign_id'), text('click_id'), text('lang_id'), text('country_code'), text('kyc_status_id'),
    text('sales_status_id'), text('first_name'), text('last_name'), text('email'),
    // prop trading only; NULL for iGaming customers
    text('challenge_type'), text('phase'), decimal('account_size'),
  ],
};

const TRANSACTIONS: EntityTable = {
  name: 'transactions',
  entity: 'transactions',
  key: ['transaction_id'],
  columns: [
    text('transaction_id'), text('customer_id'), text('transaction_type'), decimal('amount_currency'),
    text('currency'), timestamp('transaction_date'), text('status'), decimal('amount_usd'),
    text('transaction_subtype'), text('note'),
  ],
};

const GAMING_ACTIVITY: EntityTable = {
  name: 'gaming_activity',
  entity: 'activity',
  key: ['date', 'customer_id', 'game_type', 'currency'],
  columns: [
    date('date'), text('customer_id'), text('game_type'), text('currency'), integer('bets_count'),
    decimal('total_bets'), decimal('wins'), decimal('ggr'), decimal('ngr'),
  ],
};

const TRADING_ACTIVITY: EntityTable = {
  name: 'trading_activity',
  entity: 'activity',
  key: ['date', 'customer_id', 'instrument', 'currency'],
  columns: [
    date('date'), text('customer_id'), text('instrument'), decimal('lots_traded'), decimal('pnl'),
    text('currency'), decimal('drawdown'), decimal('max_drawdown'),
  ],
};

const TABLES: Record<Variant, Record<Entity, EntityTable>> = {
  igaming: { customers: CUSTOMERS, transactions: TRANSACTIONS, activity: GAMING_ACTIVITY },
  'prop-trading': { customers: CUSTOMERS, transactions: TRANSACTIONS, activity: TRADING_ACTIVITY },
};

export function entityTable(variant: Variant, entity: Entity): EntityTable {
  return TABLES[variant][entity];
}

/** Tables whose rows carry a version: activity is replaced per day and has no change stamp. */
export const VERSION_COLUMN = 'source_version';
export const isVersioned = (table: EntityTable): boolean => table.entity === 'customers' || table.entity === 'transactions';
