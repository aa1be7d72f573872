/**
 * The stored versions of a batch's records, read by the Loader's `beforeWrite` hook just before
 * the batch replaces them: what they counted in is what the facts take out (./incremental.ts).
 * The first read of a key in a batch wins: it is the version the facts hold.
 */
import type { Knex } from 'knex';
import { fromStoreTimestamp } from '../store/values.js';
import { toUtcTimestamp } from '../kernel/timestamp.js';
import type { SpecRecord } from '../types.js';
import { STORED_TRANSACTION_COLUMNS, storedTransactions } from '../store/stored-transactions.js';
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
export const TX_READ = STORED_TRANSACTION_COLUMNS;

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

/** Reads the stored versions of records about to be replaced (customers and transactions; activity: readActivityPriors). */
export async function readPriors(trx: Knex.Transaction, partner: string, entity: string, records: readonly SpecRecord[], into: PriorVersions): Promise<void> {
  if (entity === 'customers') {
    const wanted = [...new Set(records.map((r) => String(r.customer_id)))].filter((id) => !into.customers.has(id));
    const dialect = dialectOf(trx);
    for (const part of dialect.chunks(wanted, CHUNK)) {
      const rows: Record<string, unknown>[] = await trx('customers').where('partner_id', partner).modify(dialect.inList('customer_id', part))
        .select('customer_id', 'affiliate_id', 'campaign_id', 'signup_date', 'challenge_type', 'account_size');
      for (const r of rows) {
        into.customers.set(String(r.customer_id), {
          pair: pairKey(String(r.affiliate_id), campaignKey(r.campaign_id)),
          signupDay: (fromStoreTimestamp(r.signup_date) as string).slice(0, 10),
          product: productKey(r.challenge_type, r.account_size),
        });
      }
    }
  } else if (entity === 'transactions') {
    // Read once per batch with the commission job (src/store/stored-transactions.ts).
    for (const r of await storedTransactions(trx, partner, records)) {
      const id = String(r.transaction_id);
      if (!into.transactions.has(id)) into.transactions.set(id, storedTransaction(r));
    }
  }
}

/** A gaming activity row's key (its primary key without the partner). */
export const activityKey = (r: { customer_id: unknown; date: unknown; game_type: unknown; currency: unknown }): string =>
  `${String(r.customer_id)}\u0000${String(r.date).slice(0, 10)}\u0000${String(r.game_type)}\u0000${String(r.currency)}`;

const ACTIVITY_READ = ['customer_id', 'date', 'game_type', 'currency', 'total_bets', 'wins', 'ggr', 'ngr'] as const;

/** The stored activity rows of these customers on these days whose key is wanted. */
export async function readActivity(trx: Knex.Transaction, partner: string, keys: ReadonlySet<string>): Promise<Record<string, unknown>[]> {
  const customers = new Set<string>();
  const days = new Set<string>();
  for (const key of keys) {
    const [customer, day] = key.split('\u0000') as [string, string];
    customers.add(customer);
    days.add(day);
  }
  const out: Record<string, unknown>[] = [];
  const dialect = dialectOf(trx);
  for (const part of dialect.chunks([...customers], CHUNK)) {
    const rows: Record<string, unknown>[] = await trx('gaming_activity').where('partner_id', partner).modify(dialect.inList('customer_id', part)).whereIn('date', [...days]).select(...ACTIVITY_READ);
    for (const r of rows) if (keys.has(activityKey(r as never))) out.push(r);
  }
  return out;
}

/** Every stored activity row of these customers. */
export async function readCustomerActivity(trx: Knex.Transaction, partner: string, customers: readonly string[]): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  const dialect = dialectOf(trx);
  for (const part of dialect.chunks(customers, CHUNK)) out.push(...((await trx('gaming_activity').where('partner_id', partner).modify(dialect.inList('customer_id', part)).select(...ACTIVITY_READ)) as Record<string, unknown>[]));
  return out;
}

/**
 * Reads the stored versions of activity rows about to be replaced (first read per key wins: the
 * version stored before this batch). A key with no stored row is kept as null (nothing to take out).
 */
export async function readActivityPriors(trx: Knex.Transaction, partner: string, records: readonly SpecRecord[], into: Map<string, ActivityValues | null>): Promise<void> {
  const wanted = new Set<string>();
  for (const r of records) {
    const key = activityKey(r as never);
    if (!into.has(key)) wanted.add(key);
  }
  if (wanted.size === 0) return;
  for (const r of await readActivity(trx, partner, wanted)) {
    const key = activityKey(r as never);
    if (!into.has(key)) into.set(key, r as ActivityValues);
  }
  for (const key of wanted) if (!into.has(key)) into.set(key, null);
}
