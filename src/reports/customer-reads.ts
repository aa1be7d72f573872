/**
 * What the facts read of a batch's customers after the batch is written: each one's cell and
 * product now, and, for those whose approved deposits (or cell) changed, every approved deposit,
 * the stored FTD and the stored depositor days (./deposit-facts.ts compares them).
 *
 * A customer whose approved deposits the batch only added to (no approved deposit changed or went,
 * its cell stayed: `additions`) is read for what those additions can change, not for its whole
 * history: its first deposit is the earlier of its stored FTD's deposit and the new ones, and its
 * depositor days are the stored ones and the new ones' days, so only the stored FTD's deposit and
 * the stored depositor days from the first month the new deposits fall in are read. A customer with
 * years of deposits costs a batch what the batch brings. On PostgreSQL
 * all of it comes back from one statement per chunk of customers (one round trip instead of four:
 * the reads are index probes of a few milliseconds each, and their round trips and result parsing
 * cost as much again); SQLite, in-process, reads each table on its own.
 */
import type { Knex } from 'knex';
import { fromStoreTimestamp } from '../store/values.js';
import { dialectOf } from '../store/dialect/index.js';
import { CHUNK, type Attribution, attributions, campaignKey, pairKey, productKey } from './facts-values.js';
import { type Deposit, DEPOSIT_READ, depositOf, readDeposits, readStoredFtd, type StoredFtd } from './ftd.js';

/** Deposit customers read for their additions only: customer → the first day of the earliest month a new deposit falls in. */
export type Additions = ReadonlyMap<string, string>;

export interface CustomerReads {
  /** Each stored customer's cell and product now (absent: not stored). */
  now: Map<string, Attribution>;
  /** Deposit customers: every approved deposit (absent: none); customers in `additions`: the stored FTD's deposit only. */
  deposits: Map<string, Deposit[]>;
  /** Deposit customers: the stored FTD row (absent: none). */
  ftd: Map<string, StoredFtd>;
  /** Deposit customers: stored depositor days, day → cell pair (absent: none); customers in `additions`: those from their month on. */
  depositorDays: Map<string, Map<string, string>>;
  /** The customers read for their additions only, as asked (less any whose stored facts disagree with the rows: those are read whole). */
  additions: Map<string, string>;
}

/**
 * Reads what the facts need of these customers (`depositCustomers`: a subset of `customers`, or not
 * stored at all; `additions`: a subset of `depositCustomers`).
 */
export async function readCustomers(trx: Knex.Transaction, partner: string, customers: ReadonlySet<string>, depositCustomers: ReadonlySet<string>,
  additions: Additions = new Map()): Promise<CustomerReads> {
  const reads: CustomerReads = { now: new Map(), deposits: new Map(), ftd: new Map(), depositorDays: new Map(), additions: new Map(additions) };
  const all = [...new Set([...customers, ...depositCustomers])];
  if (all.length === 0) return reads;
  const whole = [...depositCustomers].filter((c) => !additions.has(c));
  const dialect = dialectOf(trx);
  if (dialect.batchParameters) {
    for (const part of dialect.chunks(all, CHUNK)) await readInOneStatement(trx, partner, part, depositCustomers, additions, reads);
  } else {
    reads.now = await attributions(trx, partner, customers);
    const deposit = [...depositCustomers];
    reads.deposits = await readDeposits(trx, partner, whole);
    reads.ftd = await readStoredFtd(trx, partner, deposit);
    reads.depositorDays = await readDepositorDays(trx, partner, deposit, additions);
    // Each stored FTD's deposit, when it is an approved deposit of the same customer.
    const ftdOf = new Map([...additions.keys()].flatMap((c) => { const f = reads.ftd.get(c); return f ? [[String(f.transaction_id), c] as const] : []; }));
    for (const part of dialect.chunks([...ftdOf.keys()], CHUNK)) {
      const rows: Record<string, unknown>[] = await trx('transactions').where('partner_id', partner).modify(dialect.inList('transaction_id', part))
        .where('transaction_type', 'deposit').where('status', 'approved').select(...DEPOSIT_READ);
      for (const r of rows) {
        if (ftdOf.get(String(r.transaction_id)) === String(r.customer_id)) reads.deposits.set(String(r.customer_id), [depositOf(r)]);
      }
    }
  }
  // A stored FTD whose deposit is not among the customer's approved deposits says the stored facts
  // disagree with the rows (they are rebuilt by `recompute --repair`), and a customer not stored
  // counts nowhere: such customers are read whole, as any other.
  const astray = [...additions.keys()].filter((c) => !reads.now.has(c) || (reads.ftd.has(c) && !reads.deposits.has(c)));
  if (astray.length > 0) {
    for (const [customer, list] of await readDeposits(trx, partner, astray)) reads.deposits.set(customer, list);
    for (const c of astray) {
      reads.depositorDays.delete(c);
      reads.additions.delete(c);
    }
    for (const [customer, days] of await readDepositorDays(trx, partner, astray)) reads.depositorDays.set(customer, days);
  }
  return reads;
}

/** The stored depositor days of these customers: day → cell pair (`since`: a customer's days from that day on only). */
export async function readDepositorDays(trx: Knex.Transaction, partner: string, customers: readonly string[], since?: Additions): Promise<Map<string, Map<string, string>>> {
  const out = new Map<string, Map<string, string>>();
  const dialect = dialectOf(trx);
  for (const part of dialect.chunks([...new Set(customers)], CHUNK)) {
    const rows: Record<string, unknown>[] = await trx('report_depositors').where('partner_id', partner).modify(dialect.inList('customer_id', part)).select('customer_id', 'day', 'affiliate_id', 'campaign_id');
    for (const r of rows) {
      const customer = String(r.customer_id);
      const day = String(r.day).slice(0, 10);
      const from = since?.get(customer);
      if (from === undefined || day >= from) addDepositorDay(out, customer, day, pairKey(String(r.affiliate_id), String(r.campaign_id)));
    }
  }
  return out;
}

function addDepositorDay(into: Map<string, Map<string, string>>, customer: string, day: string, pair: string): void {
  let days = into.get(customer);
  if (!days) into.set(customer, (days = new Map()));
  days.set(day.slice(0, 10), pair);
}

type Text = string | null;
type DepositTuple = [string, string, string, string, Text];
const tupleDeposit = ([transaction, at, amount, currency, usd]: DepositTuple): Deposit => ({ id: transaction, at: fromStoreTimestamp(at) as string, amount_currency: amount, currency, amount_usd: usd });

interface Row {
  id: string;
  affiliate_id: string | null;
  campaign_id: string | null;
  challenge_type: string | null;
  account_size: string | null;
  deposits: DepositTuple[] | null;
  /** The FTD row, then (customers read for additions) its deposit's row when that is an approved deposit of the customer. */
  ftd: [string, string, string, string, string, Text, DepositTuple | null] | null;
  days: [string, string, string][] | null;
}

/**
 * PostgreSQL, one chunk: a row per customer with its attribution and, for deposit customers, its
 * deposits (customers in `additions`: the stored FTD's), FTD and depositor days (customers in
 * `additions`: from their day on) as JSON arrays. Decimals travel as text (exact), times as the
 * store's UTC text.
 */
async function readInOneStatement(trx: Knex.Transaction, partner: string, ids: readonly string[], depositCustomers: ReadonlySet<string>, additions: Additions,
  reads: CustomerReads): Promise<void> {
  const utc = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
  const deposit = (t: string) => `json_build_array(${t}.transaction_id, ${utc(`${t}.transaction_date`)}, ${t}.amount_currency::text, ${t}.currency, ${t}.amount_usd::text)`;
  // k.read: null (attribution only), 'all' (whole history) or 'added' (the additions' reads). The
  // stored FTD comes with its deposit's row, joined by the deposit's key (one index probe, not a
  // walk through the customer's deposits) and checked to be an approved deposit of the customer.
  const result = await trx.raw(`
    SELECT k.id, c.affiliate_id, c.campaign_id, c.challenge_type, c.account_size::text AS account_size,
      CASE WHEN k.read = 'all' THEN (SELECT json_agg(${deposit('t')})
        FROM transactions t WHERE t.partner_id = :partner AND t.customer_id = k.id AND t.transaction_type = 'deposit' AND t.status = 'approved') END AS deposits,
      CASE WHEN k.read IS NOT NULL THEN (SELECT json_build_array(f.transaction_id, ${utc('f.transaction_date')}, f.day::text, f.amount_currency::text, f.currency, f.amount_usd::text,
          CASE WHEN t.customer_id = k.id AND t.transaction_type = 'deposit' AND t.status = 'approved' THEN ${deposit('t')} END)
        FROM report_ftd f LEFT JOIN transactions t ON k.read = 'added' AND t.partner_id = f.partner_id AND t.transaction_id = f.transaction_id
        WHERE f.partner_id = :partner AND f.customer_id = k.id) END AS ftd,
      CASE WHEN k.read IS NOT NULL THEN (SELECT json_agg(json_build_array(d.day::text, d.affiliate_id, d.campaign_id))
        FROM report_depositors d WHERE d.partner_id = :partner AND d.customer_id = k.id AND (k.since IS NULL OR d.day >= k.since)) END AS days
    FROM unnest(:ids::text[], :read::text[], :since::date[]) AS k(id, read, since)
    LEFT JOIN customers c ON c.partner_id = :partner AND c.customer_id = k.id`,
  { partner, ids: [...ids], read: ids.map((id) => (additions.has(id) ? 'added' : depositCustomers.has(id) ? 'all' : null)), since: ids.map((id) => additions.get(id) ?? null) });
  for (const r of (result as { rows: Row[] }).rows) {
    const id = String(r.id);
    if (r.affiliate_id !== null) reads.now.set(id, { pair: pairKey(r.affiliate_id, campaignKey(r.campaign_id)), product: productKey(r.challenge_type, r.account_size) });
    if (r.deposits) reads.deposits.set(id, r.deposits.map(tupleDeposit));
    if (r.ftd) {
      const [transaction, at, day, amount, currency, usd, ftdDeposit] = r.ftd;
      reads.ftd.set(id, { customer_id: id, transaction_id: transaction, transaction_date: at, day, amount_currency: amount, currency, amount_usd: usd });
      if (ftdDeposit && additions.has(id)) reads.deposits.set(id, [tupleDeposit(ftdDeposit)]);
    }
    for (const [day, affiliate, campaign] of r.days ?? []) addDepositorDay(reads.depositorDays, id, day, pairKey(affiliate, campaign));
  }
}
