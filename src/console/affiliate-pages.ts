/**
 * The affiliate's own pages (docs/console.md, Affiliates): dashboard, players, statements and
 * postbacks, rendered from src/reports/affiliate-view.ts, which the server has already narrowed
 * to the user's affiliate ids. Nothing here takes an affiliate id from the request.
 */
import type { LedgerReport } from '../commission/report.js';
import type { Plan } from '../commission/plans.js';
import { addDays } from '../kernel/dates.js';
import { money, ZERO } from '../kernel/money.js';
import type { EventRow } from '../postbacks/claims.js';
import type { PostbackDefinition } from '../postbacks/definitions.js';
import { EVENT_KINDS } from '../postbacks/events.js';
import type { AffiliateRow } from '../reports/affiliates.js';
import { sumFigures, type Commission, type Period, type Player } from '../reports/affiliate-view.js';
import { html, Html, num, table, when } from './html.js';

/** Where the pages link to: the same pages, keeping a manager's `as`. */
export type LinkTo = (path: string, params?: Record<string, string | undefined>) => string;

/** A table whose cells keep to one line (ids, dates, amounts), scrolled sideways when the window is narrow. */
/** A wide table scrolls sideways in its own region, reachable by keyboard (tabindex) and named for screen readers. */
const wide = (t: Html, label = 'table'): Html => html`<div class="wide" tabindex="0" role="region" aria-label="${label}, scrolls sideways">${t}</div>`;

/** A sum of the report, to the cent (the report keeps the facts' precision). */
const usd = (v: string): string => money(v).toFixed(2);

const REVENUE_LABEL = { ggr: 'Net revenue (GGR)', ngr: 'Net revenue (NGR)' } as const;

export function dashboardPage(o: { periods: readonly { period: Period; rows: readonly AffiliateRow[] }[]; commission: ReadonlyMap<Period['key'], Commission>; month: readonly AffiliateRow[]; days: readonly AffiliateRow[]; window: { from: string; to: string }; revenue: 'ggr' | 'ngr'; updated: string | null; link: LinkTo }): Html {
  const rev = (f: { ggr_usd: string; ngr_usd: string }) => (o.revenue === 'ggr' ? f.ggr_usd : f.ngr_usd);
  const summary = o.periods.map(({ period, rows }) => {
    const f = sumFigures(rows);
    const c = o.commission.get(period.key) as Commission;
    return [period.label, num(f.registrations), num(f.ftd_count), num(f.deposits_usd), num(rev(f)), num(c.earned_usd), num(c.held_fx > 0 ? `${c.withheld_usd} + ${c.held_fx} waiting for an FX rate` : c.withheld_usd), num(c.payable_usd)];
  });
  const byCampaign = o.month.map((r) => [r.partner, r.campaign ?? '(none)', num(r.registrations), num(r.ftd_count), num(usd(r.deposits_usd)), num(usd(rev(r)))]);
  return html`<p class="muted" id="updated">Figures as of ${o.updated ? when(o.updated) : 'no data yet'} UTC. They move within seconds of a partner's data arriving: <a href="${o.link('/console/affiliate')}">refresh</a> to see the latest.</p>
  ${table(['Period', 'Registrations', 'FTDs', 'Deposits USD', REVENUE_LABEL[o.revenue] + ' USD', 'Commission earned USD', 'Held USD', 'Payable USD'], summary, 'Your figures')}
  <h2>The last 30 days</h2>
  ${dayChart(o.days, o.window)}
  <h2>This month by partner and campaign</h2>
  ${table(['Partner', 'Campaign', 'Registrations', 'FTDs', 'Deposits USD', REVENUE_LABEL[o.revenue] + ' USD'], byCampaign)}`;
}

/**
 * FTDs per day as bars (an SVG drawn here: no script), one slot for every day of the window
 * (days without figures are empty slots, so the axis is time), the first and last day labelled;
 * the figures in a table beside it for screen readers and print.
 */
function dayChart(days: readonly AffiliateRow[], window: { from: string; to: string }): Html {
  const byDay = new Map<string, { ftds: number; deposits: string }>();
  for (const r of days) {
    const d = byDay.get(r.day ?? '') ?? { ftds: 0, deposits: '0' };
    byDay.set(r.day ?? '', { ftds: d.ftds + r.ftd_count, deposits: money(d.deposits).plus(money(r.deposits_usd)).toFixed(2) });
  }
  if (byDay.size === 0) return html`<p class="empty">No registrations or deposits in the last 30 days.</p>`;
  const list: [string, { ftds: number; deposits: string }][] = [];
  for (let day = window.from; day <= window.to; day = addDays(day, 1)) list.push([day, byDay.get(day) ?? { ftds: 0, deposits: '0.00' }]);
  const max = Math.max(1, ...list.map(([, d]) => d.ftds));
  const w = 24;
  const bars = list.map(([day, d], i) => {
    const h = Math.round((d.ftds / max) * 120);
    return html`<rect x="${i * w + 3}" y="${130 - h}" width="${w - 6}" height="${h}" fill="#0a58ca"><title>${day}: ${d.ftds} FTDs, ${d.deposits} USD deposited</title></rect>`;
  });
  const width = list.length * w;
  return html`<figure><svg class="bars" viewBox="0 0 ${width} 150" role="img" aria-labelledby="chart-title"><title id="chart-title">FTDs per day, ${window.from} to ${window.to}: at most ${max} a day</title>${bars}
  <text x="2" y="146" font-size="11" fill="#57606a">${window.from}</text><text x="${width - 2}" y="146" font-size="11" fill="#57606a" text-anchor="end">${window.to}</text></svg>
  <figcaption>FTDs per day, ${window.from} to ${window.to} (the highest bar: ${max})</figcaption></figure>
  <details><summary>The figures per day</summary>${table(['Day', 'FTDs', 'Deposits USD'], list.filter(([d]) => byDay.has(d)).map(([day, d]) => [day, num(d.ftds), num(d.deposits)]))}</details>`;
}

export function playersPage(o: { rows: readonly Player[]; next?: string; filter: { month?: string; campaign?: string; country?: string }; revenue: 'ggr' | 'ngr'; link: LinkTo; asField: Html }): Html {
  const f = o.filter;
  return html`<form class="filters" method="get" action="/console/affiliate/players">${o.asField}
    <label>Signup month <input name="month" value="${f.month ?? ''}" placeholder="YYYY-MM" pattern="\\d{4}-\\d{2}" size="8"></label>
    <label>Campaign <input name="campaign" value="${f.campaign ?? ''}"></label>
    <label>Country <input name="country" value="${f.country ?? ''}" size="3" maxlength="2"></label>
    <button type="submit">Filter</button> <a href="${o.link('/console/affiliate/players', { ...f, format: 'csv' })}">Download CSV</a></form>
  ${wide(table(['Partner', 'Customer', 'Signup', 'Country', 'Campaign', 'Click id', 'FTD date', 'FTD USD', 'Deposits USD', `Revenue (${o.revenue.toUpperCase()}) USD`, 'Commission USD'],
    o.rows.map((p) => [p.partner, p.customer_id, p.signup_date, p.country ?? '', p.campaign ?? '', p.click_id ?? '', p.ftd_date ?? '', num(p.ftd_usd ?? ''), num(p.deposits_usd), num(p.revenue_usd), num(p.commission_usd)]), 'Your players'))}
  <p class="pager">${o.next ? html`<a href="${o.link('/console/affiliate/players', { ...f, after: o.next })}" rel="next">Next page</a>` : html`<span class="muted">End of the list.</span>`}</p>`;
}

export const PLAYER_CSV_HEADER = ['partner', 'customer_id', 'signup_date', 'country', 'campaign', 'click_id', 'ftd_date', 'ftd_usd', 'deposits_usd', 'revenue_usd', 'commission_usd'] as const;

const csvCell = (v: unknown): string => {
  const s = v === null || v === undefined ? '' : String(v);
  // A leading =, +, - or @ would be a formula to a spreadsheet.
  const safe = /^[=+\-@\t\r]/.test(s) && !/^-?\d/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};
export const csvLine = (cells: readonly unknown[]): string => `${cells.map(csvCell).join(',')}\r\n`;

/** A plain reason for a held amount: never the fraud rule or its evidence. */
const HELD_REASON = { fx: 'waiting for an FX rate', review: 'under review' } as const;

export interface StatementLine { plan: string; kind: string; partner: string; customer: string; period: string; reason: string; amount_usd: string; booked: string; detail: string }

/** Lines shown on the page (every one is in the CSV). */
export const STATEMENT_PAGE_LINES = 500;

/** How a RevShare line was reached: the month's revenue, the carry in and out, each band (from the line's basis). */
export function revshareDetail(basis: Record<string, unknown>): string {
  if (basis.revenue_usd === undefined) return typeof basis.why === 'string' ? basis.why : '';
  const usd = (v: unknown) => money(String(v ?? '0')).toFixed(2);
  const bands = Array.isArray(basis.bands) ? (basis.bands as Record<string, string>[]).map((b) => `${money(b.rate ?? '0').times(100).toFixed()}% of ${usd(b.on_usd)} (band from ${usd(b.from_usd)}) = ${usd(b.amount_usd)}`).join('; ') : '';
  const carryIn = money(String(basis.carry_in_usd ?? '0'));
  const carryOut = money(String(basis.carry_out_usd ?? '0'));
  return `${String(basis.revenue ?? '').toUpperCase()} ${usd(basis.revenue_usd)}${carryIn.isZero() ? '' : ` + carry ${carryIn.toFixed(2)}`} = ${usd(basis.commissionable_usd)} commissionable (${String(basis.mode ?? '')}${bands ? `: ${bands}` : ''})${carryOut.isZero() ? '' : `; carried to next month ${carryOut.toFixed(2)}`}`;
}

export function statementOf(ledgers: readonly LedgerReport[], month: string, approvals: ReadonlyMap<string, { net_usd: string; approved_at: string }>, plans: readonly Plan[]): { lines: StatementLine[]; byPlan: { plan: string; kind: string; earned: string; clawed: string; net: string }[]; held: { plan: string; customer: string; period: string; reason: string; amount: string }[]; total: string; withheld: string; payable: string; approved: { affiliate: string; net_usd: string; approved_at: string }[] } {
  const lines: StatementLine[] = [];
  const plan = new Map<string, { kind: string; earned: typeof ZERO; clawed: typeof ZERO }>();
  let total = ZERO;
  let withheld = ZERO;
  const held: { plan: string; customer: string; period: string; reason: string; amount: string }[] = [];
  const affiliates = new Set<string>();
  for (const l of ledgers) {
    for (const line of l.lines ?? []) {
      if (line.period !== month) continue;
      affiliates.add(line.affiliate_id);
      const amount = money(line.amount_usd);
      total = total.plus(amount);
      const p = plan.get(line.plan_id) ?? { kind: line.plan_kind, earned: ZERO, clawed: ZERO };
      if (amount.isNegative()) p.clawed = p.clawed.plus(amount);
      else p.earned = p.earned.plus(amount);
      plan.set(line.plan_id, p);
      lines.push({ plan: line.plan_id, kind: line.plan_kind, partner: line.partner_id, customer: line.customer_id ?? '', period: line.period, reason: line.reason, amount_usd: amount.toFixed(2), booked: line.created_at, detail: line.plan_kind === 'revshare' ? revshareDetail(line.basis) : '' });
    }
    for (const h of l.held) if (h.period === month) held.push({ plan: h.plan_id, customer: h.customer_id ?? '', period: h.period, reason: HELD_REASON.fx, amount: 'not booked yet' });
    for (const h of l.review_held) {
      if (h.period !== month) continue;
      withheld = withheld.plus(money(h.withheld_usd));
      held.push({ plan: h.plan_id, customer: h.customer_id ?? '', period: h.period, reason: HELD_REASON.review, amount: h.withheld_usd });
    }
  }
  const kinds = new Map(plans.map((p) => [p.id, p.kind]));
  return {
    lines: lines.sort((a, b) => a.plan.localeCompare(b.plan) || a.booked.localeCompare(b.booked)),
    byPlan: [...plan].sort((a, b) => a[0].localeCompare(b[0])).map(([id, p]) => ({ plan: id, kind: kinds.get(id) ?? p.kind, earned: p.earned.toFixed(2), clawed: p.clawed.toFixed(2), net: p.earned.plus(p.clawed).toFixed(2) })),
    held,
    total: total.toFixed(2),
    withheld: withheld.toFixed(2),
    payable: total.minus(withheld).toFixed(2),
    approved: [...affiliates].flatMap((a) => {
      const ok = approvals.get(`${a}|${month}`);
      return ok ? [{ affiliate: a, ...ok }] : [];
    }),
  };
}

const KIND_LABEL: Record<string, string> = { cpa_ftd: 'CPA', revshare: 'RevShare', challenge_cpa: 'Challenge CPA', phase_bonus: 'Phase bonus' };

export function statementPage(s: ReturnType<typeof statementOf>, o: { month: string; months: readonly string[]; link: LinkTo; asField: Html; who: string }): Html {
  return html`<form class="filters no-print" method="get" action="/console/affiliate/statements">${o.asField}
    <label>Month <select name="month">${o.months.map((m) => html`<option${m === o.month ? new Html(' selected') : ''}>${m}</option>`)}</select></label>
    <button type="submit">Show</button> <a href="${o.link('/console/affiliate/statements', { month: o.month, format: 'csv' })}">Download CSV</a>
    <span class="muted">Print this page for a paper copy.</span></form>
  <p class="statement-total">Statement of ${o.who} for ${o.month}: <strong>${s.payable} USD payable</strong> of ${s.total} USD booked${money(s.withheld).isZero() ? '' : html`, ${s.withheld} USD under review`}.
  ${s.approved.length > 0 ? html`Approved for payment: ${s.approved.map((a) => `${a.affiliate} ${a.net_usd} USD on ${a.approved_at.slice(0, 10)}`).join('; ')}.` : 'Not approved for payment yet.'}</p>
  ${table(['Plan', 'Kind', 'Earned USD', 'Clawbacks USD', 'Net USD'], s.byPlan.map((p) => [p.plan, KIND_LABEL[p.kind] ?? p.kind, num(p.earned), num(p.clawed), num(p.net)]), 'By plan')}
  ${s.held.length > 0 ? table(['Plan', 'Customer', 'Month', 'Why held', 'Amount USD'], s.held.map((h) => [h.plan, h.customer, h.period, h.reason, num(h.amount)]), 'Held') : ''}
  ${wide(table(['Plan', 'Kind', 'Partner', 'Customer', 'Reason', 'How', 'Amount USD', 'Booked'], s.lines.slice(0, STATEMENT_PAGE_LINES).map((l) => [l.plan, KIND_LABEL[l.kind] ?? l.kind, l.partner, l.customer, l.reason, l.detail ? html`<span class="prose">${l.detail}</span>` : '', num(l.amount_usd), when(l.booked)]), 'Lines'), 'The statement\'s lines')}
  ${s.lines.length > STATEMENT_PAGE_LINES ? html`<p class="muted">The first ${STATEMENT_PAGE_LINES} of ${s.lines.length} lines; <a href="${o.link('/console/affiliate/statements', { month: o.month, format: 'csv' })}">the CSV</a> has every one. The totals above count them all.</p>` : ''}`;
}

export function postbacksAffiliatePage(o: { defs: readonly PostbackDefinition[]; events: readonly EventRow[]; csrf: Html; readOnly: boolean; link: LinkTo; affiliates: readonly string[] }): Html {
  const form = (action: string, label: string, id: string) => (o.readOnly ? html`` : html`<form class="inline" method="post" action="${action}">${o.csrf}<input type="hidden" name="postback" value="${id}"><button type="submit">${label}</button></form>`);
  return html`${wide(table(['ID', 'Affiliate', 'Campaign', 'Events', 'Method', 'URL', 'State', 'Created', ''], o.defs.map((d) => [
    d.id, d.affiliateId, d.campaignId ?? '', d.events.join(', '), d.method, d.url, d.pausedAt ? `paused by the platform since ${when(d.pausedAt)}` : 'active', when(d.createdAt),
    html`${form('/console/affiliate/postbacks/test', 'Send a test', d.id)} ${form('/console/affiliate/postbacks/remove', 'Remove', d.id)}`,
  ]), 'Your postbacks'))}
  ${o.readOnly ? html`<p class="muted">Read-only: you are viewing as this affiliate.</p>` : o.affiliates.length === 0 ? html`<p class="muted">Your affiliate ids are held per partner: the platform sets up their postbacks. Ask your account manager.</p>` : html`<h2>Add a postback</h2>
  <p class="muted">Your tracker's URL (https), with macros such as {click_id} {customer_id} {event} {amount} {currency}. Each request is signed; the signing secret is shown once, on the next page.</p>
  <form method="post" action="/console/affiliate/postbacks/add" class="filters">${o.csrf}
    ${o.affiliates.length > 1 ? html`<label>Affiliate id <select name="affiliate">${o.affiliates.map((a) => html`<option>${a}</option>`)}</select></label>` : ''}
    <label>Events <input name="events" required placeholder="${EVENT_KINDS.slice(0, 3).join(',')}"></label>
    <label>Campaign <input name="campaign"></label>
    <label>Method <select name="method"><option>GET</option><option>POST</option></select></label>
    <label>URL <input name="url" required size="50" type="url"></label>
    <button type="submit" class="primary">Add</button></form>`}
  <h2>Delivery log</h2>
  ${wide(table(['Event id', 'Postback', 'Event', 'Customer', 'State', 'Attempts', 'HTTP status', 'Created', 'Delivered / next attempt'], o.events.map((e) => [
    e.event_id, e.postback_id, e.kind, e.customer_id ?? '', e.state, num(e.attempts), e.last_status ?? '', when(e.created_at), when(e.delivered_at ?? e.next_attempt_at)])))}`;
}
