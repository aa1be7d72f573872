/**
 * The affiliate report (docs/reports.md): per affiliate and day, month or campaign, read from the
 * report facts (./facts.ts) and, for commissions, from the ledger through the `commissions`
 * report's own query (../commission/report.ts). Every amount is an exact decimal in USD.
 */
import type { Knex } from 'knex';
import { ledgerReport } from '../commission/report.js';
import { lastDayOf } from '../kernel/dates.js';
import { money, ZERO, type Money } from '../kernel/money.js';
import type { Store } from '../store/store.js';
import { COUNT_COLUMNS, MONEY_COLUMNS, type MoneyColumn } from './facts-columns.js';

export type Grain = 'day' | 'month' | 'campaign';

export interface ReportFilter {
  partner?: string;
  affiliate?: string;
  campaign?: string;
  /** First and last UTC day, inclusive. */
  from?: string;
  to?: string;
}

export interface ProductRow {
  challenge_type: string | null;
  account_size: string | null;
  purchases: number;
  fees_usd: string;
}

export interface AffiliateRow {
  partner: string;
  affiliate: string;
  /** The row's day (by day), month (by month) or campaign (by campaign; null: none). */
  day?: string;
  month?: string;
  campaign?: string | null;
  registrations: number;
  ftd_count: number;
  ftd_usd: string;
  depositors: number;
  deposit_count: number;
  deposits_usd: string;
  withdrawals_usd: string;
  bonuses_usd: string;
  net_deposits_usd: string;
  bets_usd: string;
  ggr_usd: string;
  ngr_usd: string;
  challenge_purchases: number;
  challenge_purchases_by_product: ProductRow[];
  challenge_fees_usd: string;
  reset_fees_usd: string;
  refunds_usd: string;
  payouts_usd: string;
  /** Source records left out of the USD sums: no amount_usd and no FX rate of their day. */
  unconverted: number;
  /** From the ledger, per month (null in day and campaign rows: the ledger books per affiliate and month). */
  commissions_earned_usd: string | null;
  commissions_clawed_back_usd: string | null;
  commissions_net_usd: string | null;
  /** Ledger entries held (waiting for an FX rate). */
  commissions_held: number | null;
}

export interface AffiliateReport {
  filter: ReportFilter & { by: Grain };
  rows: AffiliateRow[];
}

/** The row's period or campaign as an SQL expression on a day facts table. */
const groupExpr = (store: Store): Record<Grain | 'total', string> =>
  ({ day: store.dialect.dateText('day'), month: store.dialect.monthText('day'), campaign: 'campaign_id', total: "''" });

/** The same for month cells (no day grain: day reports read day cells). */
const MONTH_GROUP_EXPR: Record<Grain | 'total', string> = { day: 'month', month: 'month', campaign: 'campaign_id', total: "''" };

/** `12.30`, or every digit when there are more than two decimals (converted amounts). */
export function moneyText(value: Money): string {
  return value.decimalPlaces() <= 2 ? value.toFixed(2) : value.toFixed();
}

const PLAIN_DECIMAL = /^(-?)(\d+)(?:\.(\d*))?$/;

/**
 * The same for a sum as PostgreSQL returns it (plain decimal text), without a Decimal: a month's
 * report by campaign formats tens of thousands of amounts, and decimal.js costs microseconds each.
 */
export function sumText(value: Money | string): string {
  if (typeof value !== 'string') return moneyText(value);
  const m = PLAIN_DECIMAL.exec(value);
  if (!m) return moneyText(money(value));
  const whole = (m[2] as string).replace(/^0+(?=\d)/, '');
  const fraction = (m[3] ?? '').replace(/0+$/, '');
  const zero = /^0*$/.test(whole) && fraction === '';
  return `${m[1] && !zero ? '-' : ''}${whole}.${fraction.length <= 2 ? fraction.padEnd(2, '0') : fraction}`;
}

/** a − b exactly, for two sums (decimal text from PostgreSQL, or Decimals). */
export function differenceText(a: Money | string, b: Money | string): string {
  if (typeof a !== 'string' || typeof b !== 'string') return moneyText(money(a).minus(money(b)));
  const ma = PLAIN_DECIMAL.exec(a);
  const mb = PLAIN_DECIMAL.exec(b);
  if (!ma || !mb) return moneyText(money(a).minus(money(b)));
  const scale = Math.max((ma[3] ?? '').length, (mb[3] ?? '').length);
  const scaled = (m: RegExpExecArray) => BigInt(`${m[1]}${m[2]}${(m[3] ?? '').padEnd(scale, '0')}`);
  const d = scaled(ma) - scaled(mb);
  const digits = (d < 0n ? -d : d).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return sumText(`${d < 0n ? '-' : ''}${text}`);
}

function applyFilter(q: Knex.QueryBuilder, filter: ReportFilter, source: 'day' | 'month' = 'day'): Knex.QueryBuilder {
  if (filter.partner) q.where('partner_id', filter.partner);
  if (filter.affiliate) q.where('affiliate_id', filter.affiliate);
  if (filter.campaign !== undefined) q.where('campaign_id', filter.campaign);
  if (filter.from) q.where(source, '>=', source === 'day' ? filter.from : filter.from.slice(0, 7));
  if (filter.to) q.where(source, '<=', source === 'day' ? filter.to : filter.to.slice(0, 7));
  return q;
}

/** Whether the range is made of whole months (then month cells answer it). */
export function wholeMonths(filter: ReportFilter): boolean {
  return (!filter.from || filter.from.endsWith('-01')) && (!filter.to || filter.to === lastDayOf(filter.to.slice(0, 7)));
}

const groupKey = (partner: unknown, affiliate: unknown, g: unknown): string => `${String(partner)}\u0000${String(affiliate)}\u0000${String(g)}`;

interface Sums {
  partner: string;
  affiliate: string;
  group: string;
  counts: Record<string, number>;
  /** Decimals, or (PostgreSQL, one SQL sum per group) the sum's decimal text as returned. */
  sums: Record<string, Money | string>;
}

/** Sums of these columns of a facts table per (partner, affiliate, group [, extra columns]). */
async function groupedSums(store: Store, table: string, filter: ReportFilter, grain: Grain | 'total', counts: readonly string[], sums: readonly string[], extra: readonly string[] = []): Promise<Map<string, Sums & { extra: Record<string, string> }>> {
  // Exact decimal sums are taken in SQL where it sums exactly (PostgreSQL's NUMERIC); SQLite stores decimal text, summed here.
  const sumInSql = store.dialect.exactDecimals;
  const source = table === 'report_month_cells' ? 'month' : 'day';
  const expr = source === 'month' ? MONTH_GROUP_EXPR[grain] : groupExpr(store)[grain];
  const knex = store.knex;
  const out = new Map<string, Sums & { extra: Record<string, string> }>();
  const q = applyFilter(knex(table), filter, source).select('partner_id', 'affiliate_id', knex.raw(`${expr} as g`), ...extra);
  // Month cells of one month by campaign: one row per group already (the month cell), nothing to sum.
  const oneRowPerGroup = source === 'month' && grain === 'campaign' && filter.from !== undefined && filter.to !== undefined && filter.from.slice(0, 7) === filter.to.slice(0, 7);
  if (oneRowPerGroup) {
    q.select(...counts, ...sums);
  } else if (sumInSql) {
    q.groupBy('partner_id', 'affiliate_id', knex.raw(expr), ...extra);
    for (const c of [...counts, ...sums]) q.sum({ [c]: c });
  } else {
    q.select(...counts, ...sums);
  }
  const rows: Record<string, unknown>[] = await q;
  for (const r of rows) {
    const key = groupKey(r.partner_id, r.affiliate_id, r.g) + extra.map((e) => `\u0000${String(r[e])}`).join('');
    let s = out.get(key);
    if (!s) {
      s = { partner: String(r.partner_id), affiliate: String(r.affiliate_id), group: String(r.g), counts: {}, sums: {}, extra: Object.fromEntries(extra.map((e) => [e, String(r[e])])) };
      for (const c of counts) s.counts[c] = 0;
      for (const c of sums) s.sums[c] = ZERO;
      out.set(key, s);
    }
    for (const c of counts) s.counts[c] = (s.counts[c] as number) + Number(r[c] ?? 0);
    // Summed in SQL: one row per group, its sums kept as the text PostgreSQL gives.
    if (sumInSql || oneRowPerGroup) for (const c of sums) s.sums[c] = r[c] === null || r[c] === undefined ? '0' : String(r[c]);
    else for (const c of sums) s.sums[c] = (s.sums[c] as Money).plus(money(r[c] ?? 0));
  }
  return out;
}

/** Distinct depositors per group: a customer depositing on several days of a month counts once. */
async function depositorCounts(store: Store, filter: ReportFilter, grain: Grain | 'total'): Promise<Map<string, number>> {
  const expr = groupExpr(store)[grain];
  const knex = store.knex;
  const rows: Record<string, unknown>[] = await applyFilter(knex('report_depositors'), filter)
    .select('partner_id', 'affiliate_id', knex.raw(`${expr} as g`))
    .countDistinct({ n: 'customer_id' })
    .groupBy('partner_id', 'affiliate_id', knex.raw(expr));
  return new Map(rows.map((r) => [groupKey(r.partner_id, r.affiliate_id, r.g), Number(r.n)]));
}

function emptyRow(partner: string, affiliate: string): AffiliateRow {
  return {
    partner, affiliate, registrations: 0, ftd_count: 0, ftd_usd: '0.00', depositors: 0, deposit_count: 0, deposits_usd: '0.00', withdrawals_usd: '0.00',
    bonuses_usd: '0.00', net_deposits_usd: '0.00', bets_usd: '0.00', ggr_usd: '0.00', ngr_usd: '0.00', challenge_purchases: 0, challenge_purchases_by_product: [],
    challenge_fees_usd: '0.00', reset_fees_usd: '0.00', refunds_usd: '0.00', payouts_usd: '0.00', unconverted: 0,
    commissions_earned_usd: null, commissions_clawed_back_usd: null, commissions_net_usd: null, commissions_held: null,
  };
}

function setGroup(row: AffiliateRow, grain: Grain, group: string): void {
  if (grain === 'day') row.day = group;
  else if (grain === 'month') row.month = group;
  else row.campaign = group === '' ? null : group;
}

/** The affiliate report rows, ordered by partner, affiliate, then day, month or campaign. */
export async function affiliateReport(store: Store, filter: ReportFilter, grain: Grain): Promise<AffiliateReport> {
  // Three independent reads: side by side on a pooled store.
  // A month report of whole months reads month cells, whose depositors are already distinct per month.
  const months = grain !== 'day' && wholeMonths(filter);
  // Month cells count each month's depositors once: right for month rows, and for campaign rows of a single month.
  const monthDepositors = months && (grain === 'month' || (filter.from !== undefined && filter.to !== undefined && filter.from.slice(0, 7) === filter.to.slice(0, 7)));
  const [cells, depositors, products] = await Promise.all([
    groupedSums(store, months ? 'report_month_cells' : 'report_cells', filter, grain, COUNT_COLUMNS.filter((c) => c !== 'depositors' || monthDepositors), MONEY_COLUMNS),
    monthDepositors ? Promise.resolve(new Map<string, number>()) : depositorCounts(store, filter, grain),
    groupedSums(store, 'report_purchase_cells', filter, grain, ['purchases'], ['fees_usd'], ['challenge_type', 'account_size']),
  ]);
  const rows = new Map<string, AffiliateRow>();
  const rowAt = (partner: string, affiliate: string, group: string): AffiliateRow => {
    const key = groupKey(partner, affiliate, group);
    let row = rows.get(key);
    if (!row) {
      rows.set(key, (row = emptyRow(partner, affiliate)));
      setGroup(row, grain, group);
    }
    return row;
  };
  for (const s of cells.values()) {
    const row = rowAt(s.partner, s.affiliate, s.group);
    for (const c of ['registrations', 'ftd_count', 'deposit_count', 'challenge_purchases'] as const) row[c] = s.counts[c] as number;
    row.unconverted = (s.counts.unconverted_tx as number) + (s.counts.unconverted_activity as number) + (s.counts.unconverted_ftd as number);
    for (const c of MONEY_COLUMNS) row[c as MoneyColumn] = sumText(s.sums[c] as Money | string);
    row.net_deposits_usd = differenceText(s.sums.deposits_usd as Money | string, s.sums.withdrawals_usd as Money | string);
    if (monthDepositors) row.depositors = s.counts.depositors as number;
  }
  for (const [key, n] of depositors) {
    const row = rows.get(key);
    if (row) row.depositors = n;
  }
  for (const p of products.values()) {
    const row = rowAt(p.partner, p.affiliate, p.group);
    row.challenge_purchases_by_product.push({
      challenge_type: p.extra.challenge_type === '' ? null : (p.extra.challenge_type as string),
      account_size: p.extra.account_size === '' ? null : (p.extra.account_size as string),
      purchases: p.counts.purchases as number,
      fees_usd: sumText(p.sums.fees_usd as Money | string),
    });
  }
  for (const row of rows.values()) row.challenge_purchases_by_product.sort((a, b) => (a.challenge_type ?? '').localeCompare(b.challenge_type ?? '') || money(a.account_size ?? 0).comparedTo(money(b.account_size ?? 0)));
  if (grain === 'month' && filter.campaign === undefined) await addCommissions(store, filter, (partner, affiliate, month) => rowAt(partner, affiliate, month));
  const list = [...rows.values()].sort((a, b) => a.partner.localeCompare(b.partner) || a.affiliate.localeCompare(b.affiliate) ||
    (a.day ?? a.month ?? a.campaign ?? '').localeCompare(b.day ?? b.month ?? b.campaign ?? ''));
  return { filter: { ...filter, by: grain }, rows: list };
}

/** Commission columns per (partner, affiliate, month) from the `commissions` report's totals and holds. */
async function addCommissions(store: Store, filter: ReportFilter, rowAt: (partner: string, affiliate: string, month: string) => AffiliateRow): Promise<void> {
  const ledger = await ledgerReport(store.knex, { partner: filter.partner, affiliate: filter.affiliate }, { lines: false, plans: [], now: store.now() });
  const inRange = (month: string) => (!filter.from || month >= filter.from.slice(0, 7)) && (!filter.to || month <= filter.to.slice(0, 7));
  const acc = new Map<AffiliateRow, { earned: Money; clawed: Money; held: number }>();
  const at = (row: AffiliateRow) => {
    let a = acc.get(row);
    if (!a) acc.set(row, (a = { earned: ZERO, clawed: ZERO, held: 0 }));
    return a;
  };
  for (const t of ledger.totals) {
    if (!inRange(t.month)) continue;
    const a = at(rowAt(t.partner, t.affiliate, t.month));
    a.earned = a.earned.plus(money(t.earned));
    a.clawed = a.clawed.plus(money(t.clawed_back));
  }
  for (const h of ledger.held) if (inRange(h.period)) at(rowAt(h.partner_id, h.affiliate_id, h.period)).held += 1;
  for (const [row, a] of acc) {
    row.commissions_earned_usd = a.earned.toFixed(2);
    row.commissions_clawed_back_usd = a.clawed.toFixed(2);
    row.commissions_net_usd = a.earned.plus(a.clawed).toFixed(2);
    row.commissions_held = a.held;
  }
}

/** The report's columns in CSV and table order (by-product purchases as one text cell). */
export const REPORT_COLUMNS = ['registrations', 'ftd_count', 'ftd_usd', 'depositors', 'deposit_count', 'deposits_usd', 'withdrawals_usd', 'bonuses_usd', 'net_deposits_usd',
  'bets_usd', 'ggr_usd', 'ngr_usd', 'challenge_purchases', 'challenge_purchases_by_product', 'challenge_fees_usd', 'reset_fees_usd', 'refunds_usd', 'payouts_usd', 'unconverted',
  'commissions_earned_usd', 'commissions_clawed_back_usd', 'commissions_net_usd', 'commissions_held'] as const;
export type ReportColumn = (typeof REPORT_COLUMNS)[number];

/** `standard/10000:3 (297.00)`; products joined by `; `. */
export function productsText(products: readonly ProductRow[]): string {
  return products.map((p) => `${p.challenge_type ?? '-'}/${p.account_size ?? '-'}:${p.purchases} (${p.fees_usd})`).join('; ');
}

export function cellText(row: AffiliateRow, column: ReportColumn): string {
  const v = row[column];
  if (column === 'challenge_purchases_by_product') return productsText(row.challenge_purchases_by_product);
  return v === null || v === undefined ? '' : String(v);
}

const csvQuote = (s: string): string => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** The report as CSV: a header row, one line per row. */
export function reportCsv(report: AffiliateReport): string {
  const by = report.filter.by;
  const header = ['partner', 'affiliate', by, ...REPORT_COLUMNS];
  const lines = [header.join(',')];
  for (const row of report.rows) {
    const g = by === 'day' ? row.day : by === 'month' ? row.month : row.campaign;
    lines.push([row.partner, row.affiliate, g ?? '', ...REPORT_COLUMNS.map((c) => cellText(row, c))].map(csvQuote).join(','));
  }
  return lines.join('\n') + '\n';
}
