/**
 * Reading the ledger for people: totals per affiliate, month and plan, the lines behind them,
 * and what is held. Sums are exact (decimal.js); a total is the sum of its lines' cents.
 */
import type { Knex } from 'knex';
import { listHolds, toLedgerLine, type Hold, type LedgerLine } from './ledger.js';
import { money, ZERO, type Money } from '../kernel/money.js';
import type { Plan } from './plans.js';
import { monthClosesAt } from './rules/revshare.js';
import { listReviewHolds, type ReviewHold } from './review-holds.js';
/** The review holds as the ledger report reads them (for the affiliate's view, src/reports/affiliate-view.ts). */
export { listReviewHolds };

export interface LedgerFilter {
  affiliate?: string;
  month?: string;
  partner?: string;
  plan?: string;
}

export interface TotalRow {
  affiliate: string;
  month: string;
  plan_id: string;
  plan_kind: string;
  partner: string;
  amount_usd: string;
  lines: number;
  /** RevShare months: open (still accruing) or closed; null for other kinds. */
  month_state: 'open' | 'closed' | null;
  /** The positive lines' sum and the negative lines' sum (clawbacks, corrections, moves): amount_usd = earned + clawed_back. */
  earned: string;
  clawed_back: string;
}

export interface LedgerReport {
  totals: TotalRow[];
  total_usd: string;
  lines?: LedgerLine[];
  /** Held for missing FX rates. */
  held: Hold[];
  /** Held for review (open fraud flags): withheld_usd booked but not to be paid, waiting_usd not booked. */
  review_held: ReviewHold[];
  /** Of total_usd, what review holds withhold from payout, and what may be paid. */
  review_withheld_usd: string;
  payable_usd: string;
}

export async function ledgerReport(knex: Knex, filter: LedgerFilter, options: { lines: boolean; plans: readonly Plan[]; now: string }): Promise<LedgerReport> {
  const q = knex('commission_ledger').select('*').orderBy('id');
  if (filter.affiliate) q.where('affiliate_id', filter.affiliate);
  if (filter.month) q.where('period', filter.month);
  if (filter.partner) q.where('partner_id', filter.partner);
  if (filter.plan) q.where('plan_id', filter.plan);
  const rows: Record<string, unknown>[] = await q;
  const lines = rows.map(toLedgerLine);
  const groups = new Map<string, { row: Omit<TotalRow, 'amount_usd' | 'earned' | 'clawed_back'>; amount: Money; split: EarnedSplit }>();
  let total = ZERO;
  for (const l of lines) {
    const key = [l.affiliate_id, l.period, l.plan_id, l.partner_id].join('\u0000');
    let g = groups.get(key);
    if (!g) {
      const plan = options.plans.find((p) => p.id === l.plan_id);
      const state = plan?.kind === 'revshare' ? (options.now >= monthClosesAt(plan, l.period) ? 'closed' : 'open') : null;
      g = { row: { affiliate: l.affiliate_id, month: l.period, plan_id: l.plan_id, plan_kind: l.plan_kind, partner: l.partner_id, lines: 0, month_state: state }, amount: ZERO, split: emptySplit() };
      groups.set(key, g);
    }
    g.row.lines += 1;
    g.amount = g.amount.plus(money(l.amount_usd));
    addToSplit(g.split, money(l.amount_usd));
    total = total.plus(money(l.amount_usd));
  }
  const totals = [...groups.values()]
    .map((g) => ({ ...g.row, amount_usd: g.amount.toFixed(2), ...splitText(g.split) }))
    .sort((a, b) => a.affiliate.localeCompare(b.affiliate) || a.month.localeCompare(b.month) || a.plan_id.localeCompare(b.plan_id) || a.partner.localeCompare(b.partner));
  const held = await listHolds(knex, { partner: filter.partner, affiliate: filter.affiliate, month: filter.month });
  const reviewAll = await listReviewHolds(knex, { partner: filter.partner, affiliate: filter.affiliate, month: filter.month });
  const review = filter.plan ? reviewAll.filter((h) => h.plan_id === filter.plan) : reviewAll;
  // Withheld amounts are booked in the key's line periods; a filter by month counts the holds listed under it.
  const withheld = review.reduce((n, h) => n.plus(money(h.withheld_usd)), ZERO);
  return {
    totals, total_usd: total.toFixed(2), ...(options.lines ? { lines } : {}), held: filter.plan ? held.filter((h) => h.plan_id === filter.plan) : held,
    review_held: review, review_withheld_usd: withheld.toFixed(2), payable_usd: total.minus(withheld).toFixed(2),
  };
}

/** What a total is made of: earned (positive lines) and taken back (negative lines). */
interface EarnedSplit {
  earned: Money;
  clawedBack: Money;
}

const emptySplit = (): EarnedSplit => ({ earned: ZERO, clawedBack: ZERO });

function addToSplit(split: EarnedSplit, amount: Money): void {
  if (amount.isNegative()) split.clawedBack = split.clawedBack.plus(amount);
  else split.earned = split.earned.plus(amount);
}

const splitText = (split: EarnedSplit): { earned: string; clawed_back: string } => ({ earned: split.earned.toFixed(2), clawed_back: split.clawedBack.toFixed(2) });
