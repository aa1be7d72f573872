/**
 * The store's records as the rules read them: customers and transactions of one partner,
 * fetched for a set of customers through the (partner_id, customer_id) indexes, with exact
 * decimals and UTC timestamps. Cost follows the customers asked for, not the store's size.
 */
import type { Knex } from 'knex';
import { dialectOf } from '../store/dialect/index.js';
import { fromStoreTimestamp } from '../store/values.js';
import { addDays } from '../kernel/dates.js';
import type { Converted, RateBook } from '../kernel/fx.js';
import { money, moneyOrNull, type Money } from '../kernel/money.js';

export interface CustomerFact {
  customerId: string;
  affiliateId: string;
  signupDate: string;
  signupDay: string;
  countryCode: string | null;
  phase: string | null;
  challengeType: string | null;
  accountSize: Money | null;
  lastModified: string | null;
  loadedAt: string;
}

export interface TxFact {
  id: string;
  customerId: string;
  type: string;
  subtype: string | null;
  status: string;
  amount: Money;
  currency: string;
  amountUsd: Money | null;
  /** UTC timestamp. */
  date: string;
  day: string;
  note: string | null;
  /** When the service wrote this version of the row: when it learned of the current status. */
  loadedAt: string;
}

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export function toCustomerFact(r: Record<string, unknown>): CustomerFact {
  const signup = fromStoreTimestamp(r.signup_date) as string;
  return {
    customerId: String(r.customer_id),
    affiliateId: String(r.affiliate_id),
    signupDate: signup,
    signupDay: signup.slice(0, 10),
    countryCode: text(r.country_code),
    phase: text(r.phase),
    challengeType: text(r.challenge_type),
    accountSize: moneyOrNull(r.account_size),
    lastModified: fromStoreTimestamp(r.last_modified_date),
    loadedAt: fromStoreTimestamp(r.loaded_at) as string,
  };
}

export function toTxFact(r: Record<string, unknown>): TxFact {
  const date = fromStoreTimestamp(r.transaction_date) as string;
  return {
    id: String(r.transaction_id),
    customerId: String(r.customer_id),
    type: String(r.transaction_type),
    subtype: text(r.transaction_subtype),
    status: String(r.status),
    amount: money(r.amount_currency),
    currency: String(r.currency),
    amountUsd: moneyOrNull(r.amount_usd),
    date,
    day: date.slice(0, 10),
    note: text(r.note),
    loadedAt: fromStoreTimestamp(r.loaded_at) as string,
  };
}

export const CUSTOMER_COLUMNS = ['customer_id', 'affiliate_id', 'signup_date', 'country_code', 'phase', 'challenge_type', 'account_size', 'last_modified_date', 'loaded_at'];
export const TX_COLUMNS = ['transaction_id', 'customer_id', 'transaction_type', 'transaction_subtype', 'status', 'amount_currency', 'currency', 'amount_usd', 'transaction_date', 'note', 'loaded_at'];

export async function readCustomers(knex: Knex, partner: string, ids: Iterable<string>): Promise<Map<string, CustomerFact>> {
  const out = new Map<string, CustomerFact>();
  const dialect = dialectOf(knex);
  for (const part of dialect.chunks([...new Set(ids)], { form: 'inList' })) {
    const rows: Record<string, unknown>[] = await knex('customers').where('partner_id', partner).modify(dialect.inList('customer_id', part)).select(CUSTOMER_COLUMNS);
    for (const r of rows) out.set(String(r.customer_id), toCustomerFact(r));
  }
  return out;
}

/** The customers' transactions of these types, per customer, in (date, id) order. */
export async function readTransactions(knex: Knex, partner: string, ids: Iterable<string>, types: readonly string[]): Promise<Map<string, TxFact[]>> {
  const out = new Map<string, TxFact[]>();
  if (types.length === 0) return out;
  const dialect = dialectOf(knex);
  for (const part of dialect.chunks([...new Set(ids)], { form: 'inList' })) {
    const rows: Record<string, unknown>[] = await knex('transactions')
      .where('partner_id', partner)
      .modify(dialect.inList('customer_id', part))
      .whereIn('transaction_type', [...types])
      .select(TX_COLUMNS);
    for (const r of rows) {
      const tx = toTxFact(r);
      let list = out.get(tx.customerId);
      if (!list) out.set(tx.customerId, (list = []));
      list.push(tx);
    }
  }
  for (const list of out.values()) list.sort(byDateThenId);
  return out;
}

export function byDateThenId(a: TxFact, b: TxFact): number {
  return a.date < b.date ? -1 : a.date > b.date ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** A transaction in USD: `amount_usd` where the partner sent it, else the rate of its UTC day. */
export function txUsd(tx: TxFact, fx: RateBook): Converted {
  if (tx.amountUsd !== null) return { usd: tx.amountUsd, rate: null };
  return fx.convert(tx.amount, tx.currency, tx.day);
}

/** The (currency, day) pairs converting these transactions may need. */
export function ratePairs(txs: Iterable<TxFact>): [string, string][] {
  const out: [string, string][] = [];
  for (const t of txs) if (t.amountUsd === null && t.currency !== 'USD') out.push([t.currency, t.day]);
  return out;
}

/** Transaction ids of the customer named in a free-text note (`chargeback of t-17`): whole tokens only. */
export function referencedIds(note: string | null, ids: Iterable<string>): string[] {
  if (!note) return [];
  const found: string[] = [];
  for (const id of ids) {
    let at = note.indexOf(id);
    while (at >= 0) {
      const before = at === 0 ? '' : note.charAt(at - 1);
      const after = note.charAt(at + id.length);
      if (!/[A-Za-z0-9_-]/.test(before) && !/[A-Za-z0-9_-]/.test(after)) {
        found.push(id);
        break;
      }
      at = note.indexOf(id, at + 1);
    }
  }
  return found;
}

/** Approved-or-not bonus transactions of these customers dated on the UTC days from..to (inclusive). */
export async function readBonusTransactions(knex: Knex, partner: string, customers: readonly string[], from: string, to: string): Promise<TxFact[]> {
  const rows: Record<string, unknown>[] = await knex('transactions')
    .where('partner_id', partner)
    .whereIn('customer_id', [...customers])
    .where('transaction_type', 'bonus')
    .where('transaction_date', '>=', `${from}T00:00:00.000000Z`)
    .where('transaction_date', '<', `${addDays(to, 1)}T00:00:00.000000Z`)
    .select(TX_COLUMNS);
  return rows.map(toTxFact);
}
