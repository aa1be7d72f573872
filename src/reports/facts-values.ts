/**
 * What the report-facts modules share: cell keys, the USD value of an amount, an activity row's
 * GGR, and the current attribution of customers.
 */
import type { Knex } from 'knex';
import { RateBook } from '../kernel/fx.js';
import { money, moneyOrNull, ZERO, type Money } from '../kernel/money.js';
import { decimalText } from '../store/values.js';
import { dialectOf } from '../store/dialect/index.js';
import { COUNT_COLUMNS, MONEY_COLUMNS, type MoneyColumn } from './facts-columns.js';

/** Keys per statement (a batch of 1000 records reads in one). */
export const CHUNK = 1000;

/** A cell's (affiliate, campaign) as one key. */
export const pairKey = (affiliate: string, campaign: string): string => `${affiliate}\u0000${campaign}`;
export const splitPair = (key: string): [string, string] => key.split('\u0000') as [string, string];
export const dayStart = (day: string): string => `${day}T00:00:00.000000Z`;

const PLAIN = /^(-?)0*(\d+?)(?:\.(\d*?)0*)?$/;

/** A decimal's canonical text ('' for none): what compares two stored amounts without a Decimal. */
export function decimalKey(value: unknown): string {
  if (value === null || value === undefined || value === '') return '';
  const m = PLAIN.exec(typeof value === 'number' ? decimalText(value) : String(value));
  if (!m) return money(value).toFixed();
  const text = m[3] ? `${m[2] as string}.${m[3]}` : (m[2] as string);
  return m[1] && text !== '0' ? `-${text}` : text;
}

/** Campaign as the facts key it ('' when the customer has none). */
export const campaignKey = (value: unknown): string => (value === null || value === undefined ? '' : String(value));
/** Account size as key text: its exact decimal, '' when none. */
const sizeKey = (value: unknown): string => (value === null || value === undefined || value === '' ? '' : money(value).toFixed());
/** A customer's challenge product (challenge_type \0 account_size) as a key. */
export const productKey = (challengeType: unknown, accountSize: unknown): string => `${campaignKey(challengeType)}\u0000${sizeKey(accountSize)}`;

/** The USD value of an amount: amount_usd when sent, USD as is, else the rate of its day; undefined when no rate is known. */
export function toUsd(fx: RateBook, amount: unknown, currency: string, amountUsd: unknown, day: string): Money | undefined {
  if (amountUsd !== null && amountUsd !== undefined) return money(amountUsd);
  const c = fx.convert(money(amount), currency, day);
  return 'missing' in c ? undefined : c.usd;
}

/** A gaming activity row's GGR in its currency: ggr when sent, else total_bets − wins, else 0. */
export function activityGgr(row: { ggr: unknown; total_bets: unknown; wins: unknown }): Money {
  const ggr = moneyOrNull(row.ggr);
  if (ggr !== null) return ggr;
  const bets = moneyOrNull(row.total_bets);
  const wins = moneyOrNull(row.wins);
  return bets !== null && wins !== null ? bets.minus(wins) : ZERO;
}

/** The money column each reported transaction type sums into. */
export const TYPE_COLUMN: Record<string, MoneyColumn> = {
  deposit: 'deposits_usd', withdrawal: 'withdrawals_usd', bonus: 'bonuses_usd',
  challenge_fee: 'challenge_fees_usd', reset_fee: 'reset_fees_usd', refund: 'refunds_usd', payout: 'payouts_usd',
};

/** The summed columns of a cell (all but depositors, which a month counts distinct). */
export const SUMMED_COLUMNS: readonly string[] = [...COUNT_COLUMNS.filter((c) => c !== 'depositors'), ...MONEY_COLUMNS];

/** A customer's attribution as the facts key it: its cell pair and its product. */
export interface Attribution {
  pair: string;
  product: string;
}

/** The current attribution of these customers (absent: not stored). */
export async function attributions(trx: Knex.Transaction, partner: string, customers: Iterable<string>): Promise<Map<string, Attribution>> {
  const out = new Map<string, Attribution>();
  const dialect = dialectOf(trx);
  for (const part of dialect.chunks([...new Set(customers)], CHUNK)) {
    const rows: Record<string, unknown>[] = await trx('customers').where('partner_id', partner).modify(dialect.inList('customer_id', part))
      .select('customer_id', 'affiliate_id', 'campaign_id', 'challenge_type', 'account_size');
    for (const r of rows) out.set(String(r.customer_id), { pair: pairKey(String(r.affiliate_id), campaignKey(r.campaign_id)), product: productKey(r.challenge_type, r.account_size) });
  }
  return out;
}
