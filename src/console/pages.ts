/**
 * The pages of the web console. Each reads through the functions the CLI uses (status rows,
 * rejects, the ledger report, fraud flags, reports, the onboarding checklist): no second query
 * of its own for anything the CLI already answers.
 */
import { deleteFigures, listHolds } from '../store/delete-holds.js';
import { statusRows } from '../../jobs/stream-status.js';
import { describeUnevaluated, notCountedBy, unevaluated } from '../store/unevaluated.js';
import { isBreach, type Freshness } from '../freshness.js';
import { ledgerReport } from '../commission/report.js';
import { listReviewHolds } from '../commission/review-holds.js';
import type { PartnerDefinition } from '../config/definition.js';
import type { InvalidDefinition } from '../config/load-definitions.js';
import { byExposure, decisionsOf, getFlag } from '../fraud/flags.js';
import { checklistStatus } from '../onboarding/checklist.js';
import { countOpenRejects, listRejects } from '../store/rejects.js';
import type { Store } from '../store/store.js';
import { csrfField, html, Html, num, q, table, when } from './html.js';
import { listAudit, type Session } from '../access/console-users.js';
import type { Plan } from '../commission/plans.js';
import type { BackfillJob, StreamProgress } from './backfills.js';

/** Open rejects grouped on the Rejects page (the oldest first); the counts per stream cover all. */
export const REJECTS_GROUPED = 2000;


/** Personal fields of a sample record: shown as their first character and stars. */
const PERSONAL = /e?mail|name|phone|birth|address|street|city|zip|postal|ip_?addr|^ip$|document|passport|iban|card|ssn|tax/i;
export function maskPersonal(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => maskPersonal(v, key));
  if (value && typeof value === 'object') {
    // Evidence names what it matched as {key: 'email', value: ...}: the value is as personal as its key.
    const named = typeof (value as { key?: unknown }).key === 'string' && PERSONAL.test((value as { key: string }).key) ? (value as { key: string }).key : undefined;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskPersonal(v, k === 'value' && named ? named : k)]));
  }
  if (PERSONAL.test(key) && value !== null && value !== undefined && value !== '') {
    const text = String(value);
    return `${text.slice(0, 1)}${'*'.repeat(Math.min(8, Math.max(3, text.length - 1)))}`;
  }
  return value;
}

/** The status command's freshness as one signal: breach when `status --check` fails for it (isBreach), late while due, else ok. */
function stateBadge(f: Freshness | null | undefined): Html {
  if (!f) return html`<span class="state state-none">no target</span>`;
  const signal = isBreach(f) ? 'breach' : f.state === 'ok' ? 'ok' : 'late';
  return html`<span class="state state-${signal}" title="${f.state}">${signal}</span>`;
}

const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

export async function partnersPage(store: Store, definitions: readonly PartnerDefinition[], session: Session, backfills: readonly BackfillJob[] = [], invalid: readonly InvalidDefinition[] = []): Promise<Html> {
  const rows = await statusRows(store, definitions, undefined, invalid);
  const defined = new Set(definitions.map((d) => d.partner));
  const partners = [...new Set(rows.map((r) => r.partner))];
  const canRun = session.user.role === 'operator';
  const waiting = await unevaluated(store.knex, store.clock());
  return html`${await deleteHoldsNotice(store)}${waiting.length > 0 ? html`<div class="notice" role="status">${waiting.map((u) => html`<p>${describeUnevaluated(u)}. ${capitalized(notCountedBy(u))} do not count them yet: the run loading them evaluates them at its end.</p>`)}</div>` : ''}
  ${table(['Partner', 'Stream', 'Freshness', 'Detail', 'Last run', 'Result', 'Watermark', 'Open rejects', 'Waiting', 'Error'],
    rows.map((r) => [r.partner, r.stream, stateBadge(r.freshness), r.freshness ? `${r.freshness.detail} (target: ${r.freshness.target})` : 'not pulled (no definition)',
      r.last_run ? `${when(r.last_run.started_at)} ${r.last_run.kind}` : 'never', r.last_run?.status ?? '-', r.watermark ?? '-',
      r.rejects_open > 0 ? html`<a href="/console/rejects?${q({ partner: r.partner })}">${r.rejects_open}</a>` : '0', r.waiting,
      (r.last_run as { error?: string | null } | null)?.error ?? '']), 'Streams and their freshness')}
  ${canRun ? html`<h2>Run now</h2><p class="muted">One incremental sync of every stream of the partner, the same job as <code>partner-sync run</code>.</p>
  ${partners.filter((p) => defined.has(p)).map((p) => html`<form class="inline" method="post" action="/console/partners/run">${csrfField(session)}<input type="hidden" name="partner" value="${p}"><button type="submit">Run ${p} now</button></form> `)}
  <h2>Backfill</h2><p class="muted">Closed days of every stream, the same job as <code>partner-sync backfill</code>; its progress shows while it runs, its runs on the Runs page.</p>
  <form class="filters" method="post" action="/console/partners/backfill">${csrfField(session)}
    <div><label for="bf-partner">Partner</label><select id="bf-partner" name="partner">${partners.filter((p) => defined.has(p)).map((p) => html`<option>${p}</option>`)}</select></div>
    <div><label for="bf-from">From</label><input id="bf-from" name="from" type="date" required></div>
    <div><label for="bf-to">To</label><input id="bf-to" name="to" type="date" required></div><button type="submit">Backfill</button></form>` : ''}
  ${await deletesSection(store, session)}
  ${backfillsList(backfills)}`;
}

/** A notice while the mass-delete guard holds deletes (docs/loading.md, Deletes). */
async function deleteHoldsNotice(store: Store): Promise<Html | ''> {
  const holds = await listHolds(store.knex, { state: 'held' });
  if (holds.length === 0) return '';
  const records = holds.reduce((n, h) => n + h.ids.length, 0);
  return html`<div class="notice" role="status"><p>The mass-delete guard holds ${records} delete(s) in ${holds.length} hold(s) (${[...new Set(holds.map((h) => `${h.partner}/${h.entity}`))].join(', ')}): nothing of them is deleted, and no commission clawed back, until an operator applies or discards them below (or <code>partner-sync deletes apply ID</code>).</p></div>`;
}

/** Deletes learned at the source per stream, and the held ones with an operator's apply and discard. */
async function deletesSection(store: Store, session: Session): Promise<Html | ''> {
  const figures = await deleteFigures(store.knex);
  if (figures.length === 0) return '';
  const holds = await listHolds(store.knex, { state: 'held' });
  const operator = session.user.role === 'operator';
  const decide = (id: number, decision: 'apply' | 'discard') => html`<form class="inline" method="post" action="/console/deletes/${decision}">${csrfField(session)}<input type="hidden" name="hold" value="${String(id)}"><button type="submit">${decision === 'apply' ? 'Apply' : 'Discard'} hold ${String(id)}</button></form>`;
  return html`<h2>Deletes at the source</h2>
  ${table(['Partner', 'Stream', 'Deleted', 'Held by the guard', 'Discarded'], figures.map((f) => [f.partner, f.entity, f.applied, f.held > 0 ? `${f.held} in ${f.holds} hold(s)` : '-', f.discarded > 0 ? f.discarded : '-']), 'Deletes per stream')}
  ${holds.length > 0 ? table(['Hold', 'Partner', 'Stream', 'Records', 'Learned via', 'Held at', 'Why', ...(operator ? ['Decide'] : [])],
    holds.map((h) => [h.id, h.partner, h.entity, h.ids.length, h.learnedVia, when(h.heldAt), h.reason, ...(operator ? [html`${decide(h.id, 'apply')} ${decide(h.id, 'discard')}`] : [])]), 'Held deletes') : ''}`;
}

export async function runsPage(store: Store, filter: { partner?: string; stream?: string; status?: string }): Promise<Html> {
  const query = store.knex('runs').select('*').orderBy('started_at', 'desc').limit(200);
  if (filter.partner) query.where('partner_id', filter.partner);
  if (filter.stream) query.where('stream', filter.stream);
  if (filter.status) query.where('status', filter.status);
  const runs: Record<string, unknown>[] = await query;
  const field = (name: string, label: string, value: string | undefined) => html`<div><label for="f-${name}">${label}</label><input id="f-${name}" name="${name}" value="${value ?? ''}" size="14"></div>`;
  return html`<form class="filters" method="get" action="/console/runs">${field('partner', 'Partner', filter.partner)}${field('stream', 'Stream', filter.stream)}
  <div><label for="f-status">Status</label><select id="f-status" name="status"><option value="">any</option>${['running', 'succeeded', 'failed', 'partial'].map((s) =>
    html`<option${s === filter.status ? new Html(' selected') : ''}>${s}</option>`)}</select></div><button type="submit">Filter</button></form>
  ${table(['Started', 'Partner', 'Stream', 'Kind', 'Status', 'Pulled', 'Loaded', 'Rejected', 'Waiting', 'Window', 'Duration ms', 'Error'],
    runs.map((r) => [when(r.started_at), r.partner_id, r.stream, r.kind, r.status, num(r.pulled), num(r.loaded), num(r.rejected), num(r.waiting),
      r.window_from || r.window_to ? `${String(r.window_from ?? '')} – ${String(r.window_to ?? '')}` : '', num(r.duration_ms), r.error ?? '']), `Runs (latest ${runs.length})`)}`;
}

export async function rejectsPage(store: Store, session: Session, filter: { partner?: string }): Promise<Html> {
  // The groups are taken over the oldest open rejects (REJECTS_GROUPED); the totals per stream are exact.
  const [rejects, open] = await Promise.all([listRejects(store.knex, { status: 'open', partner: filter.partner, limit: REJECTS_GROUPED }), countOpenRejects(store.knex)]);
  const total = [...open].filter(([k]) => !filter.partner || k.startsWith(`${filter.partner}/`)).reduce((n, [, c]) => n + c, 0);
  const groups = new Map<string, { partner: string; entity: string; field: string; rule: string; count: number; sample: unknown; message: string }>();
  for (const r of rejects) {
    for (const e of r.errors) {
      const key = [r.partner_id, r.entity, e.field, e.rule].join('\u0000');
      const g = groups.get(key);
      if (g) g.count += 1;
      else {
        let payload: unknown;
        try {
          payload = JSON.parse(r.payload);
        } catch {
          payload = r.payload;
        }
        groups.set(key, { partner: r.partner_id, entity: r.entity, field: e.field, rule: e.rule, count: 1, sample: maskPersonal(payload), message: e.message });
      }
    }
  }
  const partners = [...new Set(rejects.map((r) => r.partner_id))].sort();
  const canAct = session.user.role === 'operator';
  return html`<p>${total} open reject(s)${filter.partner ? ` of ${filter.partner}` : ''}${total > rejects.length ? `; grouped below: the oldest ${rejects.length}` : ''}. Personal fields of the samples are masked.</p>
  ${table(['Partner', 'Stream', 'Field', 'Rule', 'Count', 'Message', 'Sample record'],
    [...groups.values()].sort((a, b) => b.count - a.count).map((g) => [g.partner, g.entity, g.field, g.rule, num(g.count), g.message, html`<pre class="sample" tabindex="0">${JSON.stringify(g.sample, null, 1)}</pre>`]), 'Open rejects by field and rule')}
  ${canAct && partners.length > 0 ? html`<h2>Replay or discard</h2>${partners.map((p) => html`<div class="filters">
    <form class="inline" method="post" action="/console/rejects/replay">${csrfField(session)}<input type="hidden" name="partner" value="${p}"><button type="submit" class="primary">Replay ${p}</button></form>
    <form class="inline" method="post" action="/console/rejects/discard">${csrfField(session)}<input type="hidden" name="partner" value="${p}">
      <label for="reason-${p}">Reason</label><input id="reason-${p}" name="reason" required size="30"><button type="submit">Discard open rejects of ${p}</button></form></div>`)}` : ''}`;
}

function sourceLink(partner: string, source: string): Html {
  const [kind, id] = [source.slice(0, source.indexOf(':')), source.slice(source.indexOf(':') + 1)];
  return html`<a href="/console/records/${kind}?${q({ partner, id })}">${source}</a> `;
}

export async function ledgerLinesPage(store: Store, plans: readonly Plan[], filter: { affiliate?: string; month?: string; partner?: string; plan?: string }): Promise<Html> {
  const report = await ledgerReport(store.knex, filter, { lines: true, plans, now: store.now() });
  return html`<p>Affiliate ${filter.affiliate ?? 'any'}, month ${filter.month ?? 'any'}, partner ${filter.partner ?? 'any'}, plan ${filter.plan ?? 'any'}: ${report.total_usd} USD. <a href="/console/commissions">Back to commissions</a></p>
  ${table(['Line', 'Created', 'Customer', 'Period', 'Reason', 'Amount USD', 'Running total USD', 'Source records'],
    (report.lines ?? []).map((l) => [l.id, when(l.created_at), l.customer_id ?? '-', l.period, l.reason, num(l.amount_usd), num(l.total_usd), l.sources.map((s) => sourceLink(l.partner_id, s))]), 'Ledger lines')}`;
}

export async function sourceRecordPage(store: Store, kind: string, partner: string, id: string): Promise<Html> {
  let rows: Record<string, unknown>[] = [];
  if (kind === 'transactions') rows = await store.knex('transactions').where({ partner_id: partner, transaction_id: id });
  else if (kind === 'customers') rows = await store.knex('customers').where({ partner_id: partner, customer_id: id });
  else if (kind === 'activity') {
    const at = id.lastIndexOf('@');
    const [customer, day] = [id.slice(0, at), id.slice(at + 1)];
    for (const t of ['gaming_activity', 'trading_activity']) rows.push(...((await store.knex(t).where({ partner_id: partner, customer_id: customer }).where('date', day)) as Record<string, unknown>[]));
  }
  if (rows.length === 0) return html`<p class="error">No ${kind} record ${id} of ${partner} in the store.</p>`;
  return html`${rows.map((r) => table(['Field', 'Value'], Object.entries(maskPersonal(r) as Record<string, unknown>).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v === null ? '' : String(v)]), `${kind} ${id} of ${partner}`))}`;
}

/** Fraud flags per queue page, the largest commission held first. */
export const FLAGS_PER_PAGE = 50;

/**
 * The fraud queue, one page of flags at a time, in money order: the commission each flag holds
 * for review (largest first), then its severity, then the older flag; the flags' own columns and
 * how many customers each names (the full flag, evidence and customers, is the flag's page: getFlag).
 */
export async function fraudPage(store: Store, status: string | undefined, pageParam?: string): Promise<Html> {
  const shown = (['open', 'confirmed', 'dismissed'] as const).find((s) => s === status) ?? 'open';
  const page = Math.max(1, Math.floor(Number(pageParam)) || 1);
  const knex = store.knex;
  const [rows, count] = await Promise.all([
    byExposure(knex('fraud_flags').where('status', shown)).limit(FLAGS_PER_PAGE + 1).offset((page - 1) * FLAGS_PER_PAGE)
      .select('id', 'partner_id', 'rule', 'affiliate_id', 'severity', 'status', 'held_cents', 'first_seen', 'last_seen') as Promise<Record<string, unknown>[]>,
    knex('fraud_flags').where('status', shown).count({ n: '*' }).first() as Promise<{ n: unknown } | undefined>,
  ]);
  const flags = rows.slice(0, FLAGS_PER_PAGE);
  const customers = new Map<number, number>();
  if (flags.length > 0) {
    const counted = (await knex('fraud_flag_customers').whereIn('flag_id', flags.map((f) => Number(f.id))).groupBy('flag_id').select('flag_id').count({ n: '*' })) as { flag_id: unknown; n: unknown }[];
    for (const c of counted) customers.set(Number(c.flag_id), Number(c.n));
  }
  const total = Number(count?.n ?? 0);
  const link = (p: number, label: string) => html`<a href="/console/fraud?${q({ status: shown, page: String(p) })}">${label}</a>`;
  return html`<form class="filters" method="get" action="/console/fraud"><div><label for="f-status">Status</label><select id="f-status" name="status">${['open', 'confirmed', 'dismissed'].map((s) =>
    html`<option${s === shown ? new Html(' selected') : ''}>${s}</option>`)}</select></div><button type="submit">Show</button></form>
  <p>${total} ${shown} flag(s)${total > FLAGS_PER_PAGE ? `; ${(page - 1) * FLAGS_PER_PAGE + 1}–${(page - 1) * FLAGS_PER_PAGE + flags.length} shown` : ''}.</p>
  ${table(['Flag', 'Partner', 'Rule', 'Affiliate', 'Severity', 'Status', 'Customers', 'Held USD', 'First seen', 'Last seen'],
    flags.map((f) => [html`<a href="/console/fraud/${f.id}">#${f.id}</a>`, f.partner_id, f.rule, f.affiliate_id ?? '(several)', f.severity, f.status, customers.get(Number(f.id)) ?? 0, (Number(f.held_cents ?? 0) / 100).toFixed(2), when(f.first_seen), when(f.last_seen)]), `Fraud flags (${shown})`)}
  ${page > 1 || rows.length > FLAGS_PER_PAGE ? html`<p class="pager">${page > 1 ? link(page - 1, '← Previous flags') : ''} ${rows.length > FLAGS_PER_PAGE ? link(page + 1, 'Next flags →') : ''}</p>` : ''}`;
}

export async function fraudFlagPage(store: Store, session: Session, id: number): Promise<Html | undefined> {
  const flag = await getFlag(store.knex, id);
  if (!flag) return undefined;
  const decisions = await decisionsOf(store.knex, id);
  const holds = (await listReviewHolds(store.knex, { partner: flag.partner_id })).filter((h) => h.flags.some((f) => f.id === id));
  const lines: Record<string, unknown>[] = flag.customers.length === 0 ? [] : await store.knex('commission_ledger').where('partner_id', flag.partner_id).whereIn('customer_id', flag.customers).orderBy('id');
  return html`<p>${flag.rule} (${flag.severity}) of partner ${flag.partner_id}: <strong>${flag.status}</strong>${flag.decided_by ? ` by ${flag.decided_by} at ${when(flag.decided_at)}: ${flag.decision_reason ?? ''}` : ''}</p>
  <p>Customers: ${flag.customers.join(', ')}; affiliate ${flag.affiliate_id ?? '(several)'}.</p>
  <h2>Evidence</h2><pre tabindex="0">${JSON.stringify(maskPersonal(flag.evidence), null, 2)}</pre>
  <h2>Commission held for review by this flag</h2>
  ${holds.length > 0 ? table(['Plan', 'Affiliate', 'Customer', 'Period', 'Withheld USD', 'Waiting USD'], holds.map((h) => [h.plan_id, h.affiliate_id, h.customer_id ?? '-', h.period, num(h.withheld_usd), num(h.waiting_usd ?? '-')]))
    : html`<p id="no-holds">No commission is held for this flag${flag.status === 'confirmed' ? ' (confirmed: its holds were voided)' : flag.status === 'dismissed' ? ' (dismissed: its holds were released)' : ''}.</p>`}
  <h2>Ledger lines of its customers</h2>
  ${table(['Line', 'Affiliate', 'Customer', 'Period', 'Reason', 'Amount USD'], lines.map((l) => [l.id, l.affiliate_id, l.customer_id, l.period, l.reason, num(l.amount_usd)]))}
  ${decisions.length > 0 ? html`<h2>Decisions</h2>${table(['Decision', 'By', 'At', 'Reason'], decisions.map((d) => [d.decision, d.by, when(d.at), d.reason]))}` : ''}
  ${flag.status === 'open' && session.user.role === 'manager' ? html`<h2>Decide</h2><form method="post" action="/console/fraud/${flag.id}/decide">${csrfField(session)}
    <label for="reason">Reason</label><input id="reason" name="reason" required size="50">
    <button type="submit" name="decision" value="confirmed" class="primary">Confirm fraud</button> <button type="submit" name="decision" value="dismissed">Dismiss</button></form>` : ''}`;
}

export async function onboardingPage(store: Store): Promise<Html> {
  const status = await checklistStatus(store.knex);
  const partners = Object.keys(status).sort();
  if (partners.length === 0) return html`<p class="empty">No onboarding checklist yet (partner-sync onboard verifies one).</p>`;
  return html`${partners.map((p) => table(['Item', 'OK', 'Detail', 'Checked', 'First passed'], status[p]!.map((i) => [i.item, i.ok ? 'yes' : 'no', i.detail, when(i.checked_at), when(i.first_ok_at)]), `Partner ${p}`))}`;
}

export async function activityPage(store: Store): Promise<Html> {
  const entries = await listAudit(store);
  return table(['When', 'Who', 'Action', 'Target', 'Detail'], entries.map((e) => [when(e.at), e.user, e.action, e.target, e.detail]), 'Actions taken in the console (latest first)');
}

const streamCells = (s: StreamProgress): unknown[] => [s.stream, s.windows > 0 ? `${s.window}/${s.windows}` : '-', s.days || '-', s.pulled, s.loaded, s.rejected ?? '-', `${s.status ?? (s.window > 0 ? 'running' : 'waiting')}${s.error ? `: ${s.error}` : ''}`];
const STREAM_FIELDS = ['stream', 'window', 'days', 'pulled', 'loaded', 'rejected', 'status'];

/** A console backfill while it runs and once done: ./assets backfill.js polls its progress and fills the same cells. */
export function backfillPage(job: BackfillJob): Html {
  return html`<div id="backfill" data-progress="/console/backfills/${job.id}/progress">
  <p>Backfill of <strong>${job.partner}</strong>, days ${job.from} to ${job.to}, started by ${job.by} at ${job.startedAt.slice(0, 19).replace('T', ' ')} UTC: <strong id="bf-state" class="state state-${job.state === 'failed' ? 'breach' : job.state === 'done' ? 'ok' : 'late'}">${job.state}</strong></p>
  <p><progress id="bf-bar" max="1" value="0" aria-label="Days windows read">0%</progress> <span id="bf-pct">0%</span> of the days windows read</p>
  <table><caption>Progress by stream</caption><thead><tr>${['Stream', 'Days window', 'Days', 'Pulled', 'Loaded', 'Rejected', 'Status'].map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
  <tbody>${job.streams.map((s) => html`<tr data-stream="${s.stream}">${streamCells(s).map((c, i) => html`<td data-field="${STREAM_FIELDS[i]}">${c}</td>`)}</tr>`)}</tbody></table>
  <p id="bf-summary" role="status">${job.state === 'running' ? '' : job.error ? `Failed: ${job.error}` : 'Done.'}</p>
  <p><a href="/console/runs?${q({ partner: job.partner })}">Runs of ${job.partner}</a> · <a href="/console/partners">Partners</a></p></div>`;
}

export function backfillsList(jobs: readonly BackfillJob[]): Html {
  if (jobs.length === 0) return html``;
  return table(['Backfill', 'Partner', 'Days', 'By', 'Started', 'State'], jobs.map((j) => [html`<a href="/console/backfills/${j.id}">${j.id}</a>`, j.partner, `${j.from} – ${j.to}`, j.by, j.startedAt.slice(0, 19).replace('T', ' '), j.state]), 'Backfills started here (the last hour)');
}
