/**
 * Revenue per customer and UTC day, in USD: the unit RevShare and the CPA wagering term are
 * built from (docs/commissions.md, GGR and NGR). Kept in commission_customer_days and summed per
 * affiliate and month in commission_affiliate_months by deltas: a batch re-derives only the days
 * it touched, and a month's base is one row however long the history.
 */
import type { Knex } from 'knex';
import { RateBook, type MissingRate } from '../kernel/fx.js';
import type { CustomerFact, TxFact } from './facts.js';
import { money, moneyOrNull, sum, ZERO, type Money } from '../kernel/money.js';
import { dialectOf, type StoreDialect } from '../store/dialect/index.js';
import { append } from '../kernel/collections.js';
import { monthKey, splitMonthKey, type MonthDeltas } from './month-deltas.js';

export interface ActivityRow {
  customerId: string;
  date: string;
  gameType: string;
  currency: string;
  totalBets: Money | null;
  wins: Money | null;
  ggr: Money | null;
  ngr: Money | null;
}

/** One customer-day; the amounts are null while a rate is missing. */
export interface DayValues {
  ggr: Money | null;
  ngr: Money | null;
  bets: Money | null;
  missing: MissingRate[];
}

export function toActivityRow(r: Record<string, unknown>): ActivityRow {
  return {
    customerId: String(r.customer_id),
    date: String(r.date).slice(0, 10),
    gameType: String(r.game_type),
    currency: String(r.currency),
    totalBets: moneyOrNull(r.total_bets),
    wins: moneyOrNull(r.wins),
    ggr: moneyOrNull(r.ggr),
    ngr: moneyOrNull(r.ngr),
  };
}

/** A row's GGR in its currency: `ggr` where sent, else total_bets − wins; neither: 0 (no revenue information). */
export function rowGgr(row: ActivityRow): Money {
  if (row.ggr !== null) return row.ggr;
  if (row.totalBets !== null && row.wins !== null) return row.totalBets.minus(row.wins);
  return ZERO;
}

/**
 * The customer-day: GGR = Σ rows' GGR; NGR = Σ rows' ngr when every row carries ngr, otherwise
 * GGR − the customer's approved bonus transactions of that UTC day; wagering = Σ total_bets.
 * Each row converts at its currency's rate of the activity date; a bonus at its own day's rate,
 * or its amount_usd. Bonuses are counted by absolute value (a bonus is a cost whatever its sign).
 */
export function deriveDay(rows: readonly ActivityRow[], bonuses: readonly TxFact[], fx: RateBook): DayValues | null {
  if (rows.length === 0) return null;
  const missing = new Set<MissingRate>();
  const usd = (amount: Money, currency: string, day: string): Money => {
    const c = fx.convert(amount, currency, day);
    if ('missing' in c) {
      missing.add(c.missing);
      return ZERO;
    }
    return c.usd;
  };
  const ggr = sum(rows.map((r) => usd(rowGgr(r), r.currency, r.date)));
  const bets = sum(rows.map((r) => (r.totalBets === null ? ZERO : usd(r.totalBets, r.currency, r.date))));
  let ngr: Money;
  if (rows.every((r) => r.ngr !== null)) ngr = sum(rows.map((r) => usd(r.ngr as Money, r.currency, r.date)));
  else {
    const bonus = sum(bonuses.map((b) => (b.amountUsd !== null ? b.amountUsd : usd(b.amount, b.currency, b.day)).abs()));
    ngr = ggr.minus(bonus);
  }
  if (missing.size > 0) return { ggr: null, ngr: null, bets: null, missing: [...missing].sort() };
  return { ggr, ngr, bets, missing: [] };
}

export interface CachedDay extends DayValues {
  customerId: string;
  date: string;
  affiliateId: string;
}

export function toCachedDay(r: Record<string, unknown>): CachedDay {
  const missing = r.missing === null || r.missing === undefined || r.missing === '' ? [] : String(r.missing).split(',');
  return {
    customerId: String(r.customer_id),
    date: String(r.date).slice(0, 10),
    affiliateId: String(r.affiliate_id),
    ggr: moneyOrNull(r.ggr_usd),
    ngr: moneyOrNull(r.ngr_usd),
    bets: moneyOrNull(r.bets_usd),
    missing,
  };
}

const CHUNK = 500;
/** Pairs spanning at most this many days are read over their range (pairReads). */
const DENSE_SPAN = 31;
export const sameDay = (a: CachedDay, b: CachedDay): boolean =>
  a.affiliateId === b.affiliateId && a.missing.join(',') === b.missing.join(',') &&
  eq(a.ggr, b.ggr) && eq(a.ngr, b.ngr) && eq(a.bets, b.bets);
const eq = (a: Money | null, b: Money | null): boolean => (a === null ? b === null : b !== null && a.equals(b));

/**
 * How to read rows of these (customer, day) pairs. Pairs within a month (a bulk group of a month,
 * an incremental batch of a day or two), or covering most of their range's days, are read per
 * chunk of customers over the whole range, one statement per 500 customers, and filtered here;
 * sparse ones over a longer range (today and a few old days of customers with long histories) one
 * statement per day and chunk, so that no customer's whole history is read for a day or two of it.
 */
interface PairReads {
  /** Over the range: [from, to, customers]; per day: [day, day, customers]. */
  reads: [string, string, string[]][];
  wanted: (customer: string, day: string) => boolean;
}

function pairReads(dialect: StoreDialect, pairs: ReadonlyMap<string, ReadonlySet<string>>): PairReads {
  let from = '9999-12-31';
  let to = '0000-01-01';
  let total = 0;
  for (const days of pairs.values()) {
    for (const d of days) {
      if (d < from) from = d;
      if (d > to) to = d;
    }
    total += days.size;
  }
  const wanted = (customer: string, day: string): boolean => pairs.get(customer)?.has(day) === true;
  const reads: [string, string, string[]][] = [];
  if (total === 0) return { reads, wanted };
  const span = Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1;
  if (span <= DENSE_SPAN || total * 2 >= pairs.size * span) {
    const customers = [...pairs.keys()].filter((c) => (pairs.get(c)?.size ?? 0) > 0);
    for (const part of dialect.chunks(customers, CHUNK)) reads.push([from, to, part]);
    return { reads, wanted };
  }
  const byDay = new Map<string, string[]>();
  for (const [customer, days] of pairs) for (const day of days) append(byDay, day, customer);
  for (const [day, customers] of byDay) for (const part of dialect.chunks(customers, CHUNK)) reads.push([day, day, part]);
  return { reads, wanted };
}

/** Reads the activity rows of these (customer, day) pairs (pairReads: per customer chunk over the range when dense, per day otherwise). */
export async function readActivity(knex: Knex, partner: string, pairs: ReadonlyMap<string, ReadonlySet<string>>): Promise<ActivityRow[]> {
  const { reads, wanted } = pairReads(dialectOf(knex), pairs);
  const out: ActivityRow[] = [];
  for (const [from, to, customers] of reads) {
    const q = knex('gaming_activity').where('partner_id', partner).whereIn('customer_id', customers)
      .select('customer_id', 'date', 'game_type', 'currency', 'total_bets', 'wins', 'ggr', 'ngr');
    const rows: Record<string, unknown>[] = await (from === to ? q.where('date', from) : q.whereBetween('date', [from, to]));
    for (const r of rows) if (from === to || wanted(String(r.customer_id), String(r.date).slice(0, 10))) out.push(toActivityRow(r));
  }
  return out;
}

/** Approved bonus transactions of these customers on these days, per `customer\0day`. */
export async function readBonuses(knex: Knex, pairs: ReadonlyMap<string, ReadonlySet<string>>, read: (customers: string[], from: string, to: string) => Promise<TxFact[]>): Promise<Map<string, TxFact[]>> {
  const out = new Map<string, TxFact[]>();
  const customers = [...pairs.keys()];
  if (customers.length === 0) return out;
  let from = '9999-12-31';
  let to = '0000-01-01';
  for (const days of pairs.values()) for (const d of days) {
    if (d < from) from = d;
    if (d > to) to = d;
  }
  for (const part of dialectOf(knex).chunks(customers, CHUNK)) {
    for (const tx of await read(part, from, to)) {
      if (tx.status !== 'approved' || !pairs.get(tx.customerId)?.has(tx.day)) continue;
      const key = `${tx.customerId}\u0000${tx.day}`;
      append(out, key, tx);
    }
  }
  return out;
}

/** Cached days of these pairs. */
export async function readCachedDays(knex: Knex, partner: string, pairs: ReadonlyMap<string, ReadonlySet<string>>): Promise<Map<string, CachedDay>> {
  const out = new Map<string, CachedDay>();
  const { reads, wanted } = pairReads(dialectOf(knex), pairs);
  for (const [from, to, customers] of reads) {
    const q = knex('commission_customer_days').where('partner_id', partner).whereIn('customer_id', customers).select('*');
    const rows: Record<string, unknown>[] = await (from === to ? q.where('date', from) : q.whereBetween('date', [from, to]));
    for (const r of rows) {
      if (from !== to && !wanted(String(r.customer_id), String(r.date).slice(0, 10))) continue;
      const c = toCachedDay(r);
      out.set(`${c.customerId}\u0000${c.date}`, c);
    }
  }
  return out;
}

/** Customer-days per upsert statement on PostgreSQL (each column one array parameter). */
const UPSERT_ARRAYS = 10_000;
/** The columns a customer-day's upsert replaces. */
const UPSERT_SET = ['affiliate_id', 'ggr_usd', 'ngr_usd', 'bets_usd', 'missing', 'updated_at'] as const;

/**
 * PostgreSQL: one statement per UPSERT_ARRAYS customer-days, every column an array parameter
 * (knex's multi-row insert compiled 9 placeholders a row: bench/README.md, the whole pipeline).
 */
export async function writeCachedDays(trx: Knex.Transaction, partner: string, upserts: readonly CachedDay[], deletes: readonly CachedDay[], now: string): Promise<void> {
  const dialect = dialectOf(trx);
  const text = (v: Money | null) => (v === null ? null : v.toFixed());
  for (const part of dialect.chunks(upserts, UPSERT_ARRAYS)) {
    await dialect.insertColumns(trx, 'commission_customer_days', { partner_id: ['text', partner], updated_at: ['timestamptz', now] }, {
      customer_id: ['text', part.map((d) => d.customerId)], date: ['date', part.map((d) => d.date)], affiliate_id: ['text', part.map((d) => d.affiliateId)],
      ggr_usd: ['numeric', part.map((d) => text(d.ggr))], ngr_usd: ['numeric', part.map((d) => text(d.ngr))], bets_usd: ['numeric', part.map((d) => text(d.bets))],
      missing: ['text', part.map((d) => (d.missing.length === 0 ? null : d.missing.join(',')))],
    }, { on: ['partner_id', 'customer_id', 'date'], update: UPSERT_SET });
  }
  const byDay = new Map<string, string[]>();
  for (const d of deletes) append(byDay, d.date, d.customerId);
  for (const [day, customers] of byDay) {
    for (const part of dialect.chunks(customers, CHUNK)) {
      await trx('commission_customer_days').where('partner_id', partner).where('date', day).whereIn('customer_id', part).delete();
    }
  }
}

/**
 * Re-derives the customer-days of these pairs from the store, writes what changed and returns
 * the month deltas. Customers missing from `customers` (not in the store) get no row.
 */
export async function refreshDays(
  trx: Knex.Transaction,
  partner: string,
  pairs: ReadonlyMap<string, ReadonlySet<string>>,
  customers: ReadonlyMap<string, CustomerFact>,
  readBonusTxs: (customers: string[], from: string, to: string) => Promise<TxFact[]>,
  deltas: MonthDeltas,
  now: string,
): Promise<{ written: number; removed: number; customers: string[] }> {
  if (pairs.size === 0) return { written: 0, removed: 0, customers: [] };
  const activity = await readActivity(trx, partner, pairs);
  const rowsByPair = new Map<string, ActivityRow[]>();
  for (const r of activity) {
    const key = `${r.customerId}\u0000${r.date}`;
    append(rowsByPair, key, r);
  }
  const bonuses = await readBonuses(trx, pairs, readBonusTxs);
  const cached = await readCachedDays(trx, partner, pairs);
  const ratePairs: [string, string][] = activity.map((r) => [r.currency, r.date]);
  for (const list of bonuses.values()) for (const b of list) if (b.amountUsd === null) ratePairs.push([b.currency, b.day]);
  const fx = await RateBook.load(trx, ratePairs);

  const upserts: CachedDay[] = [];
  const deletes: CachedDay[] = [];
  for (const [customerId, days] of pairs) {
    const customer = customers.get(customerId);
    for (const date of days) {
      const key = `${customerId}\u0000${date}`;
      const old = cached.get(key);
      const values = customer ? deriveDay(rowsByPair.get(key) ?? [], bonuses.get(key) ?? [], fx) : null;
      const next: CachedDay | undefined = values && customer ? { ...values, customerId, date, affiliateId: customer.affiliateId } : undefined;
      const source = `activity:${customerId}@${date}`;
      if (old && next && sameDay(old, next)) continue;
      if (old) deltas.add(old, -1, source);
      if (next) {
        deltas.add(next, 1, source);
        upserts.push(next);
      } else if (old) deletes.push(old);
    }
  }
  await writeCachedDays(trx, partner, upserts, deletes, now);
  return { written: upserts.length, removed: deletes.length, customers: [...new Set(upserts.map((u) => u.customerId))] };
}

/** Customers whose customer-days are attributed to another affiliate than their current one. */
export async function reattributedCustomers(knex: Knex, partner: string, customers: ReadonlyMap<string, CustomerFact>, ids: Iterable<string>): Promise<string[]> {
  const list = [...new Set(ids)].filter((id) => customers.has(id));
  const out: string[] = [];
  const dialect = dialectOf(knex);
  for (const part of dialect.chunks(list, { form: 'inList' })) {
    const rows: { customer_id: string; affiliate_id: string }[] = await knex('commission_customers').where('partner_id', partner).modify(dialect.inList('customer_id', part)).select('customer_id', 'affiliate_id');
    for (const r of rows) if (customers.get(r.customer_id)?.affiliateId !== r.affiliate_id) out.push(r.customer_id);
  }
  return out;
}

/** Records the affiliate these customers' days are attributed to now. */
export async function recordAttribution(trx: Knex.Transaction, partner: string, customers: ReadonlyMap<string, CustomerFact>, ids: Iterable<string>, now: string): Promise<void> {
  const rows = [...new Set(ids)].flatMap((id) => {
    const c = customers.get(id);
    return c ? [{ customer_id: id, affiliate_id: c.affiliateId }] : [];
  });
  // One statement on PostgreSQL, a parameter per column: a bulk settle's passes attribute thousands of customers each.
  await dialectOf(trx).insertColumns(trx, 'commission_customers', { partner_id: ['text', partner], updated_at: ['timestamptz', now] },
    { customer_id: ['text', rows.map((r) => r.customer_id)], affiliate_id: ['text', rows.map((r) => r.affiliate_id)] },
    { on: ['partner_id', 'customer_id'], update: ['affiliate_id', 'updated_at'] });
}

/** Customer-days of these customers whose affiliate is not the customer's current one (an affiliate change): moved, with deltas. */
export async function reattributeDays(trx: Knex.Transaction, partner: string, customerIds: readonly string[], deltas: MonthDeltas, now: string): Promise<number> {
  let moved = 0;
  for (const part of dialectOf(trx).chunks(customerIds, CHUNK)) {
    const rows: Record<string, unknown>[] = await trx('commission_customer_days as d')
      .join('customers as c', (j) => j.on('c.partner_id', 'd.partner_id').andOn('c.customer_id', 'd.customer_id'))
      .where('d.partner_id', partner)
      .whereIn('d.customer_id', part)
      .whereRaw('d.affiliate_id <> c.affiliate_id')
      .select('d.*', 'c.affiliate_id as current_affiliate');
    const current = new Map<string, string>();
    for (const r of rows) {
      const old = toCachedDay(r);
      const next = { ...old, affiliateId: String(r.current_affiliate) };
      const source = `customers:${old.customerId}`;
      deltas.add(old, -1, source);
      deltas.add(next, 1, source);
      current.set(old.customerId, next.affiliateId);
      moved += 1;
    }
    for (const [customer, affiliate] of current) {
      await trx('commission_customer_days').where({ partner_id: partner, customer_id: customer }).update({ affiliate_id: affiliate, updated_at: now });
    }
  }
  return moved;
}

export interface AffiliateMonth {
  affiliateId: string;
  month: string;
  ggr: Money;
  ngr: Money;
  days: number;
  missingDays: number;
}

function toAffiliateMonth(r: Record<string, unknown>): AffiliateMonth {
  return {
    affiliateId: String(r.affiliate_id),
    month: String(r.month),
    ggr: money(r.ggr_usd),
    ngr: money(r.ngr_usd),
    days: Number(r.days),
    missingDays: Number(r.missing_days),
  };
}

/** Adds the deltas to commission_affiliate_months; a month left with no customer-day is removed. A few statements per call, however many months. */
export async function applyMonthDeltas(trx: Knex.Transaction, partner: string, deltas: MonthDeltas, now: string): Promise<void> {
  const changed = [...deltas.map].filter(([, d]) => !(d.days === 0 && d.missingDays === 0 && d.ggr.isZero() && d.ngr.isZero()));
  if (changed.length === 0) return;
  const affiliates = [...new Set(changed.map(([k]) => splitMonthKey(k)[0]))];
  const months = [...new Set(changed.map(([k]) => splitMonthKey(k)[1]))];
  const existing = new Map<string, AffiliateMonth>();
  const dialect = dialectOf(trx);
  for (const part of dialect.chunks(affiliates, CHUNK)) {
    const rows: Record<string, unknown>[] = await trx('commission_affiliate_months').where('partner_id', partner)
      .whereIn('affiliate_id', part).whereIn('month', months).select('*');
    for (const r of rows) existing.set(monthKey(String(r.affiliate_id), String(r.month)), toAffiliateMonth(r));
  }
  const upserts: Record<string, unknown>[] = [];
  const removed: [string, string][] = [];
  for (const [key, d] of changed) {
    const [affiliate, month] = splitMonthKey(key);
    const old = existing.get(key) ?? { affiliateId: affiliate, month, ggr: ZERO, ngr: ZERO, days: 0, missingDays: 0 };
    const next = { ggr: old.ggr.plus(d.ggr), ngr: old.ngr.plus(d.ngr), days: old.days + d.days, missingDays: old.missingDays + d.missingDays };
    if (next.days < 0 || next.missingDays < 0) throw new Error(`commission_affiliate_months ${partner}/${affiliate}/${month} would go below zero days: derived state is inconsistent (run commissions recompute --repair)`);
    if (next.days === 0) removed.push([affiliate, month]);
    else upserts.push({ partner_id: partner, affiliate_id: affiliate, month, ggr_usd: next.ggr.toFixed(), ngr_usd: next.ngr.toFixed(), days: next.days, missing_days: next.missingDays, updated_at: now });
  }
  for (const part of dialect.insertChunks(upserts)) {
    await trx('commission_affiliate_months').insert(part)
      .onConflict(['partner_id', 'affiliate_id', 'month']).merge(['ggr_usd', 'ngr_usd', 'days', 'missing_days', 'updated_at']);
  }
  for (const [affiliate, month] of removed) await trx('commission_affiliate_months').where({ partner_id: partner, affiliate_id: affiliate, month }).delete();
}

/** Every month of these affiliates (one row per month with activity). */
export async function readAffiliateMonths(knex: Knex, partner: string, affiliates: Iterable<string>): Promise<Map<string, AffiliateMonth[]>> {
  const list = [...new Set(affiliates)];
  const out = new Map<string, AffiliateMonth[]>();
  for (const part of dialectOf(knex).chunks(list, CHUNK)) {
    const rows: Record<string, unknown>[] = await knex('commission_affiliate_months').where('partner_id', partner).whereIn('affiliate_id', part).orderBy('month').select('*');
    for (const r of rows) {
      const m = toAffiliateMonth(r);
      append(out, m.affiliateId, m);
    }
  }
  return out;
}
