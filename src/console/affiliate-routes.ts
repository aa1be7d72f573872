/**
 * The affiliate's own view in the console (docs/console.md, Affiliates). Every page's scope is
 * the signed-in user's affiliate ids, read from the session on the server: no id in a path,
 * query or form widens it. A manager opens any affiliate's view read-only with `?as=USER`
 * (each page so opened is written to the audit log); operators have no business here (403).
 * An affiliate manages its own postbacks with the same checks as `partner-sync postbacks`
 * (the SSRF guard, signatures, rate limits); a manager can pause one from the Postbacks page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { affiliateUsers, audit, type Session } from '../access/console-users.js';
import { addDays } from '../kernel/dates.js';
import { listEvents } from '../postbacks/claims.js';
import { addPostback, getPostback, listPostbacks, PostbackDefinitionError, removePostback } from '../postbacks/definitions.js';
import { secretKeyFromEnv } from '../postbacks/secret.js';
import { sendTestEvent } from '../postbacks/test-event.js';
import { lastUpdated, periods, players, postbackAffiliates, revenueBasis, scopedCommission, scopedLedger, scopedReport, scopeOf, whereScoped, type ScopeEntry } from '../reports/affiliate-view.js';
import { csvLine, dashboardPage, PLAYER_CSV_HEADER, playersPage, postbacksAffiliatePage, statementOf, statementPage, type LinkTo } from './affiliate-pages.js';
import { csrfField, html, layout, q, table } from './html.js';
import { commissionPlansOf, CONSOLE_ROUTE, type ConsoleDeps, type ConsoleRequests, type Form, type Query } from './request.js';

interface Viewer {
  session: Session;
  /** The affiliate user whose view this is. */
  name: string;
  scope: ScopeEntry[];
  affiliates: string[];
  /** A manager's view as the affiliate: no action. */
  readOnly: boolean;
  link: LinkTo;
}

const PAGE = 100;
const CSV_PAGE = 5_000;

export function affiliateRoutes(app: FastifyInstance, deps: ConsoleDeps, { send, signedIn, after, notice }: ConsoleRequests): void {
  const { store } = deps;
  const commissionPlans = commissionPlansOf(deps);

  const refuse = (reply: FastifyReply, session: Session, status: number, text: string) => send(reply, layout(status === 404 ? 'Not found' : 'Not allowed', session, html`<p class="error">${text}</p>`), status);

  /** Who is looking, and at whose figures; undefined once a refusal is sent. */
  const viewer = async (request: FastifyRequest, reply: FastifyReply): Promise<Viewer | undefined> => {
    const session = await signedIn(request, reply, 'any');
    if (!session) return undefined;
    const as = (request.query as Query).as ?? (request.body as Form | undefined)?.as;
    if (session.user.role === 'affiliate') {
      const affiliates = [...(session.user.affiliates ?? [])];
      const link: LinkTo = (path, params = {}) => (q(params) ? `${path}?${q(params)}` : path);
      return { session, name: session.user.name, scope: scopeOf(affiliates), affiliates, readOnly: false, link };
    }
    if (session.user.role !== 'manager') {
      void refuse(reply, session, 403, "An affiliate's view is for the affiliate and for managers.");
      return undefined;
    }
    // A manager's view is read-only: no action, with or without `as`.
    if (request.method === 'POST') {
      void refuse(reply, session, 403, as ? `You are viewing as ${as}: read-only.` : "An affiliate's actions are the affiliate's own.");
      return undefined;
    }
    if (!as) {
      void reply.redirect('/console/affiliates', 303);
      return undefined;
    }
    const [user] = await affiliateUsers(store, as);
    if (!user) {
      void refuse(reply, session, 404, `No affiliate user ${as}.`);
      return undefined;
    }
    await audit(store, session.user.name, 'view as', as, request.url.split('?')[0] ?? '');
    const link: LinkTo = (path, params = {}) => `${path}?${q({ ...params, as })}`;
    return { session, name: user.name, scope: scopeOf(user.affiliates), affiliates: user.affiliates, readOnly: true, link };
  };

  const page = (v: Viewer, title: string, current: string, body: ReturnType<typeof html>, request: FastifyRequest) =>
    layout(title, v.session, v.readOnly ? html`<p class="notice" role="status">Viewing as ${v.name} (${v.affiliates.join(', ')}), read-only. <a href="/console/affiliates">Back to affiliates</a></p>${body}` : body, { current, notice: notice(request), viewAs: v.readOnly ? v.name : undefined });
  const asField = (v: Viewer) => (v.readOnly ? html`<input type="hidden" name="as" value="${v.name}">` : html``);

  app.get('/console/affiliate', CONSOLE_ROUTE, async (request, reply) => {
    const v = await viewer(request, reply);
    if (!v) return reply;
    const now = store.clock();
    const all = await commissionPlans();
    const ps = periods(now);
    const window = { from: addDays(now.toISOString().slice(0, 10), -29), to: now.toISOString().slice(0, 10) };
    // Each period by campaign (summed for its line; this month's rows are the table by campaign):
    // the month grain would add the commission columns, reading every ledger line of the affiliate.
    const [rows, commission, days, updated] = await Promise.all([
      Promise.all(ps.map(async (period) => ({ period, rows: await scopedReport(store, v.scope, { from: period.from, to: period.to }, 'campaign') }))),
      scopedCommission(store, v.scope, ps),
      scopedReport(store, v.scope, window, 'day'),
      lastUpdated(store, v.scope),
    ]);
    return send(reply, page(v, 'Dashboard', '/console/affiliate', dashboardPage({ periods: rows, commission, month: rows.find((r) => r.period.key === 'this_month')?.rows ?? [], days, window, revenue: revenueBasis(all, v.scope), updated, link: v.link }), request));
  });

  app.get('/console/affiliate/players', CONSOLE_ROUTE, async (request, reply) => {
    const v = await viewer(request, reply);
    if (!v) return reply;
    const qy = request.query as Query;
    const filter = { month: /^\d{4}-\d{2}$/.test(qy.month ?? '') ? qy.month : undefined, campaign: qy.campaign || undefined, country: /^[A-Za-z]{2}$/.test(qy.country ?? '') ? qy.country : undefined };
    const revenue = revenueBasis(await commissionPlans(), v.scope);
    if (qy.format === 'csv') {
      // The whole list, a keyset page at a time: memory stays at one page whatever the count.
      reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="players-${v.name}.csv"`).header('cache-control', 'no-store');
      let out = csvLine(PLAYER_CSV_HEADER);
      let after: string | undefined;
      do {
        const got = await players(store, v.scope, { ...filter, after, limit: CSV_PAGE }, revenue);
        for (const p of got.rows) out += csvLine([p.partner, p.customer_id, p.signup_date, p.country, p.campaign, p.click_id, p.ftd_date, p.ftd_usd, p.deposits_usd, p.revenue_usd, p.commission_usd]);
        after = got.next;
      } while (after);
      return reply.send(out);
    }
    const got = await players(store, v.scope, { ...filter, after: qy.after || undefined, limit: PAGE }, revenue);
    return send(reply, page(v, 'Players', '/console/affiliate/players', playersPage({ rows: got.rows, next: got.next, filter, revenue, link: v.link, asField: asField(v) }), request));
  });

  app.get('/console/affiliate/statements', CONSOLE_ROUTE, async (request, reply) => {
    const v = await viewer(request, reply);
    if (!v) return reply;
    const qy = request.query as Query;
    const current = store.clock().toISOString().slice(0, 7);
    const months = [...new Set([current, ...((await whereScoped(store.knex('commission_ledger'), v.scope).distinct('period')) as { period: string }[]).map((r) => r.period)])].sort().reverse();
    const month = /^\d{4}-\d{2}$/.test(qy.month ?? '') ? (qy.month as string) : current;
    const all = await commissionPlans();
    const ledgers = await scopedLedger(store, v.scope, month, all);
    const approvals = new Map<string, { net_usd: string; approved_at: string }>();
    // An approval is of an affiliate id and month on every partner: only the ids the user holds on every partner are its own.
    for (const r of (await store.knex('commission_approvals').whereIn('affiliate_id', postbackAffiliates(v.scope)).where('month', month)) as Record<string, unknown>[]) {
      approvals.set(`${String(r.affiliate_id)}|${month}`, { net_usd: String(r.net_usd), approved_at: String(r.approved_at instanceof Date ? r.approved_at.toISOString() : r.approved_at) });
    }
    const s = statementOf(ledgers, month, approvals, all);
    if (qy.format === 'csv') {
      let out = csvLine(['month', 'plan', 'kind', 'partner', 'customer_id', 'reason', 'amount_usd', 'booked_at']);
      for (const l of s.lines) out += csvLine([month, l.plan, l.kind, l.partner, l.customer, l.detail ? `${l.reason}: ${l.detail}` : l.reason, l.amount_usd, l.booked]);
      for (const h of s.held) out += csvLine([month, h.plan, 'held', '', h.customer, h.reason, h.amount, '']);
      out += csvLine([month, 'total', '', '', '', 'booked', s.total, '']);
      out += csvLine([month, 'payable', '', '', '', s.approved.length > 0 ? 'approved' : 'not approved yet', s.payable, '']);
      return reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="statement-${v.name}-${month}.csv"`).header('cache-control', 'no-store').send(out);
    }
    return send(reply, page(v, `Statement ${month}`, '/console/affiliate/statements', statementPage(s, { month, months, link: v.link, asField: asField(v), who: `${v.name} (${v.affiliates.join(', ')})` }), request));
  });

  const ownPostbacks = async (v: Viewer) => {
    const ids = new Set(postbackAffiliates(v.scope));
    return (await listPostbacks(store.knex)).filter((d) => ids.has(d.affiliateId));
  };

  app.get('/console/affiliate/postbacks', CONSOLE_ROUTE, async (request, reply) => {
    const v = await viewer(request, reply);
    if (!v) return reply;
    const defs = await ownPostbacks(v);
    const events = defs.length === 0 ? [] : await listEvents(store.knex, { postbackIds: defs.map((d) => d.id), limit: 100 });
    return send(reply, page(v, 'Postbacks', '/console/affiliate/postbacks', postbacksAffiliatePage({ defs, events, csrf: csrfField(v.session), readOnly: v.readOnly, link: v.link, affiliates: postbackAffiliates(v.scope) }), request));
  });

  app.post('/console/affiliate/postbacks/add', CONSOLE_ROUTE, async (request, reply) => {
    const v = await viewer(request, reply);
    if (!v) return reply;
    const form = request.body as Form;
    const mine = postbackAffiliates(v.scope);
    // The form's id, when given, must be one of the user's; without it, the only one.
    const affiliate = form.affiliate || (mine.length === 1 ? mine[0] : undefined);
    if (affiliate === undefined || !mine.includes(affiliate)) return refuse(reply, v.session, 403, 'That is not one of your affiliate ids.');
    try {
      // Never personal data, never a private address: those are the platform's decisions (partner-sync postbacks add).
      const { postback, secret } = await addPostback(store, { affiliate, campaign: form.campaign || undefined, events: form.events ?? '', method: form.method, url: form.url ?? '' }, secretKeyFromEnv(process.env));
      await audit(store, v.name, 'postbacks add', postback.id, `${postback.method} ${postback.url} (${postback.events.join(',')})`);
      return send(reply, layout('Postback added', v.session, html`<p>Postback ${postback.id} sends ${postback.events.join(', ')} to ${postback.url}.</p>
        <p>Its signing secret, shown only now: <code>${secret}</code> (docs/postbacks.md says how your tracker checks a signature).</p><p><a href="/console/affiliate/postbacks">Back to your postbacks</a></p>`, { current: '/console/affiliate/postbacks' }));
    } catch (error) {
      const message = error instanceof PostbackDefinitionError ? error.message : (error as Error).message;
      return send(reply, layout('Postbacks', v.session, html`<p class="error">Cannot add the postback: ${message}</p><p><a href="/console/affiliate/postbacks">Back</a></p>`, { current: '/console/affiliate/postbacks' }), 400);
    }
  });

  app.post('/console/affiliate/postbacks/:action', CONSOLE_ROUTE, async (request, reply) => {
    const v = await viewer(request, reply);
    if (!v) return reply;
    const id = (request.body as Form).postback ?? '';
    const action = (request.params as { action: string }).action;
    const def = await getPostback(store.knex, id);
    // Another affiliate's postback is not found, as one that does not exist.
    if (!def || def.removedAt !== null || !postbackAffiliates(v.scope).includes(def.affiliateId)) return refuse(reply, v.session, 404, `No postback ${id} of yours.`);
    if (action === 'remove') {
      const r = await removePostback(store, id);
      await audit(store, v.name, 'postbacks remove', id, `${r.settled} unsent settled`);
      return after(reply, '/console/affiliate/postbacks', `Postback ${id} removed`);
    }
    if (action === 'test') {
      const r = await sendTestEvent(store, def, secretKeyFromEnv(process.env));
      await audit(store, v.name, 'postbacks test', id, r.delivered ? `HTTP ${r.status}` : r.error ?? 'not delivered');
      return after(reply, '/console/affiliate/postbacks', r.delivered ? `Test event ${r.eventId} delivered: HTTP ${r.status} in ${r.ms} ms` : `Test event NOT delivered: ${r.error ?? ''}`);
    }
    return refuse(reply, v.session, 404, 'Unknown action.');
  });

  app.get('/console/affiliates', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'manager');
    if (!session) return reply;
    const users = await affiliateUsers(store);
    return send(reply, layout('Affiliates', session, html`<p class="muted">Each affiliate user's own view, read-only; opening one is written to the activity log. Add one with <code>partner-sync users add NAME --role affiliate --affiliate AFF_ID</code>.</p>
      ${table(['User', 'Affiliate ids', 'State', ''], users.map((u) => [u.name, u.affiliates.join(', '), u.disabled ? 'disabled' : 'active', html`<a href="/console/affiliate?${q({ as: u.name })}">View as ${u.name}</a>`]), 'Affiliate users')}`, { current: '/console/affiliates' }));
  });
}
