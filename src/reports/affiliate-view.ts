/**
 * What an affiliate sees of the store (docs/console.md, Affiliates): its figures, its players and
 * its statements, always narrowed by the server to the affiliate ids of the signed-in user
 * (`AFF` on every partner, or `PARTNER:AFF`). The figures are the affiliate report's
 * (./affiliates.ts) and the commission ledger's (`commissions`), read the same way, so that the
 * page and `report affiliates --json` / `commissions --json` agree to the cent. Players carry no
 * personal field (names, e-mail, phone never leave the store here).
 */
import type { Knex } from 'knex';
import { listHolds } from '../commission/ledger.js';
import { ledgerReport, listReviewHolds, type LedgerReport } from '../commission/report.js';
import type { Plan } from '../commission/plans.js';
import { addDays } from '../kernel/dates.js';
import { money, ZERO, type Money } from '../kernel/money.js';
import type { Store } from '../store/store.js';
import { fromStoreTimestamp } from '../store/values.js';
import { affiliateReport, type AffiliateRow, type Grain } from './affiliates.js';

/** One affiliate id of a user: on one partner, or on every partner. */
export interface ScopeEntry {
  partner?: string;
  affiliate: string;
}

/**
 * The scope of a user's affiliate ids, each row in it once: `AFF` covers `PARTNER:AFF`, and a
 * repeated id counts once (the figures are summed per entry).
 */
export function scopeOf(affiliates: readonly string[]): ScopeEntry[] {
  const entries = affiliates.map((a): ScopeEntry => {
    const cut = a.indexOf(':');
    return cut < 0 ? { affiliate: a } : { partner: a.slice(0, cut), affiliate: a.slice(cut + 1) };
  });
  const everywhere = new Set(entries.filter((e) => e.partner === undefined).map((e) => e.affiliate));
  const seen = new Set<string>();
  return entries.filter((e) => {
    const key = `${e.partner ?? ''}:${e.affiliate}`;
    if (seen.has(key) || (e.partner !== undefined && everywhere.has(e.affiliate))) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The affiliate ids whose postbacks are the user's: a postback fires for its affiliate id on
 * every partner, so only the ids the user holds on every partner (`AFF`, not `PARTNER:AFF`, which
 * on another partner may be someone else's).
 */
export const postbackAffiliates = (scope: readonly ScopeEntry[]): string[] => [...new Set(scope.filter((s) => s.partner === undefined).map((s) => s.affiliate))];

/** Narrows a query to the scope's rows (`partner_id`, `affiliate_id` columns, or as named). */
export function whereScoped(q: Knex.QueryBuilder, scope: readonly ScopeEntry[], columns = { partner: 'partner_id', affiliate: 'affiliate_id' }): Knex.QueryBuilder {
  if (scope.length === 0) return q.whereRaw('1 = 0');
  return q.where((w) => {
    for (const s of scope) {
      if (s.partner === undefined) void w.orWhere(columns.affiliate, s.affiliate);
      else void w.orWhere((p) => p.where(columns.partner, s.partner as string).andWhere(columns.affiliate, s.affiliate));
    }
  });
}

/** The affiliate report's rows of the scope (one read per affiliate id, merged). */
export async function scopedReport(store: Store, scope: readonly ScopeEntry[], filter: { from?: string; to?: string; campaign?: string }, grain: Grain): Promise<AffiliateRow[]> {
  const rows: AffiliateRow[] = [];
  for (const s of scope) rows.push(...(await affiliateReport(store, { ...filter, affiliate: s.affiliate, ...(s.partner ? { partner: s.partner } : {}) }, grain)).rows);
  return rows;
}

/** The commission ledger of the scope for a month (or all), as `commissions --json` gives it per affiliate id. */
export async function scopedLedger(store: Store, scope: readonly ScopeEntry[], month: string | undefined, plans: readonly Plan[]): Promise<LedgerReport[]> {
  const out: LedgerReport[] = [];
  for (const s of scope) out.push(await ledgerReport(store.knex, { affiliate: s.affiliate, ...(s.partner ? { partner: s.partner } : {}), ...(month ? { month } : {}) }, { lines: true, plans, now: store.now() }));
  return out;
}

const COUNTS = ['registrations', 'ftd_count', 'deposit_count'] as const;
const SUMS = ['ftd_usd', 'deposits_usd', 'ggr_usd', 'ngr_usd'] as const;

export interface Figures {
  registrations: number;
  ftd_count: number;
  deposit_count: number;
  ftd_usd: string;
  deposits_usd: string;
  ggr_usd: string;
  ngr_usd: string;
}

export function sumFigures(rows: readonly AffiliateRow[]): Figures {
  const out: Figures = { registrations: 0, ftd_count: 0, deposit_count: 0, ftd_usd: '0.00', deposits_usd: '0.00', ggr_usd: '0.00', ngr_usd: '0.00' };
  const sums = new Map<string, Money>(SUMS.map((k) => [k, ZERO]));
  for (const r of rows) {
    for (const k of COUNTS) out[k] += r[k];
    for (const k of SUMS) sums.set(k, (sums.get(k) as Money).plus(money(r[k])));
  }
  for (const k of SUMS) out[k] = (sums.get(k) as Money).toFixed(2);
  return out;
}

export interface Period {
  key: 'today' | 'yesterday' | 'this_month' | 'last_month';
  label: string;
  from: string;
  to: string;
}

export function periods(now: Date): Period[] {
  const today = now.toISOString().slice(0, 10);
  const month = today.slice(0, 7);
  const first = `${month}-01`;
  const lastMonthEnd = addDays(first, -1);
  return [
    { key: 'today', label: 'Today', from: today, to: today },
    { key: 'yesterday', label: 'Yesterday', from: addDays(today, -1), to: addDays(today, -1) },
    { key: 'this_month', label: 'This month', from: first, to: today },
    { key: 'last_month', label: 'Last month', from: `${lastMonthEnd.slice(0, 7)}-01`, to: lastMonthEnd },
  ];
}

export interface Commission {
  /** Booked: the ledger's net (earned plus clawbacks) of lines in the period. */
  earned_usd: string;
  /** Entries not booked yet or not to be paid: waiting for an FX rate (count), withheld for review (USD). */
  held_fx: number;
  withheld_usd: string;
  payable_usd: string;
}

/**
 * Commission in each period, read by sums in the store (no ledger line is read: a big affiliate's
 * month is tens of thousands of lines): whole months by the ledger's month, as `commissions
 * --month M` counts them; a day, the lines of the day's month booked that day (a correction of an
 * earlier month booked today counts in that month, not today). Holds: for FX rates (a count) and
 * for review (the withheld USD), by the same rule; payable is earned less withheld.
 */
export async function scopedCommission(store: Store, scope: readonly ScopeEntry[], ps: readonly Period[]): Promise<Map<Period['key'], Commission>> {
  const { knex } = store;
  const months = [...new Set(ps.map((p) => p.from.slice(0, 7)))];
  const isMonth = (p: Period) => p.key === 'this_month' || p.key === 'last_month';
  const stamp = (day: string) => `${day}T00:00:00.000000Z`;
  const [sums, held, review] = await Promise.all([
    Promise.all(ps.map(async (p) => {
      let q = whereScoped(knex('commission_ledger'), scope).where('period', p.from.slice(0, 7));
      if (!isMonth(p)) q = q.where('created_at', '>=', stamp(p.from)).where('created_at', '<', stamp(addDays(p.to, 1)));
      const row = (await q.sum({ usd: 'amount_usd' }).first()) as { usd: unknown } | undefined;
      return money(row?.usd === null || row?.usd === undefined ? '0' : String(row.usd));
    })),
    Promise.all(scope.map((s) => listHolds(knex, { affiliate: s.affiliate, ...(s.partner ? { partner: s.partner } : {}) }))).then((h) => h.flat().filter((x) => months.includes(x.period))),
    Promise.all(scope.flatMap((s) => months.map((month) => listReviewHolds(knex, { affiliate: s.affiliate, month, ...(s.partner ? { partner: s.partner } : {}) })))).then((h) => h.flat()),
  ]);
  const out = new Map<Period['key'], Commission>();
  ps.forEach((p, i) => {
    const inPeriod = (period: string, since: string) => period === p.from.slice(0, 7) && (isMonth(p) || (since.slice(0, 10) >= p.from && since.slice(0, 10) <= p.to));
    const earned = sums[i] as Money;
    const withheld = review.filter((h) => inPeriod(h.period, h.since)).reduce((w, h) => w.plus(money(h.withheld_usd)), ZERO);
    out.set(p.key, { earned_usd: earned.toFixed(2), held_fx: held.filter((h) => inPeriod(h.period, h.since)).length, withheld_usd: withheld.toFixed(2), payable_usd: earned.minus(withheld).toFixed(2) });
  });
  return out;
}

/** When the scope's figures last moved: the latest load of its customers or booking of its ledger. */
export async function lastUpdated(store: Store, scope: readonly ScopeEntry[]): Promise<string | null> {
  const ledger = (await whereScoped(store.knex('commission_ledger'), scope).max({ at: 'created_at' }).first()) as { at: unknown } | undefined;
  const facts = (await whereScoped(store.knex('customers'), scope).max({ at: 'loaded_at' }).first()) as { at: unknown } | undefined;
  const times = [ledger?.at, facts?.at].map((v) => (v instanceof Date ? v.toISOString() : fromStoreTimestamp(v ?? null))).filter((v): v is string => typeof v === 'string' && v !== '');
  return times.sort().at(-1) ?? null;
}

export interface PlayerFilter {
  month?: string;
  campaign?: string;
  country?: string;
  /** Keyset: the last row of the previous page (`partner|customer`). */
  after?: string;
  limit: number;
}

export interface Player {
  partner: string;
  customer_id: string;
  affiliate: string;
  signup_date: string;
  country: string | null;
  campaign: string | null;
  click_id: string | null;
  ftd_date: string | null;
  ftd_usd: string | null;
  deposits_usd: string;
  revenue_usd: string;
  commission_usd: string;
}

/**
 * The scope's customers in (partner, customer id) order, keyset paged
 * (a page costs its rows, whatever the page number). Deposits, revenue and commission are summed
 * for the page's customers only.
 */
export async function players(store: Store, scope: readonly ScopeEntry[], f: PlayerFilter, revenue: 'ggr' | 'ngr'): Promise<{ rows: Player[]; next?: string }> {
  const { knex } = store;
  let q = whereScoped(knex('customers'), scope).select('partner_id', 'customer_id', 'affiliate_id', 'signup_date', 'country_code', 'campaign_id', 'click_id');
  if (f.month) q = q.where('signup_date', '>=', `${f.month}-01T00:00:00.000000Z`).where('signup_date', '<', `${nextMonth(f.month)}-01T00:00:00.000000Z`);
  if (f.campaign) q = q.where('campaign_id', f.campaign);
  if (f.country) q = q.where('country_code', f.country.toUpperCase());
  const cut = f.after ? f.after.indexOf('|') : -1;
  if (f.after && cut > 0) {
    q = q.whereRaw('(partner_id, customer_id) > (?, ?)', [f.after.slice(0, cut), f.after.slice(cut + 1)]);
  }
  const rows = (await q.orderBy([{ column: 'partner_id' }, { column: 'customer_id' }]).limit(f.limit + 1)) as Record<string, unknown>[];
  const page = rows.slice(0, f.limit);
  const byPartner = new Map<string, string[]>();
  for (const r of page) byPartner.set(String(r.partner_id), [...(byPartner.get(String(r.partner_id)) ?? []), String(r.customer_id)]);
  const key = (p: unknown, c: unknown) => `${String(p)}|${String(c)}`;
  const ftd = new Map<string, { at: string; usd: string | null }>();
  const deposits = new Map<string, Money>();
  const revenueBy = new Map<string, Money>();
  const commission = new Map<string, Money>();
  for (const [partner, ids] of byPartner) {
    for (const r of (await knex('report_ftd').where('partner_id', partner).whereIn('customer_id', ids).select('customer_id', 'transaction_date', 'amount_usd')) as Record<string, unknown>[]) {
      ftd.set(key(partner, r.customer_id), { at: fromStoreTimestamp(r.transaction_date) ?? '', usd: r.amount_usd === null ? null : money(r.amount_usd as string).toFixed(2) });
    }
    for (const r of (await knex('transactions').where({ partner_id: partner, transaction_type: 'deposit', status: 'approved' }).whereIn('customer_id', ids).whereNotNull('amount_usd').select('customer_id').sum({ usd: 'amount_usd' }).groupBy('customer_id')) as Record<string, unknown>[]) {
      deposits.set(key(partner, r.customer_id), money(String(r.usd)));
    }
    for (const r of (await knex('commission_customer_days').where('partner_id', partner).whereIn('customer_id', ids).select('customer_id').sum({ usd: `${revenue}_usd` }).groupBy('customer_id')) as Record<string, unknown>[]) {
      if (r.usd !== null) revenueBy.set(key(partner, r.customer_id), money(String(r.usd)));
    }
    for (const r of (await knex('commission_ledger').where('partner_id', partner).whereIn('customer_id', ids).select('customer_id').sum({ usd: 'amount_usd' }).groupBy('customer_id')) as Record<string, unknown>[]) {
      commission.set(key(partner, r.customer_id), money(String(r.usd)));
    }
  }
  const out = page.map((r): Player => {
    const k = key(r.partner_id, r.customer_id);
    const first = ftd.get(k);
    return {
      partner: String(r.partner_id),
      customer_id: String(r.customer_id),
      affiliate: String(r.affiliate_id),
      signup_date: (fromStoreTimestamp(r.signup_date) ?? '').slice(0, 10),
      country: (r.country_code as string | null) ?? null,
      campaign: (r.campaign_id as string | null) ?? null,
      click_id: (r.click_id as string | null) ?? null,
      ftd_date: first ? first.at.slice(0, 10) : null,
      ftd_usd: first ? first.usd : null,
      deposits_usd: (deposits.get(k) ?? ZERO).toFixed(2),
      revenue_usd: (revenueBy.get(k) ?? ZERO).toFixed(2),
      commission_usd: (commission.get(k) ?? ZERO).toFixed(2),
    };
  });
  const last = page.at(-1);
  return { rows: out, ...(rows.length > f.limit && last ? { next: key(last.partner_id, last.customer_id) } : {}) };
}

function nextMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
}

/** The revenue the scope's RevShare plans pay on (NGR unless every one of them uses GGR). */
export function revenueBasis(plans: readonly Plan[], scope: readonly ScopeEntry[]): 'ggr' | 'ngr' {
  const rev = plans.filter((p) => p.kind === 'revshare' && scope.some((s) => (s.partner === undefined || s.partner === p.partner) && (p.affiliates === 'all' || p.affiliates.has(s.affiliate))));
  return rev.length > 0 && rev.every((p) => p.kind === 'revshare' && p.revenue === 'ggr') ? 'ggr' : 'ngr';
}
