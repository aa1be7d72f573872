/**
 * Drill-down of one report cell: the source records behind a figure (the deposits behind an FTD
 * count, the activity rows behind a GGR sum) and the ledger lines behind a commission figure, read
 * from the raw tables and the ledger (not from the facts), with their total, so that a figure can
 * be checked by hand. No personal fields (names, e-mail, click ids) are ever listed.
 */
import type { Knex } from 'knex';
import { addDays } from '../kernel/dates.js';
import { RateBook } from '../kernel/fx.js';
import { listHolds, toLedgerLine } from '../commission/ledger.js';
import { money, moneyOrNull, ZERO, type Money } from '../kernel/money.js';
import { fromStoreTimestamp } from '../store/values.js';
import { moneyText, REPORT_COLUMNS, type ReportColumn } from './affiliates.js';
import { activityGgr, campaignKey, dayStart, toUsd } from './facts-values.js';

export interface ExplainCell {
  partner?: string;
  affiliate: string;
  /** undefined: every campaign; '' : customers without a campaign. */
  campaign?: string;
  from: string;
  to: string;
}

export interface Explanation {
  column: ReportColumn;
  cell: ExplainCell;
  /** The figure recomputed from the records listed (equals the report's cell). */
  total: string | number;
  records: Record<string, unknown>[];
}

const TX_COLUMN: Partial<Record<ReportColumn, string[]>> = {
  depositors: ['deposit'], deposit_count: ['deposit'], deposits_usd: ['deposit'], withdrawals_usd: ['withdrawal'], bonuses_usd: ['bonus'],
  net_deposits_usd: ['deposit', 'withdrawal'], challenge_purchases: ['challenge_fee'], challenge_purchases_by_product: ['challenge_fee'],
  challenge_fees_usd: ['challenge_fee'], reset_fees_usd: ['reset_fee'], refunds_usd: ['refund'], payouts_usd: ['payout'],
};
const ACTIVITY_COLUMNS: readonly ReportColumn[] = ['bets_usd', 'ggr_usd', 'ngr_usd'];

export function isReportColumn(name: string): name is ReportColumn {
  return (REPORT_COLUMNS as readonly string[]).includes(name);
}

function customerFilter(q: Knex.QueryBuilder, cell: ExplainCell): Knex.QueryBuilder {
  q.where('c.affiliate_id', cell.affiliate);
  if (cell.campaign === '') q.where((w) => { w.whereNull('c.campaign_id').orWhere('c.campaign_id', ''); });
  else if (cell.campaign !== undefined) q.where('c.campaign_id', cell.campaign);
  return q;
}

const joinCustomers = (alias: string) => (j: Knex.JoinClause) => { j.on('c.partner_id', `${alias}.partner_id`).andOn('c.customer_id', `${alias}.customer_id`); };

export async function explainCell(knex: Knex, column: ReportColumn, cell: ExplainCell): Promise<Explanation> {
  const start = dayStart(cell.from);
  const end = dayStart(addDays(cell.to, 1));
  const partnerOf = (q: Knex.QueryBuilder, col: string) => (cell.partner ? q.where(col, cell.partner) : q);

  if (column === 'registrations') {
    const rows: Record<string, unknown>[] = await customerFilter(partnerOf(knex('customers as c'), 'c.partner_id'), cell)
      .where('c.signup_date', '>=', start).where('c.signup_date', '<', end)
      .orderBy(['c.signup_date', 'c.customer_id']).select('c.partner_id', 'c.customer_id', 'c.signup_date', 'c.campaign_id');
    return { column, cell, total: rows.length, records: rows.map((r) => ({ source: 'customers', partner: r.partner_id, customer_id: r.customer_id, signup_date: fromStoreTimestamp(r.signup_date), campaign_id: campaignKey(r.campaign_id) || null })) };
  }

  if (column === 'ftd_count' || column === 'ftd_usd') {
    const rows: Record<string, unknown>[] = await customerFilter(partnerOf(knex('report_ftd as f').join('customers as c', joinCustomers('f')), 'f.partner_id'), cell)
      .where('f.day', '>=', cell.from).where('f.day', '<=', cell.to)
      .orderBy(['f.transaction_date', 'f.transaction_id']).select('f.partner_id', 'f.customer_id', 'f.transaction_id', 'f.transaction_date', 'f.amount_currency', 'f.currency', 'f.amount_usd');
    let usd = ZERO;
    for (const r of rows) if (r.amount_usd !== null && r.amount_usd !== undefined) usd = usd.plus(money(r.amount_usd));
    return {
      column, cell, total: column === 'ftd_count' ? rows.length : moneyText(usd),
      records: rows.map((r) => ({ source: 'transactions', partner: r.partner_id, transaction_id: r.transaction_id, customer_id: r.customer_id, transaction_type: 'deposit', status: 'approved',
        transaction_date: fromStoreTimestamp(r.transaction_date), amount_currency: money(r.amount_currency).toFixed(), currency: r.currency,
        usd: r.amount_usd === null || r.amount_usd === undefined ? null : moneyText(money(r.amount_usd)), first_approved_deposit: true })),
    };
  }

  const types = TX_COLUMN[column];
  if (types) {
    const rows: Record<string, unknown>[] = await customerFilter(partnerOf(knex('transactions as t').join('customers as c', joinCustomers('t')), 't.partner_id'), cell)
      .where('t.transaction_date', '>=', start).where('t.transaction_date', '<', end).where('t.status', 'approved').whereIn('t.transaction_type', types)
      .orderBy(['t.transaction_date', 't.transaction_id'])
      .select('t.partner_id', 't.transaction_id', 't.customer_id', 't.transaction_type', 't.transaction_date', 't.amount_currency', 't.currency', 't.amount_usd', 'c.challenge_type', 'c.account_size');
    const days = rows.map((r) => [String(r.currency), (fromStoreTimestamp(r.transaction_date) as string).slice(0, 10)] as const);
    const fx = await RateBook.load(knex, days);
    let total = ZERO;
    const customers = new Set<string>();
    const records = rows.map((r) => {
      const day = (fromStoreTimestamp(r.transaction_date) as string).slice(0, 10);
      const usd = toUsd(fx, r.amount_currency, String(r.currency), r.amount_usd, day);
      const sign = column === 'net_deposits_usd' && r.transaction_type === 'withdrawal' ? -1 : 1;
      if (usd !== undefined) total = total.plus(usd.times(sign));
      customers.add(String(r.customer_id));
      return {
        source: 'transactions', partner: r.partner_id, transaction_id: r.transaction_id, customer_id: r.customer_id, transaction_type: r.transaction_type, status: 'approved',
        transaction_date: fromStoreTimestamp(r.transaction_date), amount_currency: money(r.amount_currency).toFixed(), currency: r.currency,
        usd: usd === undefined ? null : moneyText(usd),
        ...(r.transaction_type === 'challenge_fee' ? { challenge_type: r.challenge_type ?? null, account_size: r.account_size === null || r.account_size === undefined ? null : money(r.account_size).toFixed() } : {}),
      };
    });
    const count = column === 'depositors' ? customers.size : column === 'deposit_count' || column === 'challenge_purchases' || column === 'challenge_purchases_by_product' ? rows.length : null;
    return { column, cell, total: count ?? moneyText(total), records };
  }

  if (ACTIVITY_COLUMNS.includes(column)) {
    const rows: Record<string, unknown>[] = await customerFilter(partnerOf(knex('gaming_activity as a').join('customers as c', joinCustomers('a')), 'a.partner_id'), cell)
      .where('a.date', '>=', cell.from).where('a.date', '<=', cell.to)
      .orderBy(['a.date', 'a.customer_id', 'a.game_type', 'a.currency'])
      .select('a.partner_id', 'a.date', 'a.customer_id', 'a.game_type', 'a.currency', 'a.total_bets', 'a.wins', 'a.ggr', 'a.ngr');
    const fx = await RateBook.load(knex, rows.map((r) => [String(r.currency), String(r.date).slice(0, 10)] as const));
    let total = ZERO;
    const records = rows.map((r) => {
      const day = String(r.date).slice(0, 10);
      const rate = fx.rate(String(r.currency), day);
      const value: Money = column === 'ggr_usd' ? activityGgr(r as { ggr: unknown; total_bets: unknown; wins: unknown }) : moneyOrNull(column === 'bets_usd' ? r.total_bets : r.ngr) ?? ZERO;
      const usd = rate === undefined ? null : value.times(rate);
      if (usd !== null) total = total.plus(usd);
      return {
        source: 'gaming_activity', partner: r.partner_id, date: day, customer_id: r.customer_id, game_type: r.game_type, currency: r.currency,
        total_bets: r.total_bets === null ? null : money(r.total_bets).toFixed(), wins: r.wins === null ? null : money(r.wins).toFixed(),
        ggr: r.ggr === null ? null : money(r.ggr).toFixed(), ngr: r.ngr === null ? null : money(r.ngr).toFixed(), usd: usd === null ? null : moneyText(usd),
      };
    });
    return { column, cell, total: moneyText(total), records };
  }

  if (column === 'unconverted') {
    const explained: Record<string, unknown>[] = [];
    for (const c of ['ftd_count', 'deposits_usd', 'withdrawals_usd', 'bonuses_usd', 'challenge_fees_usd', 'reset_fees_usd', 'refunds_usd', 'payouts_usd', 'ggr_usd'] as const) {
      const part = await explainCell(knex, c, cell);
      for (const r of part.records) if (r.usd === null) explained.push({ ...r, column: c });
    }
    return { column, cell, total: explained.length, records: explained };
  }

  // Commission columns: the ledger lines (and holds) of the affiliate's months in the range.
  const fromMonth = cell.from.slice(0, 7);
  const toMonth = cell.to.slice(0, 7);
  if (column === 'commissions_held') {
    const holds = (await listHolds(knex, { partner: cell.partner, affiliate: cell.affiliate })).filter((h) => h.period >= fromMonth && h.period <= toMonth);
    return { column, cell, total: holds.length, records: holds.map((h) => ({ source: 'commission_holds', ...h })) };
  }
  const q = knex('commission_ledger').where('affiliate_id', cell.affiliate).where('period', '>=', fromMonth).where('period', '<=', toMonth).orderBy('id').select('*');
  if (cell.partner) q.where('partner_id', cell.partner);
  const lines = ((await q) as Record<string, unknown>[]).map(toLedgerLine).filter((l) => {
    const amount = money(l.amount_usd);
    return column === 'commissions_earned_usd' ? !amount.isNegative() : column === 'commissions_clawed_back_usd' ? amount.isNegative() : true;
  });
  let total = ZERO;
  for (const l of lines) total = total.plus(money(l.amount_usd));
  return { column, cell, total: total.toFixed(2), records: lines.map((l) => ({ source: 'commission_ledger', ...l })) };
}
