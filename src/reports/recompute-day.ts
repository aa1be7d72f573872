/**
 * Day cells computed from the raw rows of their day: what a rebuild (SQLite) and an FX import use
 * (a load moves cells by difference instead: ./incremental.ts). Computes every cell of a day
 * from the day's customers, transactions, activity and FTDs and replaces the stored cells.
 */
import type { Knex } from 'knex';
import { addDays } from '../kernel/dates.js';
import { RateBook } from '../kernel/fx.js';
import { money, moneyOrNull, ZERO, type Money } from '../kernel/money.js';
import type { Variant } from '../types.js';
import { COUNT_COLUMNS, MONEY_COLUMNS, REPORT_TX_TYPES, type CountColumn, type MoneyColumn } from './facts-columns.js';
import { dialectOf } from '../store/dialect/index.js';
import { activityGgr, campaignKey, dayStart, pairKey, productKey, toUsd, TYPE_COLUMN } from './facts-values.js';
import { recomputeMonth } from './month-cells.js';

export interface Cell {
  affiliate: string;
  campaign: string;
  counts: Record<CountColumn, number>;
  sums: Record<MoneyColumn, Money>;
  /** challenge_type \0 account_size → purchases, fees, unconverted */
  products: Map<string, { purchases: number; fees: Money; unconverted: number }>;
  depositors: Set<string>;
}


function emptyCell(affiliate: string, campaign: string): Cell {
  return {
    affiliate, campaign,
    counts: Object.fromEntries(COUNT_COLUMNS.map((c) => [c, 0])) as Record<CountColumn, number>,
    sums: Object.fromEntries(MONEY_COLUMNS.map((c) => [c, ZERO])) as Record<MoneyColumn, Money>,
    products: new Map(), depositors: new Set(),
  };
}

/** Computes every cell of (partner, day) from the raw rows, and replaces the day's stored cells. Returns how many cells it wrote. */
export async function recomputeDay(trx: Knex.Transaction, partner: string, variant: Variant, day: string): Promise<number> {
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
  const regs: Record<string, unknown>[] = await trx('customers').where('partner_id', partner).where('signup_date', '>=', start).where('signup_date', '<', end)
    .groupBy('affiliate_id', 'campaign_id').select('affiliate_id', 'campaign_id').count({ n: '*' });
  for (const r of regs) cellOf(r.affiliate_id, r.campaign_id).counts.registrations += Number(r.n);

  const txRows: Record<string, unknown>[] = await trx('transactions as t')
    .join('customers as c', (j) => { j.on('c.partner_id', 't.partner_id').andOn('c.customer_id', 't.customer_id'); })
    .where('t.partner_id', partner).where('t.transaction_date', '>=', start).where('t.transaction_date', '<', end)
    .where('t.status', 'approved').whereIn('t.transaction_type', [...REPORT_TX_TYPES])
    .select('t.customer_id', 't.transaction_type', 't.amount_currency', 't.currency', 't.amount_usd', 'c.affiliate_id', 'c.campaign_id', 'c.challenge_type', 'c.account_size');

  const actRows: Record<string, unknown>[] = variant === 'igaming'
    ? await trx('gaming_activity as a')
      .join('customers as c', (j) => { j.on('c.partner_id', 'a.partner_id').andOn('c.customer_id', 'a.customer_id'); })
      .where('a.partner_id', partner).where('a.date', day)
      .select('a.currency', 'a.total_bets', 'a.wins', 'a.ggr', 'a.ngr', 'c.affiliate_id', 'c.campaign_id')
    : [];

  const ftdRows: Record<string, unknown>[] = await trx('report_ftd as f')
    .join('customers as c', (j) => { j.on('c.partner_id', 'f.partner_id').andOn('c.customer_id', 'f.customer_id'); })
    .where('f.partner_id', partner).where('f.day', day).select('f.amount_usd', 'c.affiliate_id', 'c.campaign_id');

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
      const product = productKey(r.challenge_type, r.account_size);
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

  // Replace the day's cells: what the rows no longer support disappears.
  for (const table of ['report_cells', 'report_purchase_cells', 'report_depositors']) await trx(table).where('partner_id', partner).where('day', day).delete();
  const cellRows: Record<string, unknown>[] = [];
  const productRows: Record<string, unknown>[] = [];
  const depositorRows: Record<string, unknown>[] = [];
  for (const cell of cells.values()) {
    cell.counts.depositors = cell.depositors.size;
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
  return cellRows.length;
}

/** The month cells of these months (YYYY-MM), recomputed whole. */
export async function recomputeMonths(trx: Knex.Transaction, partner: string, months: Iterable<string>): Promise<void> {
  for (const month of new Set(months)) await recomputeMonth(trx, partner, month);
}
