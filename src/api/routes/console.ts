/**
 * The web console (src/console/): server-rendered pages under /console/ on the API's port.
 * - Sign in with a console user (partner-sync users add); the session cookie `ps_console` is
 *   HttpOnly, SameSite=Strict, Path=/console, and Secure when the request came over HTTPS.
 * - Every POST carries the session's CSRF token (`_csrf` field): without it or with another, 403.
 * - Roles: operators run partners and replay or discard rejects; managers see commissions and
 *   reports and decide fraud flags. A page or action of the other role answers 403.
 * - Every action is written to the audit log (who, when, what) shown on the Activity page.
 * Actions call the jobs the CLI calls: jobs/run-partner.ts, jobs/replay-rejects.ts,
 * discardRejects, decideAndEvaluate (jobs/fraud-decision.ts: the decision, then the commission evaluation, so its holds are released
 * or voided at once).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { decideAndEvaluate } from '../../../jobs/fraud-decision.js';
import { replayRejects } from '../../../jobs/replay-rejects.js';
import { runPartner } from '../../../jobs/run-partner.js';
import { withExclusiveStreams } from '../../../jobs/exclusive-streams.js';
import { loadPlans } from '../../commission/load-plans.js';
import type { Plan } from '../../commission/plans.js';
import { CSS, html, Html, layout } from '../../console/html.js';
import { commissionsPage, reportsPage } from '../../console/money-pages.js';
import {
  activityPage, backfillPage, fraudFlagPage, fraudPage, ledgerLinesPage, onboardingPage, partnersPage, rejectsPage, runsPage, sourceRecordPage,
} from '../../console/pages.js';
import { FAILED, REFUSED, signInWait, triedName } from '../../console/throttle.js';
import { Backfills, summaryOf } from '../../console/backfills.js';
import { ENTITIES } from '../../types.js';
import { audit, checkPassword, endSession, findSession, SESSION_HOURS, startSession, type Role, type Session } from '../../access/console-users.js';
import { DecisionError } from '../../fraud/flags.js';
import { postbacksPage } from '../../console/postbacks-page.js';
import { replay } from '../../postbacks/claims.js';
import { addPostback, PostbackDefinitionError, removePostback } from '../../postbacks/definitions.js';
import { secretKeyFromEnv } from '../../postbacks/secret.js';
import { packageRoot } from '../../paths.js';
import { discardRejects } from '../../store/reject-lifecycle.js';
import type { ApiDeps, RouteModule } from '../types.js';

export const SESSION_COOKIE = 'ps_console';
/** Console pages are served by the API's server but are not part of the partner API document (/openapi.json). */
const CONSOLE_ROUTE = { config: { openapi: false } };
const DAY = /^\d{4}-\d{2}-\d{2}$/;

function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

type Form = Record<string, string | undefined>;
type Query = Record<string, string | undefined>;

const CHART_JS = join(packageRoot(), 'node_modules', 'chart.js', 'dist', 'chart.umd.js');

async function consoleModule(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const { store } = deps;
  const backfills = new Backfills(store.clock);
  const definitions = deps.config?.definitions ?? [];
  let plans: Plan[] | undefined;
  const commissionPlans = async (): Promise<Plan[]> => {
    if (plans) return plans;
    const file = deps.config ? join(deps.config.dir, 'commissions.yaml') : undefined;
    plans = file && existsSync(file) ? (await loadPlans(file)).plans : [];
    return plans;
  };

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  const send = (reply: FastifyReply, page: string, status = 200) =>
    reply.code(status).header('cache-control', 'no-store').header('server-timing', `app;dur=${reply.elapsedTime.toFixed(1)}`).header('x-frame-options', 'DENY')
      .header('content-security-policy', "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
      .type('text/html; charset=utf-8').send(page);

  const sessionOf = async (request: FastifyRequest): Promise<Session | undefined> => {
    const id = cookieOf(request, SESSION_COOKIE);
    return id ? findSession(store, id) : undefined;
  };

  /** The signed-in session, or a redirect to the login page (GET) / 401 (POST). */
  const signedIn = async (request: FastifyRequest, reply: FastifyReply, role?: Role): Promise<Session | undefined> => {
    const session = await sessionOf(request);
    if (!session) {
      if (request.method === 'GET') void reply.redirect(`/console/login?next=${encodeURIComponent(request.url)}`, 303);
      else void send(reply, layout('Sign in needed', undefined, html`<p class="error">Your session has ended. <a href="/console/login">Sign in</a> again.</p>`), 401);
      return undefined;
    }
    if (request.method === 'POST') {
      const token = (request.body as Form | undefined)?._csrf;
      if (token !== session.csrf) {
        void send(reply, layout('Refused', session, html`<p class="error">This form is stale or did not come from the console (CSRF token missing or wrong). Reload the page and try again.</p>`), 403);
        return undefined;
      }
    }
    if (role && session.user.role !== role) {
      void send(reply, layout('Not allowed', session, html`<p class="error">This needs the ${role} role; you are signed in as ${session.user.role}.</p>`), 403);
      return undefined;
    }
    return session;
  };

  const after = (reply: FastifyReply, path: string, notice: string) => reply.redirect(`${path}${path.includes('?') ? '&' : '?'}notice=${encodeURIComponent(notice)}`, 303);
  const notice = (request: FastifyRequest) => (request.query as Query).notice;

  app.get('/console/assets/console.css', CONSOLE_ROUTE, async (_request, reply) => reply.type('text/css; charset=utf-8').header('cache-control', 'max-age=3600').send(CSS));
  app.get('/console/assets/chart.umd.js', CONSOLE_ROUTE, async (_request, reply) => reply.type('text/javascript; charset=utf-8').header('cache-control', 'max-age=86400').send(readFileSync(CHART_JS)));
  app.get('/console/assets/backfill.js', CONSOLE_ROUTE, async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(BACKFILL_JS));
  app.get('/console/assets/reports.js', CONSOLE_ROUTE, async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(REPORTS_JS));

  app.get('/', CONSOLE_ROUTE, async (_request, reply) => reply.redirect('/console/partners', 303));
  app.get('/console', CONSOLE_ROUTE, async (_request, reply) => reply.redirect('/console/partners', 303));

  app.get('/console/login', CONSOLE_ROUTE, async (request, reply) => {
    const next = (request.query as Query).next ?? '/console/partners';
    return send(reply, layout('Sign in', undefined, html`<form class="login" method="post" action="/console/login">
      <input type="hidden" name="next" value="${next}">
      <label for="name">User name</label><input id="name" name="name" autocomplete="username" required>
      <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
      <p><button type="submit" class="primary">Sign in</button></p></form>`, { notice: notice(request) }));
  });

  app.post('/console/login', CONSOLE_ROUTE, async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const name = triedName(form.name ?? '');
    // Too many recent failures for this name or from this address: refused unchecked (./console/throttle.ts).
    const wait = await signInWait(store, name, request.ip);
    if (wait > 0) {
      await audit(store, name, REFUSED, request.ip, `locked out for ${wait} s after repeated wrong passwords`);
      return send(reply.header('retry-after', String(wait)), layout('Sign in', undefined, html`<p class="error" role="alert">Too many wrong passwords. Try again in ${Math.ceil(wait / 60)} minute(s).</p>`), 429);
    }
    const user = await checkPassword(store, name, form.password ?? '');
    if (!user) {
      await audit(store, name, FAILED, request.ip, '');
      return send(reply, layout('Sign in', undefined, html`<p class="error" role="alert">Wrong user name or password.</p><form class="login" method="post" action="/console/login">
        <label for="name">User name</label><input id="name" name="name" value="${form.name ?? ''}" required>
        <label for="password">Password</label><input id="password" name="password" type="password" required>
        <p><button type="submit" class="primary">Sign in</button></p></form>`), 401);
    }
    const session = await startSession(store, user);
    await audit(store, user.name, 'sign in', request.ip, `role ${user.role}`);
    const secure = request.protocol === 'https' ? '; Secure' : '';
    // Max-Age as well as Expires: a browser counts Max-Age from its own clock (RFC 6265 5.3 gives it
    // precedence), so a client whose clock differs from the server's still gets the whole session.
    reply.header('set-cookie', `${SESSION_COOKIE}=${session.id}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${SESSION_HOURS * 3600}; Expires=${session.expires.toUTCString()}${secure}`);
    const next = form.next && form.next.startsWith('/console/') && !form.next.startsWith('/console//') ? form.next : '/console/partners';
    return reply.redirect(next, 303);
  });

  app.post('/console/logout', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply);
    if (!session) return reply;
    await endSession(store, cookieOf(request, SESSION_COOKIE) ?? '');
    await audit(store, session.user.name, 'sign out', request.ip, '');
    reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0`);
    return reply.redirect('/console/login', 303);
  });

  app.get('/console/partners', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply);
    if (!session) return reply;
    return send(reply, layout('Partners', session, await partnersPage(store, definitions, session, backfills.list(), deps.config?.invalid), { current: '/console/partners', notice: notice(request) }));
  });

  app.post('/console/partners/run', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'operator');
    if (!session) return reply;
    const partner = (request.body as Form).partner ?? '';
    const def = definitions.find((d) => d.partner === partner);
    if (!def) return send(reply, layout('Run', session, html`<p class="error">No valid connector definition for partner ${partner}.</p>`), 400);
    const results = await withExclusiveStreams(store, deps.logger, (exclusive) => runPartner(
      { loader: deps.loader, clock: store.clock, logger: deps.logger, redact: deps.config?.redact ?? ((t: string) => t), exclusive },
      def, { kind: 'run', scheduledFor: store.clock(), allowShrink: false },
    ));
    const summary = results.map((r) => `${r.stream} ${r.status}: ${r.counts.loaded} loaded, ${r.counts.rejected} rejected${r.error ? ` (${r.error})` : ''}`).join('; ');
    await audit(store, session.user.name, 'run now', partner, summary);
    return after(reply, '/console/partners', `Ran ${partner}: ${summary}`);
  });

  app.post('/console/partners/backfill', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'operator');
    if (!session) return reply;
    const form = request.body as Form;
    const partner = form.partner ?? '';
    const [from, to] = [form.from ?? '', form.to ?? ''];
    const def = definitions.find((d) => d.partner === partner);
    const problem = !def ? `No valid connector definition for partner ${partner}.`
      : !DAY.test(from) || !DAY.test(to) ? 'From and to are dates, YYYY-MM-DD.'
        : from > to ? `From ${from} is after to ${to}.` : undefined;
    if (problem || !def) return send(reply, layout('Backfill', session, html`<p class="error">${problem}</p>`), 400);
    const today = store.clock().toISOString().slice(0, 10);
    if (to >= today) return send(reply, layout('Backfill', session, html`<p class="error">To ${to} is not a closed day yet (today is ${today} UTC); backfill closed days only.</p>`), 400);
    // Closed days through the same job as `partner-sync backfill`, not awaited: the page polls its progress.
    const job = backfills.start(
      { partner, from, to, by: session.user.name, streams: ENTITIES.filter((e) => def.streams[e]) },
      (progress) => withExclusiveStreams(store, deps.logger, (exclusive) => runPartner(
        { loader: deps.loader, clock: store.clock, logger: deps.logger, redact: deps.config?.redact ?? ((t: string) => t), exclusive, progress },
        def, { kind: 'backfill', from, to, allowShrink: false },
      )),
      (done) => audit(store, session.user.name, 'backfill', `${partner} ${from}..${to}`, summaryOf(done)),
    );
    await audit(store, session.user.name, 'backfill started', `${partner} ${from}..${to}`, `backfill ${job.id}`);
    return reply.redirect(`/console/backfills/${job.id}`, 303);
  });

  app.get<{ Params: { id: string } }>('/console/backfills/:id', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply);
    if (!session) return reply;
    const job = backfills.get(request.params.id);
    if (!job) return send(reply, layout('Backfill', session, html`<p class="error">No backfill ${request.params.id} in this server (finished backfills are kept for an hour; their runs are on the Runs page).</p>`), 404);
    return send(reply, layout(`Backfill of ${job.partner}`, session, backfillPage(job), { current: '/console/partners', scripts: html`<script src="/console/assets/backfill.js"></script>` }));
  });

  /** The backfill's progress as JSON, polled by the page (assets/backfill.js). */
  app.get<{ Params: { id: string } }>('/console/backfills/:id/progress', CONSOLE_ROUTE, async (request, reply) => {
    const session = await sessionOf(request);
    if (!session) return reply.code(401).send({ error: 'not signed in' });
    const job = backfills.get(request.params.id);
    if (!job) return reply.code(404).send({ error: 'no such backfill' });
    return reply.header('cache-control', 'no-store').send(job);
  });

  app.get('/console/runs', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply);
    if (!session) return reply;
    const qy = request.query as Query;
    return send(reply, layout('Runs', session, await runsPage(store, { partner: qy.partner, stream: qy.stream, status: qy.status }), { current: '/console/runs' }));
  });

  app.get('/console/rejects', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply);
    if (!session) return reply;
    return send(reply, layout('Rejects', session, await rejectsPage(store, session, { partner: (request.query as Query).partner }), { current: '/console/rejects', notice: notice(request) }));
  });

  app.post('/console/rejects/replay', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'operator');
    if (!session) return reply;
    const partner = (request.body as Form).partner ?? '';
    const results = await replayRejects(deps.loader, partner, definitions.find((d) => d.partner === partner));
    const summary = results.length === 0 ? 'no open rejects' : results.map((r) => `${r.entity}: ${r.replayed} replayed, ${r.counts.loaded} loaded, ${r.superseded} superseded, ${r.stillRejected} still rejected`).join('; ');
    await audit(store, session.user.name, 'replay rejects', partner, summary);
    return after(reply, '/console/rejects', `Replayed ${partner}: ${summary}`);
  });

  app.post('/console/rejects/discard', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'operator');
    if (!session) return reply;
    const form = request.body as Form;
    const partner = form.partner ?? '';
    const reason = (form.reason ?? '').trim();
    if (reason === '') return send(reply, layout('Discard', session, html`<p class="error">A discard needs a reason (kept for audit).</p>`), 400);
    const n = await discardRejects(store.knex, { partner, reason, by: `console:${session.user.name}`, now: store.now() });
    await audit(store, session.user.name, 'discard rejects', partner, `${n} discarded: ${reason}`);
    return after(reply, '/console/rejects', `Discarded ${n} open reject(s) of ${partner}`);
  });

  app.get('/console/commissions', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'manager');
    if (!session) return reply;
    const qy = request.query as Query;
    return send(reply, layout('Commissions', session, await commissionsPage(store, await commissionPlans(), { affiliate: qy.affiliate, month: qy.month, partner: qy.partner, page: qy.page }), { current: '/console/commissions' }));
  });

  app.get('/console/commissions/lines', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'manager');
    if (!session) return reply;
    const qy = request.query as Query;
    return send(reply, layout('Ledger lines', session, await ledgerLinesPage(store, await commissionPlans(), { affiliate: qy.affiliate, month: qy.month, partner: qy.partner, plan: qy.plan }), { current: '/console/commissions' }));
  });

  app.get<{ Params: { kind: string } }>('/console/records/:kind', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'manager');
    if (!session) return reply;
    const qy = request.query as Query;
    return send(reply, layout('Source record', session, await sourceRecordPage(store, request.params.kind, qy.partner ?? '', qy.id ?? ''), { current: '/console/commissions' }));
  });

  app.get('/console/reports', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'manager');
    if (!session) return reply;
    const qy = request.query as Query;
    const { body, data } = await reportsPage(store, { by: qy.by, from: qy.from, to: qy.to, partner: qy.partner });
    // The data travels as inert JSON (not script): the page's own script reads and charts it.
    const json = JSON.stringify(data).replace(/</g, '\\u003c');
    return send(reply, layout('Reports', session, html`${body}<script type="application/json" id="report-data">${new Html(json)}</script>`, {
      current: '/console/reports', scripts: html`<script src="/console/assets/chart.umd.js"></script><script src="/console/assets/reports.js"></script>`,
    }));
  });

  app.get('/console/postbacks', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'manager');
    if (!session) return reply;
    const qy = request.query as Query;
    return send(reply, layout('Postbacks', session, await postbacksPage(store, session, { postback: qy.postback, state: qy.state }), { current: '/console/postbacks', notice: notice(request) }));
  });

  app.post('/console/postbacks/add', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'manager');
    if (!session) return reply;
    const form = request.body as Form;
    try {
      const { postback, secret } = await addPostback(store, {
        affiliate: form.affiliate ?? '', campaign: form.campaign || undefined, events: form.events ?? '', method: form.method, url: form.url ?? '', includePersonal: form.include_personal === '1',
      }, secretKeyFromEnv(process.env));
      await audit(store, session.user.name, 'postbacks add', postback.id, `${postback.method} ${postback.url} (${postback.events.join(',')})`);
      return send(reply, layout('Postback added', session, html`<p>Postback ${postback.id} sends ${postback.events.join(', ')} of affiliate ${postback.affiliateId} to ${postback.url}.</p>
        <p>Its signing secret, shown only now: <code>${secret}</code></p><p><a href="/console/postbacks">Back to postbacks</a></p>`, { current: '/console/postbacks' }));
    } catch (error) {
      const message = error instanceof PostbackDefinitionError ? `Cannot add the postback: ${error.message}` : `Cannot add the postback: ${(error as Error).message}`;
      return send(reply, layout('Postbacks', session, html`<p class="error">${message}</p><p><a href="/console/postbacks">Back</a></p>`, { current: '/console/postbacks' }), 400);
    }
  });

  app.post('/console/postbacks/:action', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'manager');
    if (!session) return reply;
    const id = (request.body as Form).postback ?? '';
    const action = (request.params as { action: string }).action;
    if (action === 'remove') {
      const r = await removePostback(store, id);
      await audit(store, session.user.name, 'postbacks remove', id, r.removed ? `${r.settled} unsent settled` : 'not found');
      return after(reply, '/console/postbacks', r.removed ? `Postback ${id} removed` : `No postback ${id}`);
    }
    if (action === 'replay') {
      const n = await replay(store, { postbackId: id, dead: true });
      await audit(store, session.user.name, 'postbacks replay', id, `${n} dead event(s)`);
      return after(reply, `/console/postbacks?postback=${encodeURIComponent(id)}`, `${n} dead event(s) of ${id} due again`);
    }
    return send(reply, layout('Postbacks', session, html`<p class="error">Unknown action.</p>`), 404);
  });

  app.get('/console/fraud', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'manager');
    if (!session) return reply;
    return send(reply, layout('Fraud queue', session, await fraudPage(store, (request.query as Query).status, (request.query as Query).page), { current: '/console/fraud', notice: notice(request) }));
  });

  app.get<{ Params: { id: string } }>('/console/fraud/:id', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'manager');
    if (!session) return reply;
    const page = await fraudFlagPage(store, session, Number(request.params.id));
    if (!page) return send(reply, layout('Fraud flag', session, html`<p class="error">No fraud flag ${request.params.id}.</p>`), 404);
    return send(reply, layout(`Fraud flag #${request.params.id}`, session, page, { current: '/console/fraud', notice: notice(request) }));
  });

  app.post<{ Params: { id: string } }>('/console/fraud/:id/decide', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'manager');
    if (!session) return reply;
    const form = request.body as Form;
    const id = Number(request.params.id);
    const decision = form.decision === 'confirmed' || form.decision === 'dismissed' ? form.decision : undefined;
    const reason = (form.reason ?? '').trim();
    if (!decision || reason === '') return send(reply, layout('Fraud flag', session, html`<p class="error">Choose confirm or dismiss and give a reason.</p>`), 400);
    try {
      // Evaluated at once: the flag's held commission is released or voided.
      const flag = await decideAndEvaluate(store, await commissionPlans(), deps.logger, { id, decision, by: `console:${session.user.name}`, reason });
      await audit(store, session.user.name, `fraud ${decision === 'confirmed' ? 'confirm' : 'dismiss'}`, `flag #${id}`, reason);
      return after(reply, `/console/fraud/${id}`, `Flag #${id} ${flag.status}: ${flag.customers.length} customer(s) re-evaluated for commission`);
    } catch (error) {
      if (error instanceof DecisionError) return send(reply, layout('Fraud flag', session, html`<p class="error">${error.message}</p>`), 409);
      throw error;
    }
  });

  app.get('/console/onboarding', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply);
    if (!session) return reply;
    return send(reply, layout('Onboarding', session, await onboardingPage(store), { current: '/console/onboarding' }));
  });

  app.get('/console/activity', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply);
    if (!session) return reply;
    return send(reply, layout('Activity', session, await activityPage(store), { current: '/console/activity' }));
  });
}

/** Draws the Reports page's charts from its inert JSON data (Chart.js, served from node_modules). */
const REPORTS_JS = `(function () {
  var el = document.getElementById('report-data'); if (!el || !window.Chart) return;
  var d = JSON.parse(el.textContent);
  var base = { animation: false, maintainAspectRatio: false, plugins: { legend: { position: 'bottom' } } };
  function chart(id, config) { var c = document.getElementById(id); if (c) new Chart(c, config); }
  chart('ftd', { type: 'bar', data: { labels: d.periods, datasets: [{ label: 'FTDs', data: d.ftd, backgroundColor: '#0a58ca' }] },
    options: Object.assign({}, base, { scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } }) });
  chart('revenue', { type: 'line', data: { labels: d.periods, datasets: [
    { label: 'GGR USD', data: d.ggr, borderColor: '#1a7f37', backgroundColor: '#1a7f37', pointRadius: 2 },
    { label: 'NGR USD', data: d.ngr, borderColor: '#8a5a00', backgroundColor: '#8a5a00', pointRadius: 2 } ] },
    options: Object.assign({}, base, { scales: { y: { beginAtZero: true } } }) });
  chart('commissions', { type: 'bar', data: { labels: d.months, datasets: [{ label: 'Net commissions USD', data: d.commissions, backgroundColor: '#6f42c1' }] },
    options: Object.assign({}, base, { scales: { y: { beginAtZero: true } } }) });
  chart('funnel', { type: 'bar', data: { labels: d.funnelLabels, datasets: [{ label: 'customers', data: d.funnel, backgroundColor: '#0a58ca' }] },
    options: Object.assign({}, base, { indexAxis: 'y', scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } }) });
})();`;

/** Polls a backfill's progress (GET …/progress) and fills the page's cells until it is done; no reload. */
const BACKFILL_JS = `(function () {
  var root = document.getElementById('backfill'); if (!root) return;
  var url = root.getAttribute('data-progress');
  function set(row, field, value) { var c = row.querySelector('[data-field="' + field + '"]'); if (c) c.textContent = String(value); }
  function render(job) {
    var state = document.getElementById('bf-state');
    state.textContent = job.state;
    state.className = 'state state-' + (job.state === 'failed' ? 'breach' : job.state === 'done' ? 'ok' : 'late');
    var read = 0, all = 0;
    job.streams.forEach(function (s) {
      var row = root.querySelector('tr[data-stream="' + s.stream + '"]'); if (!row) return;
      set(row, 'window', s.windows > 0 ? s.window + '/' + s.windows : '-');
      set(row, 'days', s.days || '-');
      set(row, 'pulled', s.pulled);
      set(row, 'loaded', s.loaded);
      set(row, 'rejected', s.rejected === undefined ? '-' : s.rejected);
      set(row, 'status', (s.status || (s.window > 0 ? 'running' : 'waiting')) + (s.error ? ': ' + s.error : ''));
      all += s.windows || 1;
      read += s.status ? (s.windows || 1) : Math.max(0, s.window - 1);
    });
    var share = job.state === 'running' ? read / Math.max(1, all) : 1;
    document.getElementById('bf-bar').value = share;
    document.getElementById('bf-pct').textContent = Math.floor(share * 100) + '%';
    if (job.state !== 'running') document.getElementById('bf-summary').textContent = job.error ? 'Failed: ' + job.error : 'Done.';
  }
  function tick() {
    fetch(url, { credentials: 'same-origin', cache: 'no-store' }).then(function (r) { return r.ok ? r.json() : null; }).then(function (job) {
      if (!job) return;
      render(job);
      if (job.state === 'running') setTimeout(tick, 300);
    }, function () { setTimeout(tick, 2000); });
  }
  tick();
})();`;

/** In an encapsulated child: the form parser applies to the console's routes only. */
export const consoleRoutes: RouteModule = async (app, deps) => {
  await app.register(async (child) => consoleModule(child, deps));
};
