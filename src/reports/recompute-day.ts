/**
 * Day cells computed from the raw rows of their day: what a rebuild (SQLite) and an FX import use
 * (a load moves cells by difference instead: ./incremental.ts). Computes every cell of a day's
 * named pairs from the day's customers, transactions, activity and FTDs, replaces the stored cells,
 * and moves the month cells by the difference between old and new stored values.
 */
import type { Knex } from 'knex';
import { addDays, lastDayOf } from '../kernel/dates.js';
import { RateBook } from '../kernel/fx.js';
import { money, moneyOrNull, ZERO, type Money } from '../kernel/money.js';
import type { Variant } from '../types.js';
import { COUNT_COLUMNS, MONEY_COLUMNS, REPORT_TX_TYPES, type CountColumn, type MoneyColumn } from './facts-columns.js';
import { dialectOf } from '../store/dialect/index.js';
import { CHUNK, activityGgr, campaignKey, dayStart, pairKey, sizeKey, splitPair, SUMMED_COLUMNS, toUsd, TYPE_COLUMN } from './facts-values.js';
import { recomputeMonth } from './month-cells.js';

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


function emptyCell(affiliate: string, campaign: string): Cell {
  return {
    affiliate, campaign,
    counts: Object.fromEntries(COUNT_COLUMNS.map((c) => [c, 0])) as Record<CountColumn, number>,
    sums: Object.fromEntries(MONEY_COLUMNS.map((c) => [c, ZERO])) as Record<MoneyColumn, Money>,
    products: new Map(), depositors: new Set(),
  };
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
  const dialect = dialectOf(trx);
  // Affiliate lists are cut in chunks; each query reads only the customers of those affiliates.
  const affiliateChunks: (string[] | null)[] = affiliates === null ? [null] : dialect.chunks(affiliates, CHUNK);

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
  for (const part of dialect.insertChunks(cellRows)) await trx('report_cells').insert(part);
  for (const part of dialect.insertChunks(productRows)) await trx('report_purchase_cells').insert(part);
  for (const part of dialect.insertChunks(depositorRows)) await trx('report_depositors').insert(part);
  if (month) addDayChange(month, old, cellRows, parts.has('tx') ? { old: oldDepositors, cells } : undefined);
  return cellRows.length;
}

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
 * Moves the month cells by what their days' recomputation changed (new − old stored values:
 * exact, in the same transaction), and counts the month's distinct depositors again for the
 * pairs whose depositors changed.
 */
export async function applyMonthChange(trx: Knex.Transaction, partner: string, month: string, change: MonthChange): Promise<void> {
  const pairs = new Set([...change.deltas.keys(), ...change.depositorPairs]);
  if (pairs.size === 0) return;
  const affiliates = [...new Set([...pairs].map((p) => splitPair(p)[0]))];
  const depositorAffiliates = [...new Set([...change.depositorPairs].map((p) => splitPair(p)[0]))];
  const stored = new Map<string, Record<string, unknown>>();
  const recount = new Map<string, number>();
  const dialect = dialectOf(trx);
  for (const part of dialect.chunks(affiliates, CHUNK)) {
    const rows: Record<string, unknown>[] = await trx('report_month_cells').where('partner_id', partner).where('month', month).whereIn('affiliate_id', part).select('*');
    for (const r of rows) stored.set(pairKey(String(r.affiliate_id), String(r.campaign_id)), r);
  }
  for (const part of dialect.chunks(depositorAffiliates, CHUNK)) {
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
  for (const part of dialect.chunks(empty, CHUNK)) await trx('report_month_cells').where('partner_id', partner).where('month', month).whereIn(['affiliate_id', 'campaign_id'], part).delete();
  for (const part of dialect.insertChunks(upserts)) await trx('report_month_cells').insert(part).onConflict(['partner_id', 'month', 'affiliate_id', 'campaign_id']).merge();
}

/** The month cells of the days recomputed (their pairs, or every pair). */
export async function recomputeMonths(trx: Knex.Transaction, partner: string, days: [string, ReadonlySet<string> | 'all'][]): Promise<void> {
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
  for (const [month, pairs] of months) await recomputeMonth(trx, partner, month, pairs);
}
