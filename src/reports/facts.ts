/**
 * The report facts (docs/reports.md): each customer's first approved deposit, and sums per
 * (partner, affiliate, campaign, UTC day) that the affiliate report reads instead of raw rows.
 *
 * The rule they keep: a fact table equals what the raw tables say, at every commit. No deltas are
 * applied. A batch names the cells it can change (its records' cells, the cells the old versions of
 * those records counted in, every cell of a customer whose attribution changed, every cell of a
 * replaced day); each named cell is deleted and computed again from the raw rows of its day, in the
 * load transaction. A re-sent record, a reversal, a replaced day, a backfill or a replay therefore
 * cannot count twice: the cell is what the rows are.
 */
import type { Knex } from 'knex';
import { addDays, lastDayOf, utcDay } from '../commission/dates.js';
import { RateBook } from '../commission/fx.js';
import { money, moneyOrNull, ZERO, type Money } from '../commission/money.js';
import { fromStoreTimestamp, toUtcTimestamp } from '../store/values.js';
import type { StoreKind } from '../store/dialects.js';
import type { Store } from '../store/store.js';
import type { SpecRecord, Variant } from '../types.js';
import { COUNT_COLUMNS, MONEY_COLUMNS, REPORT_TX_TYPES, type CountColumn, type MoneyColumn } from './facts-columns.js';
import { recomputeMonth } from './month-cells.js';
import { rebuildFactsSql } from './rebuild-sql.js';

/** Whether a whole partner is rebuilt by set-based SQL (exact NUMERIC sums) or day by day here. */
const SET_BASED_REBUILD: Record<StoreKind, boolean> = { postgres: true, sqlite: false };

export { COUNT_COLUMNS, MONEY_COLUMNS, REPORT_TX_TYPES } from './facts-columns.js';

/**
 * The sources of a cell, recomputed separately: a transactions batch re-reads the day's
 * transactions and keeps the cell's activity sums, an activity batch the reverse.
 */
export type Part = 'reg' | 'tx' | 'act' | 'ftd';
export const ALL_PARTS: ReadonlySet<Part> = new Set<Part>(['reg', 'tx', 'act', 'ftd']);
const PART_COLUMNS: Record<Part, readonly string[]> = {
  reg: ['registrations'],
  tx: ['depositors', 'deposit_count', 'challenge_purchases', 'unconverted_tx', 'deposits_usd', 'withdrawals_usd', 'bonuses_usd', 'challenge_fees_usd', 'reset_fees_usd', 'refunds_usd', 'payouts_usd'],
  act: ['unconverted_activity', 'bets_usd', 'ggr_usd', 'ngr_usd'],
  ftd: ['ftd_count', 'unconverted_ftd', 'ftd_usd'],
};
export type { CountColumn, MoneyColumn } from './facts-columns.js';

const TYPE_COLUMN: Record<string, MoneyColumn> = {
  deposit: 'deposits_usd', withdrawal: 'withdrawals_usd', bonus: 'bonuses_usd',
  challenge_fee: 'challenge_fees_usd', reset_fee: 'reset_fees_usd', refund: 'refunds_usd', payout: 'payouts_usd',
};

export interface Cell {
  affiliate: string;
  campaign: string;
  counts: Record<CountColumn, number>;
  sums: Record<MoneyColumn, Money>;
  /** challenge_type \0 account_size → purchases, fees, unconverted */
  products: Map<string, { purchases: number; fees: Money; unconverted: number }>;
  depositors: Set<string>;
  /** The stored depositor count, when the transactions part is not recomputed. */
  keepDepositors?: number;
}

const CHUNK = 500;
const pairKey = (affiliate: string, campaign: string): string => `${affiliate}\u0000${campaign}`;
const splitPair = (key: string): [string, string] => key.split('\u0000') as [string, string];
export const dayStart = (day: string): string => `${day}T00:00:00.000000Z`;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function emptyCell(affiliate: string, campaign: string): Cell {
  return {
    affiliate, campaign,
    counts: Object.fromEntries(COUNT_COLUMNS.map((c) => [c, 0])) as Record<CountColumn, number>,
    sums: Object.fromEntries(MONEY_COLUMNS.map((c) => [c, ZERO])) as Record<MoneyColumn, Money>,
    products: new Map(), depositors: new Set(),
  };
}

/** Campaign as the facts key it ('' when the customer has none). */
export const campaignKey = (value: unknown): string => (value === null || value === undefined ? '' : String(value));
/** Account size as key text: its exact decimal, '' when none. */
export const sizeKey = (value: unknown): string => (value === null || value === undefined || value === '' ? '' : money(value).toFixed());

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

/**
 * Computes every cell of (partner, day) whose pair is in `pairs` ('all': every pair of the day) from
 * the raw rows, and replaces the stored cells of those pairs. Returns how many cells it wrote.
 */
export async function recomputeDay(trx: Knex.Transaction, partner: string, variant: Variant, day: string, pairs: ReadonlySet<string> | 'all', parts: ReadonlySet<Part> = ALL_PARTS, month?: MonthChange): Promise<number> {
  const affiliates = pairs === 'all' ? null : [...new Set([...pairs].map((p) => splitPair(p)[0]))];
  if (affiliates !== null && affiliates.length === 0) return 0;
  const cells = new Map<string, Cell>();
  const cellOf = (affiliate: unknown, campaign: unknown): Cell => {
    const a = String(affiliate);
    const c = campaignKey(campaign);
    const key = pairKey(a, c);
    let cell = cells.get(key);
    if (!cell) cells.set(key, (cell = emptyCell(a, c)));
    return cell;
  };
  const start = dayStart(day);
  const end = dayStart(addDays(day, 1));
  // Affiliate lists are cut in chunks; each query reads only the customers of those affiliates.
  const affiliateChunks: (string[] | null)[] = affiliates === null ? [null] : chunks(affiliates);

  for (const affs of affiliateChunks) {
    const regs = trx('customers').where('partner_id', partner).where('signup_date', '>=', start).where('signup_date', '<', end)
      .groupBy('affiliate_id', 'campaign_id').select('affiliate_id', 'campaign_id').count({ n: '*' });
    if (affs) regs.whereIn('affiliate_id', affs);
    for (const r of parts.has('reg') ? ((await regs) as Record<string, unknown>[]) : []) cellOf(r.affiliate_id, r.campaign_id).counts.registrations += Number(r.n);

    const txs = trx('transactions as t')
      .join('customers as c', (j) => { j.on('c.partner_id', 't.partner_id').andOn('c.customer_id', 't.customer_id'); })
      .where('t.partner_id', partner).where('t.transaction_date', '>=', start).where('t.transaction_date', '<', end)
      .where('t.status', 'approved').whereIn('t.transaction_type', [...REPORT_TX_TYPES])
      .select('t.customer_id', 't.transaction_type', 't.amount_currency', 't.currency', 't.amount_usd', 'c.affiliate_id', 'c.campaign_id', 'c.challenge_type', 'c.account_size');
    if (affs) txs.whereIn('c.affiliate_id', affs);
    const txRows = parts.has('tx') ? ((await txs) as Record<string, unknown>[]) : [];

    const acts = variant === 'igaming' && parts.has('act')
      ? trx('gaming_activity as a')
        .join('customers as c', (j) => { j.on('c.partner_id', 'a.partner_id').andOn('c.customer_id', 'a.customer_id'); })
        .where('a.partner_id', partner).where('a.date', day)
        .select('a.currency', 'a.total_bets', 'a.wins', 'a.ggr', 'a.ngr', 'c.affiliate_id', 'c.campaign_id')
      : null;
    if (acts && affs) acts.whereIn('c.affiliate_id', affs);
    const actRows = acts ? ((await acts) as Record<string, unknown>[]) : [];

    const ftds = trx('report_ftd as f')
      .join('customers as c', (j) => { j.on('c.partner_id', 'f.partner_id').andOn('c.customer_id', 'f.customer_id'); })
      .where('f.partner_id', partner).where('f.day', day).select('f.amount_usd', 'c.affiliate_id', 'c.campaign_id');
    if (affs) ftds.whereIn('c.affiliate_id', affs);
    const ftdRows = parts.has('ftd') ? ((await ftds) as Record<string, unknown>[]) : [];

    const currencies = new Set<string>();
    for (const r of txRows) if (r.amount_usd === null || r.amount_usd === undefined) currencies.add(String(r.currency));
    for (const r of actRows) currencies.add(String(r.currency));
    const fx = await RateBook.load(trx, [...currencies].map((c) => [c, day] as const));

    for (const r of txRows) {
      const cell = cellOf(r.affiliate_id, r.campaign_id);
      const type = String(r.transaction_type);
      const usd = toUsd(fx, r.amount_currency, String(r.currency), r.amount_usd, day);
      if (usd === undefined) cell.counts.unconverted_tx += 1;
      else cell.sums[TYPE_COLUMN[type] as MoneyColumn] = cell.sums[TYPE_COLUMN[type] as MoneyColumn].plus(usd);
      if (type === 'deposit') {
        cell.counts.deposit_count += 1;
        cell.depositors.add(String(r.customer_id));
      } else if (type === 'challenge_fee') {
        cell.counts.challenge_purchases += 1;
        const product = `${campaignKey(r.challenge_type)}\u0000${sizeKey(r.account_size)}`;
        let p = cell.products.get(product);
        if (!p) cell.products.set(product, (p = { purchases: 0, fees: ZERO, unconverted: 0 }));
        p.purchases += 1;
        if (usd === undefined) p.unconverted += 1;
        else p.fees = p.fees.plus(usd);
      }
    }
    for (const r of actRows) {
      const cell = cellOf(r.affiliate_id, r.campaign_id);
      const rate = fx.rate(String(r.currency), day);
      if (rate === undefined) {
        cell.counts.unconverted_activity += 1;
        continue;
      }
      const bets = moneyOrNull(r.total_bets);
      const ngr = moneyOrNull(r.ngr);
      cell.sums.bets_usd = cell.sums.bets_usd.plus(bets === null ? ZERO : bets.times(rate));
      cell.sums.ggr_usd = cell.sums.ggr_usd.plus(activityGgr(r as { ggr: unknown; total_bets: unknown; wins: unknown }).times(rate));
      cell.sums.ngr_usd = cell.sums.ngr_usd.plus(ngr === null ? ZERO : ngr.times(rate));
    }
    for (const r of ftdRows) {
      const cell = cellOf(r.affiliate_id, r.campaign_id);
      cell.counts.ftd_count += 1;
      if (r.amount_usd === null || r.amount_usd === undefined) cell.counts.unconverted_ftd += 1;
      else cell.sums.ftd_usd = cell.sums.ftd_usd.plus(money(r.amount_usd));
    }
  }

  // The stored cells of the named affiliates: columns of the parts not recomputed are kept, and the
  // difference between old and new values moves the month cells.
  const kept = [...ALL_PARTS].filter((p) => !parts.has(p)).flatMap((p) => PART_COLUMNS[p]);
  const base = (table: string) => trx(table).where('partner_id', partner).where('day', day);
  // Every campaign of the named affiliates is recomputed (a superset of the named pairs: exact all the same).
  const named = (q: Knex.QueryBuilder, part: string[] | null) => (part === null ? q : q.whereIn('affiliate_id', part));
  const pairChunks = affiliateChunks;
  const old = new Map<string, Record<string, unknown>>();
  const oldDepositors = new Map<string, Set<string>>();
  for (const part of pairChunks) {
    const stored: Record<string, unknown>[] = await named(base('report_cells'), part).select('affiliate_id', 'campaign_id', ...SUMMED_COLUMNS, 'depositors');
    for (const r of stored) {
      old.set(pairKey(String(r.affiliate_id), String(r.campaign_id)), r);
      if (kept.length === 0) continue;
      const cell = cellOf(r.affiliate_id, r.campaign_id);
      for (const c of kept) {
        if ((COUNT_COLUMNS as readonly string[]).includes(c)) cell.counts[c as CountColumn] = Number(r[c]);
        else cell.sums[c as MoneyColumn] = money(r[c]);
      }
      if (!parts.has('tx')) cell.keepDepositors = Number(r.depositors);
    }
    if (parts.has('tx')) {
      const rows: Record<string, unknown>[] = await named(base('report_depositors'), part).select('affiliate_id', 'campaign_id', 'customer_id');
      for (const r of rows) {
        const key = pairKey(String(r.affiliate_id), String(r.campaign_id));
        let set = oldDepositors.get(key);
        if (!set) oldDepositors.set(key, (set = new Set()));
        set.add(String(r.customer_id));
      }
    }
  }
  // Replace the named cells: what the rows no longer support disappears.
  const tables = ['report_cells', ...(parts.has('tx') ? ['report_purchase_cells', 'report_depositors'] : [])];
  for (const part of pairChunks) for (const table of tables) await named(base(table), part).delete();
  const cellRows: Record<string, unknown>[] = [];
  const productRows: Record<string, unknown>[] = [];
  const depositorRows: Record<string, unknown>[] = [];
  for (const cell of cells.values()) {
    cell.counts.depositors = cell.keepDepositors ?? cell.depositors.size;
    if (COUNT_COLUMNS.every((c) => cell.counts[c] === 0) && MONEY_COLUMNS.every((c) => cell.sums[c].isZero()) && cell.products.size === 0) continue;
    const keyCols = { partner_id: partner, affiliate_id: cell.affiliate, campaign_id: cell.campaign, day };
    cellRows.push({ ...keyCols, ...cell.counts, ...Object.fromEntries(MONEY_COLUMNS.map((c) => [c, cell.sums[c].toFixed()])) });
    for (const [product, p] of cell.products) {
      const [challengeType, accountSize] = product.split('\u0000') as [string, string];
      productRows.push({ ...keyCols, challenge_type: challengeType, account_size: accountSize, purchases: p.purchases, fees_usd: p.fees.toFixed(), unconverted: p.unconverted });
    }
    for (const customer of cell.depositors) depositorRows.push({ partner_id: partner, day, customer_id: customer, affiliate_id: cell.affiliate, campaign_id: cell.campaign });
  }
  for (const part of chunks(cellRows, 1000)) await trx('report_cells').insert(part);
  for (const part of chunks(productRows, 1000)) await trx('report_purchase_cells').insert(part);
  for (const part of chunks(depositorRows, 1000)) await trx('report_depositors').insert(part);
  if (month) addDayChange(month, old, cellRows, parts.has('tx') ? { old: oldDepositors, cells } : undefined);
  return cellRows.length;
}

/** The summed columns of a cell (all but depositors, which a month counts distinct). */
const SUMMED_COLUMNS: readonly string[] = [...COUNT_COLUMNS.filter((c) => c !== 'depositors'), ...MONEY_COLUMNS];

/** What recomputed days did to their month: new − old per pair, and the pairs whose depositors changed. */
export interface MonthChange {
  deltas: Map<string, Record<string, Money>>;
  depositorPairs: Set<string>;
}

export const emptyMonthChange = (): MonthChange => ({ deltas: new Map(), depositorPairs: new Set() });

function addDayChange(month: MonthChange, old: Map<string, Record<string, unknown>>, cellRows: Record<string, unknown>[], depositors?: { old: Map<string, Set<string>>; cells: Map<string, Cell> }): void {
  const written = new Map(cellRows.map((r) => [pairKey(String(r.affiliate_id), String(r.campaign_id)), r]));
  for (const key of new Set([...old.keys(), ...written.keys()])) {
    const before = old.get(key);
    const after = written.get(key);
    const delta: Record<string, Money> = {};
    let moved = false;
    for (const c of SUMMED_COLUMNS) {
      const d = money(after?.[c] ?? 0).minus(money(before?.[c] ?? 0));
      delta[c] = d;
      if (!d.isZero()) moved = true;
    }
    if (!moved) continue;
    const sum = month.deltas.get(key);
    if (!sum) month.deltas.set(key, delta);
    else for (const c of SUMMED_COLUMNS) sum[c] = (sum[c] as Money).plus(delta[c] as Money);
  }
  if (!depositors) return;
  const before = new Map(depositors.old);
  for (const cell of depositors.cells.values()) {
    const key = pairKey(cell.affiliate, cell.campaign);
    const was = before.get(key) ?? new Set<string>();
    if (was.size !== cell.depositors.size || [...was].some((c) => !cell.depositors.has(c))) month.depositorPairs.add(key);
    before.delete(key);
  }
  for (const [key, set] of before) if (set.size > 0) month.depositorPairs.add(key);
}

/**
 * Recomputes the FTD (first approved deposit: earliest transaction_date, then transaction_id) of
 * these customers. Returns the UTC days their FTD moved from and to, per customer.
 */
export async function recomputeFtd(trx: Knex.Transaction, partner: string, customers: readonly string[]): Promise<Map<string, Set<string>>> {
  const touched = new Map<string, Set<string>>();
  const touch = (customer: string, day: string) => {
    let days = touched.get(customer);
    if (!days) touched.set(customer, (days = new Set()));
    days.add(day);
  };
  for (const part of chunks([...new Set(customers)])) {
    const old: Record<string, unknown>[] = await trx('report_ftd').where('partner_id', partner).whereIn('customer_id', part).select('customer_id', 'transaction_id', 'day', 'amount_usd');
    const before = new Map(old.map((r) => [String(r.customer_id), r]));
    const deposits: Record<string, unknown>[] = await trx('transactions').where('partner_id', partner).whereIn('customer_id', part)
      .where('transaction_type', 'deposit').where('status', 'approved')
      .select('customer_id', 'transaction_id', 'transaction_date', 'amount_currency', 'currency', 'amount_usd');
    const first = new Map<string, { row: Record<string, unknown>; at: string }>();
    for (const row of deposits) {
      const at = fromStoreTimestamp(row.transaction_date) as string;
      const id = String(row.customer_id);
      const best = first.get(id);
      if (!best || at < best.at || (at === best.at && String(row.transaction_id) < String(best.row.transaction_id))) first.set(id, { row, at });
    }
    const fx = await RateBook.load(trx, [...first.values()].filter((f) => f.row.amount_usd === null || f.row.amount_usd === undefined).map((f) => [String(f.row.currency), f.at.slice(0, 10)] as const));
    const inserts: Record<string, unknown>[] = [];
    const deletes: string[] = [];
    for (const customer of part) {
      const prior = before.get(customer);
      const next = first.get(customer);
      let row: Record<string, unknown> | undefined;
      if (next) {
        const day = next.at.slice(0, 10);
        const usd = toUsd(fx, next.row.amount_currency, String(next.row.currency), next.row.amount_usd, day);
        row = { partner_id: partner, customer_id: customer, transaction_id: String(next.row.transaction_id), transaction_date: next.at, day,
          amount_currency: money(next.row.amount_currency).toFixed(), currency: String(next.row.currency), amount_usd: usd === undefined ? null : usd.toFixed() };
      }
      const priorUsd = prior && prior.amount_usd !== null && prior.amount_usd !== undefined ? money(prior.amount_usd).toFixed() : null;
      if (prior && row && String(prior.transaction_id) === row.transaction_id && String(prior.day).slice(0, 10) === row.day && priorUsd === row.amount_usd) continue;
      if (prior) {
        touch(customer, String(prior.day).slice(0, 10));
        deletes.push(customer);
      }
      if (row) {
        touch(customer, row.day as string);
        inserts.push(row);
      }
    }
    for (const ids of chunks(deletes)) await trx('report_ftd').where('partner_id', partner).whereIn('customer_id', ids).delete();
    for (const rows of chunks(inserts, 1000)) await trx('report_ftd').insert(rows);
  }
  return touched;
}

/** The current attribution (affiliate, campaign) of these customers. */
async function attributions(trx: Knex.Transaction, partner: string, customers: Iterable<string>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const part of chunks([...new Set(customers)])) {
    const rows: Record<string, unknown>[] = await trx('customers').where('partner_id', partner).whereIn('customer_id', part).select('customer_id', 'affiliate_id', 'campaign_id');
    for (const r of rows) out.set(String(r.customer_id), pairKey(String(r.affiliate_id), campaignKey(r.campaign_id)));
  }
  return out;
}

/** The UTC days on which these customers have transactions or activity (for a customer whose attribution moved). */
async function customerDays(trx: Knex.Transaction, partner: string, variant: Variant, customers: readonly string[]): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  const add = (c: string, d: string) => {
    let s = out.get(c);
    if (!s) out.set(c, (s = new Set()));
    s.add(d);
  };
  for (const part of chunks(customers)) {
    const txs: Record<string, unknown>[] = await trx('transactions').where('partner_id', partner).whereIn('customer_id', part).select('customer_id', 'transaction_date');
    for (const r of txs) add(String(r.customer_id), (fromStoreTimestamp(r.transaction_date) as string).slice(0, 10));
    if (variant === 'igaming') {
      const acts: Record<string, unknown>[] = await trx('gaming_activity').where('partner_id', partner).whereIn('customer_id', part).distinct('customer_id', 'date');
      for (const r of acts) add(String(r.customer_id), String(r.date).slice(0, 10));
    }
  }
  return out;
}

/** Cells named for recomputation: day → its pairs ('all' for a replaced day) and the parts to re-read. */
export class DirtyCells {
  readonly days = new Map<string, { pairs: Set<string> | 'all'; parts: Set<Part> }>();

  private at(day: string) {
    let d = this.days.get(day);
    if (!d) this.days.set(day, (d = { pairs: new Set(), parts: new Set() }));
    return d;
  }

  add(day: string, pair: string, part: Part): void {
    const d = this.at(day);
    d.parts.add(part);
    if (d.pairs !== 'all') d.pairs.add(pair);
  }

  allOf(day: string, part: Part): void {
    const d = this.at(day);
    d.parts.add(part);
    d.pairs = 'all';
  }
}

/** What the stored versions of a batch's records counted in, read before they are replaced. */
export interface PriorVersions {
  /** customer id → its stored attribution, signup day and product. */
  customers: Map<string, { pair: string; signupDay: string; product: string }>;
  /** (customer, day, was a deposit) of stored transactions about to be replaced. */
  transactions: { id: string; customer: string; day: string; deposit: boolean; facts: string }[];
  /** Activity key → its stored version before this batch (null: none), for the cells to move by their difference. */
  activity: Map<string, ActivityValues | null>;
}

export const emptyPriors = (): PriorVersions => ({ customers: new Map(), transactions: [], activity: new Map() });

/** Reads the stored versions of records about to be replaced (customers and transactions; activity keeps its key). */
export async function readPriors(trx: Knex.Transaction, partner: string, entity: string, records: readonly SpecRecord[], into: PriorVersions): Promise<void> {
  if (entity === 'customers') {
    for (const part of chunks(records.map((r) => String(r.customer_id)))) {
      const rows: Record<string, unknown>[] = await trx('customers').where('partner_id', partner).whereIn('customer_id', part)
        .select('customer_id', 'affiliate_id', 'campaign_id', 'signup_date', 'challenge_type', 'account_size');
      for (const r of rows) {
        into.customers.set(String(r.customer_id), {
          pair: pairKey(String(r.affiliate_id), campaignKey(r.campaign_id)),
          signupDay: (fromStoreTimestamp(r.signup_date) as string).slice(0, 10),
          product: `${campaignKey(r.challenge_type)}\u0000${sizeKey(r.account_size)}`,
        });
      }
    }
  } else if (entity === 'transactions') {
    for (const part of chunks(records.map((r) => String(r.transaction_id)))) {
      const rows: Record<string, unknown>[] = await trx('transactions').where('partner_id', partner).whereIn('transaction_id', part)
        .select('transaction_id', 'customer_id', 'transaction_date', 'transaction_type', 'status', 'amount_currency', 'currency', 'amount_usd');
      for (const r of rows) {
        into.transactions.push({ id: String(r.transaction_id), customer: String(r.customer_id), day: (fromStoreTimestamp(r.transaction_date) as string).slice(0, 10),
          deposit: r.transaction_type === 'deposit', facts: transactionFacts(r, fromStoreTimestamp(r.transaction_date) as string) });
      }
    }
  }
}

/**
 * What of a transaction the facts read (customer, type, status, time, amount, currency, USD amount),
 * as one text: a stored version and the version that replaced it with the same text count alike.
 */
function transactionFacts(r: Record<string, unknown>, at: string): string {
  const dec = (v: unknown): string => (v === null || v === undefined || v === '' ? '' : money(v).toFixed());
  return [String(r.customer_id), String(r.transaction_type), String(r.status), at, dec(r.amount_currency), String(r.currency), dec(r.amount_usd)].join('\u0000');
}

export interface WrittenChange {
  /** The store's backend (month cells are summed in SQL on PostgreSQL). */
  kind: StoreKind;
  partner: string;
  variant: Variant;
  customers: readonly SpecRecord[];
  transactions: readonly SpecRecord[];
  activity: readonly SpecRecord[];
  replacedDays: readonly string[];
}

export interface FactsUpdate {
  days: number;
  cells: number;
  ftdCustomers: number;
}

/** Brings the facts of what a batch wrote (and what its records' old versions counted in) up to date, in the batch's transaction. */
export async function updateFacts(trx: Knex.Transaction, change: WrittenChange, priors: PriorVersions): Promise<FactsUpdate> {
  const { partner, variant } = change;
  const dirty = new DirtyCells();
  for (const d of change.replacedDays) dirty.allOf(d, 'act');

  // Customers: a new one counts on its signup day; a moved one (attribution, signup day, product) in every cell of its history.
  const moved: { id: string; pairs: string[]; days: string[] }[] = [];
  for (const c of change.customers) {
    const id = String(c.customer_id);
    const pair = pairKey(String(c.affiliate_id), campaignKey(c.campaign_id));
    const signupDay = utcDay(String(c.signup_date));
    const product = `${campaignKey(c.challenge_type)}\u0000${sizeKey(c.account_size)}`;
    const old = priors.customers.get(id);
    if (!old) dirty.add(signupDay, pair, 'reg');
    else if (old.pair !== pair || old.signupDay !== signupDay || old.product !== product) moved.push({ id, pairs: [old.pair, pair], days: [old.signupDay, signupDay] });
  }
  if (moved.length > 0) {
    const history = await customerDays(trx, partner, variant, moved.map((m) => m.id));
    for (const m of moved) for (const day of [...m.days, ...(history.get(m.id) ?? [])]) for (const pair of m.pairs) for (const part of ALL_PARTS) dirty.add(day, pair, part);
  }

  // Transactions and activity: their customer's current cell on their day, and where the old version counted.
  const touchedDays: [string, string, Part][] = [];
  const ftdCustomers = new Set<string>();
  // A transaction re-sent as it is stored (same customer, type, status, time and amounts) changes no fact.
  const priorFacts = new Map<string, string[]>();
  for (const t of priors.transactions) priorFacts.set(t.id, [...(priorFacts.get(t.id) ?? []), t.facts]);
  const factsOf = (t: SpecRecord): string | undefined => {
    try {
      return transactionFacts(t as Record<string, unknown>, toUtcTimestamp(String(t.transaction_date)));
    } catch {
      return undefined;
    }
  };
  const same = new Map<string, boolean>();
  for (const t of change.transactions) {
    const id = String(t.transaction_id);
    const was = priorFacts.get(id);
    const now = factsOf(t);
    same.set(id, (same.get(id) ?? true) && was !== undefined && was.length === 1 && now !== undefined && was[0] === now);
  }
  const unchanged = new Set([...same].filter(([, s]) => s).map(([id]) => id));
  for (const t of change.transactions) {
    if (unchanged.has(String(t.transaction_id))) continue;
    touchedDays.push([String(t.customer_id), utcDay(String(t.transaction_date)), 'tx']);
    if (t.transaction_type === 'deposit') ftdCustomers.add(String(t.customer_id));
  }
  for (const t of priors.transactions) {
    if (unchanged.has(t.id)) continue;
    touchedDays.push([t.customer, t.day, 'tx']);
    if (t.deposit) ftdCustomers.add(t.customer);
  }
  // Activity rows rewritten in place move their cells by the difference (old versions read before the write);
  // a row of a replaced day, of a customer this batch wrote, or whose old version was not read is recomputed from rows.
  const replaced = new Set(change.replacedDays);
  const batchCustomers = new Set(change.customers.map((c) => String(c.customer_id)));
  const candidates = new Set<string>();
  for (const a of change.activity) {
    const key = activityKey(a as never);
    if (variant === 'igaming' && !replaced.has(String(a.date).slice(0, 10)) && !batchCustomers.has(String(a.customer_id)) && priors.activity.has(key)) candidates.add(key);
  }
  const currentActivity = candidates.size > 0 ? await storedActivity(trx, partner, candidates) : [];
  // Only keys whose written row is found as stored move by difference; any other is recomputed from rows.
  const activityDeltas = new Set(currentActivity.map((r) => activityKey(r as never)));
  for (const a of change.activity) if (!activityDeltas.has(activityKey(a as never))) touchedDays.push([String(a.customer_id), String(a.date), 'act']);
  const ftdMoves = ftdCustomers.size > 0 ? await recomputeFtd(trx, partner, [...ftdCustomers]) : new Map<string, Set<string>>();
  for (const [customer, days] of ftdMoves) for (const day of days) touchedDays.push([customer, day, 'ftd']);
  if (touchedDays.length > 0) {
    const attribution = await attributions(trx, partner, touchedDays.map(([c]) => c));
    for (const [customer, day, part] of touchedDays) {
      const pair = attribution.get(customer);
      if (pair !== undefined) dirty.add(day, pair, part);
    }
  }

  let cells = 0;
  const months = new Map<string, MonthChange>();
  for (const [day, { pairs, parts }] of dirty.days) {
    let month = months.get(day.slice(0, 7));
    if (!month) months.set(day.slice(0, 7), (month = emptyMonthChange()));
    cells += await recomputeDay(trx, partner, variant, day, pairs, parts, month);
  }
  const covered = (day: string, affiliate: string): boolean => {
    const d = dirty.days.get(day);
    if (!d || !d.parts.has('act')) return false;
    return d.pairs === 'all' || [...d.pairs].some((p) => splitPair(p)[0] === affiliate);
  };
  if (variant === 'igaming') await applyActivityDeltas(trx, partner, activityDeltas, currentActivity, priors.activity, covered, months);
  for (const [month, monthChange] of months) await applyMonthChange(trx, partner, month, monthChange);
  return { days: dirty.days.size, cells, ftdCustomers: ftdCustomers.size };
}

/**
 * Moves the month cells by what their days' recomputation changed (new − old stored values:
 * exact, in the same transaction), and counts the month's distinct depositors again for the
 * pairs whose depositors changed.
 */
async function applyMonthChange(trx: Knex.Transaction, partner: string, month: string, change: MonthChange): Promise<void> {
  const pairs = new Set([...change.deltas.keys(), ...change.depositorPairs]);
  if (pairs.size === 0) return;
  const affiliates = [...new Set([...pairs].map((p) => splitPair(p)[0]))];
  const depositorAffiliates = [...new Set([...change.depositorPairs].map((p) => splitPair(p)[0]))];
  const stored = new Map<string, Record<string, unknown>>();
  const recount = new Map<string, number>();
  for (const part of chunks(affiliates)) {
    const rows: Record<string, unknown>[] = await trx('report_month_cells').where('partner_id', partner).where('month', month).whereIn('affiliate_id', part).select('*');
    for (const r of rows) stored.set(pairKey(String(r.affiliate_id), String(r.campaign_id)), r);
  }
  for (const part of chunks(depositorAffiliates)) {
    const rows: Record<string, unknown>[] = await trx('report_depositors').where('partner_id', partner).whereBetween('day', [`${month}-01`, lastDayOf(month)]).whereIn('affiliate_id', part)
      .select('affiliate_id', 'campaign_id').countDistinct({ n: 'customer_id' }).groupBy('affiliate_id', 'campaign_id');
    for (const r of rows) recount.set(pairKey(String(r.affiliate_id), String(r.campaign_id)), Number(r.n));
  }
  const upserts: Record<string, unknown>[] = [];
  const empty: [string, string][] = [];
  for (const pair of pairs) {
    const [affiliate, campaign] = splitPair(pair);
    const before = stored.get(pair);
    const delta = change.deltas.get(pair);
    const row: Record<string, unknown> = { partner_id: partner, affiliate_id: affiliate, campaign_id: campaign, month };
    let zero = true;
    for (const c of SUMMED_COLUMNS) {
      const value = money(before?.[c] ?? 0).plus(delta?.[c] ?? 0);
      row[c] = (COUNT_COLUMNS as readonly string[]).includes(c) ? value.toNumber() : value.toFixed();
      if (!value.isZero()) zero = false;
    }
    row.depositors = change.depositorPairs.has(pair) ? (recount.get(pair) ?? 0) : Number(before?.depositors ?? 0);
    if (row.depositors !== 0) zero = false;
    if (zero) {
      if (before) empty.push([affiliate, campaign]);
    } else upserts.push(row);
  }
  for (const part of chunks(empty)) await trx('report_month_cells').where('partner_id', partner).where('month', month).whereIn(['affiliate_id', 'campaign_id'], part).delete();
  for (const part of chunks(upserts, 1000)) await trx('report_month_cells').insert(part).onConflict(['partner_id', 'month', 'affiliate_id', 'campaign_id']).merge();
}

/** The month cells of the days recomputed (their pairs, or every pair). */
async function recomputeMonths(trx: Knex.Transaction, kind: StoreKind, partner: string, days: [string, ReadonlySet<string> | 'all'][]): Promise<void> {
  const months = new Map<string, Set<string> | 'all'>();
  for (const [day, pairs] of days) {
    const month = day.slice(0, 7);
    const cur = months.get(month);
    if (cur === 'all') continue;
    if (pairs === 'all') months.set(month, 'all');
    else {
      const affiliates = cur ?? new Set<string>();
      for (const p of pairs) affiliates.add(splitPair(p)[0]);
      months.set(month, affiliates);
    }
  }
  for (const [month, pairs] of months) await recomputeMonth(trx, kind, partner, month, pairs);
}

/**
 * Rebuilds a partner's facts from the raw tables (after a bulk load that bypassed the Loader, or
 * to check the incremental facts): every FTD, then every day that has data. Returns cells written.
 */
export async function rebuildFacts(store: Store, partner: string, variant: Variant, options: { pageSize?: number; onProgress?: (what: string) => void } = {}): Promise<number> {
  if (SET_BASED_REBUILD[store.profile.kind]) return rebuildFactsSql(store.knex, partner, variant);
  const knex = store.knex;
  const pageSize = options.pageSize ?? 5000;
  await knex.transaction(async (trx) => {
    for (const table of ['report_ftd', 'report_cells', 'report_month_cells', 'report_purchase_cells', 'report_depositors']) await trx(table).where('partner_id', partner).delete();
  });
  let after = '';
  for (;;) {
    const ids: string[] = (await knex('customers').where('partner_id', partner).where('customer_id', '>', after).orderBy('customer_id').limit(pageSize).pluck('customer_id')).map(String);
    if (ids.length === 0) break;
    await knex.transaction(async (trx) => { await recomputeFtd(trx, partner, ids); });
    after = ids[ids.length - 1] as string;
    options.onProgress?.(`ftd through customer ${after}`);
  }
  const days = new Set<string>();
  const signups: Record<string, unknown>[] = await knex('customers').where('partner_id', partner).min({ lo: 'signup_date' }).max({ hi: 'signup_date' });
  const txs: Record<string, unknown>[] = await knex('transactions').where('partner_id', partner).min({ lo: 'transaction_date' }).max({ hi: 'transaction_date' });
  const acts: Record<string, unknown>[] = variant === 'igaming' ? await knex('gaming_activity').where('partner_id', partner).min({ lo: 'date' }).max({ hi: 'date' }) : [];
  for (const r of [...signups, ...txs, ...acts]) {
    if (r.lo === null || r.lo === undefined) continue;
    // Timestamps read in UTC (SQLite text, PostgreSQL sessions in UTC) and dates both start with their day.
    const lo = String(r.lo).slice(0, 10);
    const hi = String(r.hi).slice(0, 10);
    for (let d = lo; d <= hi; d = addDays(d, 1)) days.add(d);
  }
  let cells = 0;
  for (const day of [...days].sort()) {
    cells += await knex.transaction((trx) => recomputeDay(trx, partner, variant, day, 'all'));
    options.onProgress?.(`day ${day}`);
  }
  await knex.transaction(async (trx) => {
    await trx('report_month_cells').where('partner_id', partner).delete();
    await recomputeMonths(trx, store.profile.kind, partner, [...days].map((d) => [d, 'all']));
  });
  return cells;
}

/**
 * After an FX import: the facts of every day a saved rate covers are recomputed (amounts that
 * waited for the rate convert; a changed rate moves what used it), in the import's transaction.
 */
export async function refreshFactsForRates(trx: Knex.Transaction, kind: StoreKind, rates: readonly { currency: string; date: string }[]): Promise<number> {
  if (rates.length === 0) return 0;
  const byDay = new Map<string, Set<string>>();
  for (const r of rates) {
    let s = byDay.get(r.date);
    if (!s) byDay.set(r.date, (s = new Set()));
    s.add(r.currency);
  }
  const partners: { partner_id: string; variant: Variant }[] = await trx('partners').select('partner_id', 'variant');
  let cells = 0;
  for (const { partner_id: partner, variant } of partners) {
    for (const [day, currencies] of byDay) {
      const ftd: string[] = (await trx('report_ftd').where('partner_id', partner).where('day', day).whereIn('currency', [...currencies]).pluck('customer_id')).map(String);
      if (ftd.length > 0) await recomputeFtd(trx, partner, ftd);
      cells += await recomputeDay(trx, partner, variant, day, 'all');
    }
    await recomputeMonths(trx, kind, partner, [...byDay.keys()].map((d) => [d, 'all']));
  }
  return cells;
}

/** A stored gaming activity row's key (its primary key without the partner). */
const activityKey = (r: { customer_id: unknown; date: unknown; game_type: unknown; currency: unknown }): string =>
  `${String(r.customer_id)}\u0000${String(r.date).slice(0, 10)}\u0000${String(r.game_type)}\u0000${String(r.currency)}`;

/** The values of an activity row a cell sums. */
type ActivityValues = { currency: unknown; total_bets: unknown; wins: unknown; ggr: unknown; ngr: unknown };

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
  const days = [...new Set(records.map((r) => String(r.date).slice(0, 10)))];
  for (const part of chunks([...new Set(records.map((r) => String(r.customer_id)))])) {
    const rows: Record<string, unknown>[] = await trx('gaming_activity').where('partner_id', partner).whereIn('customer_id', part).whereIn('date', days)
      .select('customer_id', 'date', 'game_type', 'currency', 'total_bets', 'wins', 'ggr', 'ngr');
    for (const r of rows) {
      const key = activityKey(r as never);
      if (wanted.has(key) && !into.has(key)) into.set(key, r as ActivityValues);
    }
  }
  for (const key of wanted) if (!into.has(key)) into.set(key, null);
}

/** The activity columns of a cell as a difference (bets, GGR, NGR in USD; unconverted rows). */
type ActivityDelta = { unconverted_activity: number; bets_usd: Money; ggr_usd: Money; ngr_usd: Money };

function addActivity(delta: ActivityDelta, row: ActivityValues, rate: Money | undefined, sign: 1 | -1): void {
  if (rate === undefined) {
    delta.unconverted_activity += sign;
    return;
  }
  const bets = moneyOrNull(row.total_bets);
  const ngr = moneyOrNull(row.ngr);
  delta.bets_usd = delta.bets_usd.plus((bets === null ? ZERO : bets.times(rate)).times(sign));
  delta.ggr_usd = delta.ggr_usd.plus(activityGgr(row).times(rate).times(sign));
  delta.ngr_usd = delta.ngr_usd.plus((ngr === null ? ZERO : ngr.times(rate)).times(sign));
}

/**
 * Moves the day cells of activity rows rewritten in place by their difference: the new stored
 * versions' contribution minus the old versions' (read by `beforeWrite`), per (day, affiliate,
 * campaign) of the customer's current attribution. Cells whose activity part the batch recomputed
 * from rows (`covered`) are left alone. The month cells move with them (through `months`).
 */
/** The stored activity rows of these keys (as written by the batch). */
async function storedActivity(trx: Knex.Transaction, partner: string, keys: ReadonlySet<string>): Promise<Record<string, unknown>[]> {
  const customers = new Set<string>();
  const days = new Set<string>();
  for (const key of keys) {
    const [customer, day] = key.split('\u0000') as [string, string];
    customers.add(customer);
    days.add(day);
  }
  const current: Record<string, unknown>[] = [];
  for (const part of chunks([...customers])) {
    const rows: Record<string, unknown>[] = await trx('gaming_activity').where('partner_id', partner).whereIn('customer_id', part).whereIn('date', [...days])
      .select('customer_id', 'date', 'game_type', 'currency', 'total_bets', 'wins', 'ggr', 'ngr');
    for (const r of rows) if (keys.has(activityKey(r as never))) current.push(r);
  }
  return current;
}

async function applyActivityDeltas(trx: Knex.Transaction, partner: string, keys: ReadonlySet<string>, current: readonly Record<string, unknown>[], priors: ReadonlyMap<string, ActivityValues | null>,
  covered: (day: string, affiliate: string) => boolean, months: Map<string, MonthChange>): Promise<void> {
  if (keys.size === 0) return;
  const attribution = await attributions(trx, partner, [...keys].map((key) => key.split('\u0000')[0] as string));
  const rateNeeds = new Set<string>();
  const versions: { key: string; row: ActivityValues; sign: 1 | -1 }[] = [];
  for (const r of current) versions.push({ key: activityKey(r as never), row: r as ActivityValues, sign: 1 });
  for (const key of keys) {
    const old = priors.get(key);
    if (old) versions.push({ key, row: old, sign: -1 });
  }
  for (const v of versions) rateNeeds.add(`${String(v.row.currency)}\u0000${v.key.split('\u0000')[1] as string}`);
  const fx = await RateBook.load(trx, [...rateNeeds].map((n) => n.split('\u0000') as [string, string]));
  // day → pair → difference
  const deltas = new Map<string, Map<string, ActivityDelta>>();
  for (const v of versions) {
    const [customer, day] = v.key.split('\u0000') as [string, string];
    const pair = attribution.get(customer);
    if (pair === undefined || covered(day, splitPair(pair)[0])) continue;
    let byPair = deltas.get(day);
    if (!byPair) deltas.set(day, (byPair = new Map()));
    let d = byPair.get(pair);
    if (!d) byPair.set(pair, (d = { unconverted_activity: 0, bets_usd: ZERO, ggr_usd: ZERO, ngr_usd: ZERO }));
    addActivity(d, v.row, fx.rate(String(v.row.currency), day), v.sign);
  }
  for (const [day, byPair] of deltas) {
    const moving = [...byPair].filter(([, d]) => d.unconverted_activity !== 0 || !d.bets_usd.isZero() || !d.ggr_usd.isZero() || !d.ngr_usd.isZero());
    if (moving.length === 0) continue;
    const stored = new Map<string, Record<string, unknown>>();
    for (const part of chunks([...new Set(moving.map(([pair]) => splitPair(pair)[0]))])) {
      const rows: Record<string, unknown>[] = await trx('report_cells').where('partner_id', partner).where('day', day).whereIn('affiliate_id', part).select('*');
      for (const r of rows) stored.set(pairKey(String(r.affiliate_id), String(r.campaign_id)), r);
    }
    const monthKey = day.slice(0, 7);
    let month = months.get(monthKey);
    if (!month) months.set(monthKey, (month = emptyMonthChange()));
    const upserts: Record<string, unknown>[] = [];
    const empty: [string, string][] = [];
    for (const [pair, d] of moving) {
      const [affiliate, campaign] = splitPair(pair);
      const before = stored.get(pair);
      const row: Record<string, unknown> = { partner_id: partner, affiliate_id: affiliate, campaign_id: campaign, day };
      for (const c of COUNT_COLUMNS) row[c] = Number(before?.[c] ?? 0);
      for (const c of MONEY_COLUMNS) row[c] = money(before?.[c] ?? 0).toFixed();
      row.unconverted_activity = (row.unconverted_activity as number) + d.unconverted_activity;
      for (const c of ['bets_usd', 'ggr_usd', 'ngr_usd'] as const) row[c] = money(row[c]).plus(d[c]).toFixed();
      const delta: Record<string, Money> = Object.fromEntries(SUMMED_COLUMNS.map((c) => [c, ZERO]));
      delta.unconverted_activity = money(d.unconverted_activity);
      for (const c of ['bets_usd', 'ggr_usd', 'ngr_usd'] as const) delta[c] = d[c];
      const sum = month.deltas.get(pair);
      if (!sum) month.deltas.set(pair, delta);
      else for (const c of SUMMED_COLUMNS) sum[c] = (sum[c] as Money).plus(delta[c] as Money);
      const zero = COUNT_COLUMNS.every((c) => Number(row[c]) === 0) && MONEY_COLUMNS.every((c) => money(row[c]).isZero());
      if (zero) {
        if (before) empty.push([affiliate, campaign]);
      } else upserts.push(row);
    }
    for (const part of chunks(empty)) await trx('report_cells').where('partner_id', partner).where('day', day).whereIn(['affiliate_id', 'campaign_id'], part).delete();
    for (const part of chunks(upserts, 1000)) await trx('report_cells').insert(part).onConflict(['partner_id', 'day', 'affiliate_id', 'campaign_id']).merge();
  }
}
