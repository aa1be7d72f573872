/**
 * The Postbacks page of the console (managers): the definitions, the delivery state of recent
 * events, and the actions the CLI has (add, with the secret shown once; remove; replay dead
 * events). It reads and writes through the same functions as `partner-sync postbacks`.
 */
import { deliverySummary, listEvents } from '../postbacks/claims.js';
import { listPostbacks } from '../postbacks/definitions.js';
import { EVENT_KINDS } from '../postbacks/events.js';
import type { Store } from '../store/store.js';
import { csrfField, html, num, q, table, when, type Html } from './html.js';
import type { Session } from '../access/console-users.js';

const STATES = ['pending', 'retrying', 'delivered', 'dead'];

export async function postbacksPage(store: Store, session: Session, filter: { postback?: string; state?: string }): Promise<Html> {
  const defs = await listPostbacks(store.knex);
  const state = filter.state && STATES.includes(filter.state) ? filter.state : undefined;
  const events = await listEvents(store.knex, { postbackId: filter.postback || undefined, state, limit: 100 });
  const summary = await deliverySummary(store);
  const form = (action: string, label: string, fields: Record<string, string>) => html`<form class="inline" method="post" action="${action}">${csrfField(session)}${Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}<button type="submit">${label}</button></form>`;
  return html`<p>${STATES.map((s) => html`<a href="/console/postbacks?${q({ state: s })}">${s}</a>: ${num(summary.states[s as keyof typeof summary.states])} `)}
  · oldest undelivered: ${Math.round(summary.lagSeconds)} s</p>
  ${table(['ID', 'Affiliate', 'Campaign', 'Events', 'Method', 'URL', 'Personal data', 'Rate/s', 'Created', 'State', ''], defs.map((d) => [
    html`<a href="/console/postbacks?${q({ postback: d.id })}">${d.id}</a>`, d.affiliateId, d.campaignId ?? '', d.events.join(', '), d.method, d.url, d.includePersonal ? 'sent' : 'not sent',
    d.ratePerSecond, when(d.createdAt), d.pausedAt ? `paused ${when(d.pausedAt)}` : 'active',
    html`${d.pausedAt ? form('/console/postbacks/resume', 'Resume', { postback: d.id }) : form('/console/postbacks/pause', 'Pause', { postback: d.id })} ${form('/console/postbacks/replay', 'Replay dead', { postback: d.id })} ${form('/console/postbacks/remove', 'Remove', { postback: d.id })}`,
  ]), 'Postbacks')}
  <h2>Delivery log${filter.postback ? ` of ${filter.postback}` : ''}${state ? ` (${state})` : ''}</h2>
  ${table(['Event id', 'Postback', 'Event', 'Customer', 'State', 'Attempts', 'Status', 'Created', 'Delivered / next attempt', 'Error'], events.map((e) => [
    e.event_id, e.postback_id, e.kind, e.customer_id ?? '', e.state, num(e.attempts), e.last_status ?? '', when(e.created_at), when(e.delivered_at ?? e.next_attempt_at), e.state === 'delivered' ? '' : e.last_error ?? '',
  ]))}
  <h2>Add a postback</h2>
  <p class="muted">The URL is checked now; the signing secret is shown once, on the next page. Macros: {click_id} {customer_id} {affiliate_id} {campaign_id} {event} {amount} {currency} {transaction_id} {event_id} and more (docs/postbacks.md).</p>
  <form method="post" action="/console/postbacks/add" class="filters">${csrfField(session)}
    <label>Affiliate <input name="affiliate" required></label><label>Campaign <input name="campaign"></label>
    <label>Events <input name="events" required placeholder="${EVENT_KINDS.slice(0, 3).join(',')}"></label>
    <label>Method <select name="method"><option>GET</option><option>POST</option></select></label>
    <label>URL <input name="url" required size="50"></label>
    <label><input type="checkbox" name="include_personal" value="1"> send personal data</label>
    <button type="submit" class="primary">Add</button></form>`;
}
