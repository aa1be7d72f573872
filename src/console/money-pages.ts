/**
 * The managers' money pages: Commissions (one month, one page of affiliates at a time, each
 * affiliate's figures from the ledger report of `partner-sync commissions`) and Reports (time
 * series read from the report facts and the ledger's month index, the funnel of `report funnel`).
 * Bounded so that they answer in well under 300 ms on a store of 10,000,000 activity rows
 * (bench/console.bench.ts): no page reads a raw activity or transaction table, or a whole ledger.
 */
import type { Knex } from 'knex';
import { addDays } from '../kernel/dates.js';
import { money, ZERO } from '../kernel/money.js';
import type { Plan } from '../commission/plans.js';
import { listHolds } from '../commission/ledger.js';
import { ledgerReport, type LedgerReport } from '../commission/report.js';
import { listReviewHolds } from '../commission/review-holds.js';
import { funnelReport } from '../reports/funnel.js';
import type { Store } from '../store/store.js';
import { html, Html, num, q, table, when } from './html.js';

/** Affiliates per Commissions page: each is one ledger report (three indexed reads) on a pool of a few connections. */
export const AFFILIATES_PER_PAGE = 20;
const MONTH = /^\d{4}-\d{2}$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

const usd = (v: unknown): string => money(v ?? 0).toFixed(2);

/** `work` over `items`, at most `width` at a time (the store's pool serves them side by side). */
async function inBatches<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(work))));
  return out;
}

const ledgerOf = (knex: Knex, partner: string | undefined) => {
  const query = knex('commission_ledger');
  if (partner) query.where('partner_id', partner);
  return query;
};

export async function commissionsPage(store: Store, plans: readonly Plan[], filter: { affiliate?: string; month?: string; partner?: string; page?: string }): Promise<Html> {
  const knex = store.knex;
  const latest = (await ledgerOf(knex, filter.partner).max({ m: 'period' }).first()) as { m: string | null } | undefined;
  const month = filter.month && MONTH.test(filter.month) ? filter.month : (latest?.m ?? store.now().slice(0, 7));
  const page = Math.max(1, Math.floor(Number(filter.page)) || 1);
  let affiliates: string[];
  let more = false;
  if (filter.affiliate) affiliates = [filter.affiliate];
  else {
    const rows = (await ledgerOf(knex, filter.partner).where('period', month).distinct('affiliate_id').orderBy('affiliate_id')
      .limit(AFFILIATES_PER_PAGE + 1).offset((page - 1) * AFFILIATES_PER_PAGE)) as { affiliate_id: string }[];
    more = rows.length > AFFILIATES_PER_PAGE;
    affiliates = rows.slice(0, AFFILIATES_PER_PAGE).map((r) => r.affiliate_id);
  }
  const monthTotals = (await ledgerOf(knex, filter.partner).where('period', month).countDistinct({ n: 'affiliate_id' }).sum({ total: 'amount_usd' }).first()) as { n: unknown; total: unknown } | undefined;
  // Each affiliate's month through the ledger report the `commissions` command prints.
  const reports: LedgerReport[] = await inBatches(affiliates, 8, (affiliate) => ledgerReport(knex, { affiliate, month, partner: filter.partner }, { lines: false, plans, now: store.now() }));
  const held = new Map<string, number>();
  let [pageTotal, payable, withheld] = [ZERO, ZERO, ZERO];
  for (const r of reports) {
    pageTotal = pageTotal.plus(money(r.total_usd));
    payable = payable.plus(money(r.payable_usd));
    withheld = withheld.plus(money(r.review_withheld_usd));
  }
  const totals = reports.flatMap((r) => r.totals);
  // The month's holds of every affiliate (a commission held for review before it is booked has no ledger line yet).
  const [fxHeld, reviewHeld] = await Promise.all([
    listHolds(knex, { partner: filter.partner, affiliate: filter.affiliate, month }),
    listReviewHolds(knex, { partner: filter.partner, affiliate: filter.affiliate, month }),
  ]);
  for (const h of reviewHeld) held.set(`${h.affiliate_id}\u0000${h.period}`, (held.get(`${h.affiliate_id}\u0000${h.period}`) ?? 0) + Number(h.withheld_usd));
  const count = Number(monthTotals?.n ?? 0);
  const first = (page - 1) * AFFILIATES_PER_PAGE;
  const link = (p: number, label: string) => html`<a href="/console/commissions?${q({ month, partner: filter.partner, page: String(p) })}">${label}</a>`;
  return html`<form class="filters" method="get" action="/console/commissions">
    <div><label for="c-month">Month</label><input id="c-month" name="month" type="month" value="${month}"></div>
    <div><label for="c-partner">Partner</label><input id="c-partner" name="partner" value="${filter.partner ?? ''}" size="16"></div>
    <div><label for="c-affiliate">Affiliate</label><input id="c-affiliate" name="affiliate" value="${filter.affiliate ?? ''}" size="12"></div><button type="submit">Show</button></form>
  <p>${month}: ${count} affiliate(s) with ledger lines, ${usd(monthTotals?.total)} USD in all${filter.partner ? ` at ${filter.partner}` : ''}.
  ${filter.affiliate ? `Affiliate ${filter.affiliate}` : `Affiliates ${count === 0 ? 0 : first + 1}–${first + affiliates.length}`}: ${pageTotal.toFixed(2)} USD; payable ${payable.toFixed(2)} USD (${withheld.toFixed(2)} withheld for review). Select an amount to see its ledger lines.</p>
  ${table(['Affiliate', 'Month', 'Plan', 'Partner', 'Earned USD', 'Clawed back USD', 'Held for review USD', 'Net USD', 'Lines'],
    totals.map((t) => [t.affiliate, t.month, t.plan_id, t.partner, num(t.earned), num(t.clawed_back), num((held.get(`${t.affiliate}\u0000${t.month}`) ?? 0).toFixed(2)),
      html`<a href="/console/commissions/lines?${q({ affiliate: t.affiliate, month: t.month, partner: t.partner, plan: t.plan_id })}">${t.amount_usd}</a>`, num(t.lines)]), 'Commissions per affiliate and month')}
  ${!filter.affiliate && (page > 1 || more) ? html`<p class="pager">${page > 1 ? link(page - 1, '← Previous affiliates') : ''} ${more ? link(page + 1, 'Next affiliates →') : ''}</p>` : ''}
  ${fxHeld.length > 0 ? html`<h2>Held for FX rates</h2>${table(['Plan', 'Affiliate', 'Customer', 'Period', 'Since', 'Missing rates'], fxHeld.map((h) => [h.plan_id, h.affiliate_id, h.customer_id ?? '-', h.period, when(h.since), h.missing.join(', ')]))}` : ''}
  ${reviewHeld.length > 0 ? html`<h2>Held for review</h2>${table(['Plan', 'Affiliate', 'Customer', 'Period', 'Withheld USD', 'Waiting USD', 'Fraud flags'],
    reviewHeld.map((h) => [h.plan_id, h.affiliate_id, h.customer_id ?? '-', h.period, num(h.withheld_usd), num(h.waiting_usd ?? 'FX rate missing'),
      h.flags.map((f) => html`<a href="/console/fraud/${f.id}">#${f.id} ${f.rule}</a> `)]))}` : ''}`;
}

export interface ReportsFilter {
  by?: string;
  from?: string;
  to?: string;
  partner?: string;
}

/** Sums per period of the report facts' cells, per partner (each an index range of the facts' primary key). */
async function factSeries(store: Store, by: 'day' | 'month', from: string, to: string, partner: string | undefined): Promise<Map<string, { ftd: number; ggr: number; ngr: number }>> {
  const knex = store.knex;
  const partners = partner ? [partner] : ((await knex('partners').select('partner_id')) as { partner_id: string }[]).map((p) => p.partner_id);
  const period = by === 'month' ? 'month' : store.dialect.dateText('day');
  const rows = (await Promise.all(partners.map((p) => {
    const query = by === 'month'
      ? knex('report_month_cells').where('partner_id', p).whereBetween('month', [from.slice(0, 7), to.slice(0, 7)])
      : knex('report_cells').where('partner_id', p).whereBetween('day', [from, to]);
    return query.select(knex.raw(`${period} as period`)).sum({ ftd: 'ftd_count', ggr: 'ggr_usd', ngr: 'ngr_usd' }).groupByRaw(period) as Promise<Record<string, unknown>[]>;
  }))).flat();
  const out = new Map<string, { ftd: number; ggr: number; ngr: number }>();
  for (const r of rows) {
    const key = String(r.period);
    const s = out.get(key) ?? { ftd: 0, ggr: 0, ngr: 0 };
    s.ftd += Number(r.ftd ?? 0);
    s.ggr += Number(r.ggr ?? 0);
    s.ngr += Number(r.ngr ?? 0);
    out.set(key, s);
  }
  return out;
}

const round = (n: number) => Math.round(n * 100) / 100;

export async function reportsPage(store: Store, filter: ReportsFilter): Promise<{ body: Html; data: unknown }> {
  const by = filter.by === 'day' ? 'day' : 'month';
  const today = store.now().slice(0, 10);
  const to = filter.to && DAY.test(filter.to) ? filter.to : today;
  const from = filter.from && DAY.test(filter.from) && filter.from <= to ? filter.from : by === 'day' ? addDays(to, -30) : `${addDays(`${to.slice(0, 7)}-01`, -334).slice(0, 7)}-01`;
  const [facts, commissions, funnel] = await Promise.all([
    factSeries(store, by, from, to, filter.partner),
    // The ledger books per affiliate and month: commissions are a monthly series in either view.
    ledgerOf(store.knex, filter.partner).whereBetween('period', [from.slice(0, 7), to.slice(0, 7)]).select('period').sum({ net: 'amount_usd' }).groupBy('period').orderBy('period').then((rows) => rows as unknown as { period: string; net: unknown }[]),
    funnelReport(store.knex, { partner: filter.partner, from, to }),
  ]);
  // Commissions on every month of the range, months without ledger lines as 0.
  const months: string[] = [];
  for (let m = from.slice(0, 7); m <= to.slice(0, 7); m = addDays(`${m}-28`, 7).slice(0, 7)) months.push(m);
  // Every period of the range, empty ones included, so the time axis is even.
  const periods: string[] = [];
  if (by === 'day') for (let d = from; d <= to; d = addDays(d, 1)) periods.push(d);
  else periods.push(...months);
  const series = periods.map((p) => [p, facts.get(p) ?? { ftd: 0, ggr: 0, ngr: 0 }] as const);
  const net = new Map(commissions.map((c) => [c.period, round(Number(c.net ?? 0))]));
  const steps = ['signups', 'phase_1', 'phase_2', 'funded'] as const;
  const totals = steps.map((c) => funnel.reduce((n, row) => n + row[c], 0));
  const data = {
    by, periods, ftd: series.map(([, v]) => v.ftd), ggr: series.map(([, v]) => round(v.ggr)), ngr: series.map(([, v]) => round(v.ngr)),
    months, commissions: months.map((m) => net.get(m) ?? 0), funnelLabels: steps, funnel: totals,
  };
  const grain = by === 'day' ? 'day' : 'month';
  const body = html`<form class="filters" method="get" action="/console/reports">
    <div><label for="r-by">Per</label><select id="r-by" name="by">${['month', 'day'].map((b) => html`<option${b === by ? new Html(' selected') : ''}>${b}</option>`)}</select></div>
    <div><label for="r-from">From</label><input id="r-from" name="from" type="date" value="${from}"></div>
    <div><label for="r-to">To</label><input id="r-to" name="to" type="date" value="${to}"></div>
    <div><label for="r-partner">Partner</label><input id="r-partner" name="partner" value="${filter.partner ?? ''}" size="16"></div><button type="submit">Show</button></form>
  <p class="muted">${from} to ${to}${filter.partner ? `, partner ${filter.partner}` : ', all partners'}; from the report facts (the figures of <code>partner-sync report</code>) and the commission ledger.</p>
  <div class="charts">
    <figure><figcaption>FTDs per ${grain}</figcaption><div class="chart"><canvas id="ftd" role="img" aria-label="First-time depositors per ${grain}"></canvas></div></figure>
    <figure><figcaption>GGR and NGR per ${grain}, USD</figcaption><div class="chart"><canvas id="revenue" role="img" aria-label="GGR and NGR per ${grain} in USD"></canvas></div></figure>
    <figure><figcaption>Commissions per month (net, USD)</figcaption><div class="chart"><canvas id="commissions" role="img" aria-label="Net commissions per month in USD"></canvas></div></figure>
    <figure><figcaption>Funnel (prop trading, signups in the range)</figcaption><div class="chart"><canvas id="funnel" role="img" aria-label="Funnel: customers per phase"></canvas></div></figure>
  </div>
  <details><summary>The figures as tables</summary>
  ${table([grain === 'day' ? 'Day' : 'Month', 'FTDs', 'GGR USD', 'NGR USD'], series.map(([p, v]) => [p, num(v.ftd), num(v.ggr.toFixed(2)), num(v.ngr.toFixed(2))]), `Per ${grain} (all affiliates)`)}
  ${table(['Month', 'Net commissions USD'], commissions.map((c) => [c.period, num(usd(c.net))]), 'Commissions per month')}
  ${table(['Step', 'Customers'], steps.map((c, i) => [c, num(totals[i])]), 'Funnel totals')}</details>`;
  return { body, data };
}
