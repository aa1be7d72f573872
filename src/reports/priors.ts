/**
 * The stored versions of a batch's records as the facts read them: what they counted in is what
 * the facts take out (./incremental.ts). The load transaction reads them once for every job
 * (the batch's change set, src/pipeline/jobs.ts), with the columns named here.
 */
import type { Knex } from 'knex';
import { fromStoreTimestamp } from '../store/values.js';
import { toUtcTimestamp } from '../kernel/timestamp.js';
import type { SpecRecord } from '../types.js';
import { dialectOf } from '../store/dialect/index.js';
import { CHUNK, campaignKey, decimalKey, pairKey, productKey } from './facts-values.js';

/** A stored transaction as the facts read it. */
export interface StoredTransaction {
  id: string;
  customer: string;
  /** transaction_date in UTC (`YYYY-MM-DDTHH:MM:SS.ffffffZ`). */
  at: string;
  /** UTC day of transaction_date. */
  day: string;
  type: string;
  status: string;
  amount_currency: unknown;
  currency: string;
  amount_usd: unknown;
  /** What of it the facts read, as one text (./priors.ts transactionFacts). */
  facts: string;
}

/** The values of an activity row a cell sums. */
export type ActivityValues = { currency: unknown; total_bets: unknown; wins: unknown; ggr: unknown; ngr: unknown };

/** What the stored versions of a batch's records counted in, read before they are replaced. */
export interface PriorVersions {
  /** customer id → its stored attribution, signup day and product. */
  customers: Map<string, { pair: string; signupDay: string; product: string }>;
  /** transaction id → its stored version. */
  transactions: Map<string, StoredTransaction>;
  /** Activity key → its stored version before this batch (null: none). */
  activity: Map<string, ActivityValues | null>;
}

export const emptyPriors = (): PriorVersions => ({ customers: new Map(), transactions: new Map(), activity: new Map() });

/** The columns of a stored transaction the facts read. */
export const TX_READ = ['transaction_id', 'customer_id', 'transaction_date', 'transaction_type', 'status', 'amount_currency', 'currency', 'amount_usd'] as const;

/** The columns of a stored customer its cell and signup day are read from. */
export const CUSTOMER_CELL_COLUMNS = ['customer_id', 'affiliate_id', 'campaign_id', 'signup_date', 'challenge_type', 'account_size'] as const;

/** A stored customer's cell (affiliate, campaign), signup day and product. */
export function customerCell(r: Record<string, unknown>): { pair: string; signupDay: string; product: string } {
  return {
    pair: pairKey(String(r.affiliate_id), campaignKey(r.campaign_id)),
    signupDay: (fromStoreTimestamp(r.signup_date) as string).slice(0, 10),
    product: productKey(r.challenge_type, r.account_size),
  };
}

/** A stored transactions row as the facts read it. */
export function storedTransaction(r: Record<string, unknown>): StoredTransaction {
  const at = fromStoreTimestamp(r.transaction_date) as string;
  const t: StoredTransaction = {
    id: String(r.transaction_id), customer: String(r.customer_id), at, day: at.slice(0, 10), type: String(r.transaction_type), status: String(r.status),
    amount_currency: r.amount_currency, currency: String(r.currency), amount_usd: r.amount_usd, facts: '',
  };
  // A stored version and the version that replaced it with the same text count alike.
  t.facts = [t.customer, t.type, t.status, at, decimalKey(t.amount_currency), t.currency, decimalKey(t.amount_usd)].join('\u0000');
  return t;
}

/**
 * A written transaction record as the store holds it (the Loader writes decimals as their exact
 * text and times as UTC microseconds: the same values a read would give back).
 */
export function writtenTransaction(record: SpecRecord): StoredTransaction {
  return storedTransaction({ ...record, amount_usd: record.amount_usd ?? null, transaction_date: toUtcTimestamp(String(record.transaction_date)) });
}

/** A gaming activity row's key (its primary key without the partner). */
export const activityKey = (r: { customer_id: unknown; date: unknown; game_type: unknown; currency: unknown }): string =>
  `${String(r.customer_id)}\u0000${String(r.date).slice(0, 10)}\u0000${String(r.game_type)}\u0000${String(r.currency)}`;

/** The values of a stored gaming activity row a cell sums. */
export const ACTIVITY_VALUES = ['currency', 'total_bets', 'wins', 'ggr', 'ngr'] as const;
const ACTIVITY_READ = ['customer_id', 'date', 'game_type', ...ACTIVITY_VALUES] as const;

/** Every stored activity row of these customers. */
export async function readCustomerActivity(trx: Knex.Transaction, partner: string, customers: readonly string[]): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  const dialect = dialectOf(trx);
  for (const part of dialect.chunks(customers, CHUNK)) out.push(...((await trx('gaming_activity').where('partner_id', partner).modify(dialect.inList('customer_id', part)).select(...ACTIVITY_READ)) as Record<string, unknown>[]));
  return out;
}
