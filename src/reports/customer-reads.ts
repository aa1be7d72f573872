/**
 * What the facts read of a batch's customers after the batch is written: each one's cell and
 * product now, and, for those whose approved deposits (or cell) changed, every approved deposit,
 * the stored FTD and the stored depositor days (./deposit-facts.ts compares them). On PostgreSQL
 * all of it comes back from one statement per chunk of customers (one round trip instead of four:
 * the reads are index probes of a few milliseconds each, and their round trips and result parsing
 * cost as much again); SQLite, in-process, reads each table on its own.
 */
import type { Knex } from 'knex';
import type { StoreKind } from '../store/dialects.js';
import { fromStoreTimestamp } from '../store/values.js';
import { type Attribution, attributions, campaignKey, chunks, inList, pairKey, productKey } from './facts-values.js';
import { type Deposit, readDeposits, readStoredFtd, type StoredFtd } from './ftd.js';

export interface CustomerReads {
  /** Each stored customer's cell and product now (absent: not stored). */
  now: Map<string, Attribution>;
  /** Deposit customers: every approved deposit (absent: none). */
  deposits: Map<string, Deposit[]>;
  /** Deposit customers: the stored FTD row (absent: none). */
  ftd: Map<string, StoredFtd>;
  /** Deposit customers: stored depositor days, day → cell pair (absent: none). */
  depositorDays: Map<string, Map<string, string>>;
}

/** Reads what the facts need of these customers (`depositCustomers`: a subset of `customers`, or not stored at all). */
export async function readCustomers(trx: Knex.Transaction, kind: StoreKind, partner: string, customers: ReadonlySet<string>, depositCustomers: ReadonlySet<string>): Promise<CustomerReads> {
  const reads: CustomerReads = { now: new Map(), deposits: new Map(), ftd: new Map(), depositorDays: new Map() };
  const all = [...new Set([...customers, ...depositCustomers])];
  if (all.length === 0) return reads;
  if (kind === 'postgres') {
    for (const part of chunks(all)) await readInOneStatement(trx, partner, part, depositCustomers, reads);
    return reads;
  }
  reads.now = await attributions(trx, partner, customers);
  const deposit = [...depositCustomers];
  reads.deposits = await readDeposits(trx, partner, deposit);
  reads.ftd = await readStoredFtd(trx, partner, deposit);
  reads.depositorDays = await readDepositorDays(trx, partner, deposit);
  return reads;
}

/** The stored depositor days of these customers: day → cell pair. */
export async function readDepositorDays(trx: Knex.Transaction, partner: string, customers: readonly string[]): Promise<Map<string, Map<string, string>>> {
  const out = new Map<string, Map<string, string>>();
  for (const part of chunks([...new Set(customers)])) {
    const rows: Record<string, unknown>[] = await trx('report_depositors').where('partner_id', partner).modify(inList('customer_id', part)).select('customer_id', 'day', 'affiliate_id', 'campaign_id');
    for (const r of rows) addDepositorDay(out, String(r.customer_id), String(r.day), pairKey(String(r.affiliate_id), String(r.campaign_id)));
  }
  return out;
}

function addDepositorDay(into: Map<string, Map<string, string>>, customer: string, day: string, pair: string): void {
  let days = into.get(customer);
  if (!days) into.set(customer, (days = new Map()));
  days.set(day.slice(0, 10), pair);
}

type Text = string | null;
interface Row {
  id: string;
  affiliate_id: string | null;
  campaign_id: string | null;
  challenge_type: string | null;
  account_size: string | null;
  deposits: [string, string, string, string, Text][] | null;
  ftd: [string, string, string, string, string, Text] | null;
  days: [string, string, string][] | null;
}

/**
 * PostgreSQL, one chunk: a row per customer with its attribution and, for deposit customers, its
 * deposits, FTD and depositor days as JSON arrays. Decimals travel as text (exact), times as the
 * store's UTC text.
 */
async function readInOneStatement(trx: Knex.Transaction, partner: string, ids: readonly string[], depositCustomers: ReadonlySet<string>, reads: CustomerReads): Promise<void> {
  const utc = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
  const result = await trx.raw(`
    SELECT k.id, c.affiliate_id, c.campaign_id, c.challenge_type, c.account_size::text AS account_size,
      CASE WHEN k.deposit THEN (SELECT json_agg(json_build_array(t.transaction_id, ${utc('t.transaction_date')}, t.amount_currency::text, t.currency, t.amount_usd::text))
        FROM transactions t WHERE t.partner_id = :partner AND t.customer_id = k.id AND t.transaction_type = 'deposit' AND t.status = 'approved') END AS deposits,
      CASE WHEN k.deposit THEN (SELECT json_build_array(f.transaction_id, ${utc('f.transaction_date')}, f.day::text, f.amount_currency::text, f.currency, f.amount_usd::text)
        FROM report_ftd f WHERE f.partner_id = :partner AND f.customer_id = k.id) END AS ftd,
      CASE WHEN k.deposit THEN (SELECT json_agg(json_build_array(d.day::text, d.affiliate_id, d.campaign_id))
        FROM report_depositors d WHERE d.partner_id = :partner AND d.customer_id = k.id) END AS days
    FROM unnest(:ids::text[], :deposit::boolean[]) AS k(id, deposit)
    LEFT JOIN customers c ON c.partner_id = :partner AND c.customer_id = k.id`,
  { partner, ids: [...ids], deposit: ids.map((id) => depositCustomers.has(id)) });
  for (const r of (result as { rows: Row[] }).rows) {
    const id = String(r.id);
    if (r.affiliate_id !== null) reads.now.set(id, { pair: pairKey(r.affiliate_id, campaignKey(r.campaign_id)), product: productKey(r.challenge_type, r.account_size) });
    if (r.deposits) {
      reads.deposits.set(id, r.deposits.map(([transaction, at, amount, currency, usd]) => ({ id: transaction, at: fromStoreTimestamp(at) as string, amount_currency: amount, currency, amount_usd: usd })));
    }
    if (r.ftd) {
      const [transaction, at, day, amount, currency, usd] = r.ftd;
      reads.ftd.set(id, { customer_id: id, transaction_id: transaction, transaction_date: at, day, amount_currency: amount, currency, amount_usd: usd });
    }
    for (const [day, affiliate, campaign] of r.days ?? []) addDepositorDay(reads.depositorDays, id, day, pairKey(affiliate, campaign));
  }
}
