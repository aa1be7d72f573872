/**
 * The console's pages for affiliate managers (the manager role): commissions and their ledger
 * lines down to the source record, reports, postbacks (add, remove, replay the dead events) and the
 * fraud queue with its decisions, and the erasure of a customer's personal data from its record
 * page. A decision goes through decideAndEvaluate
 * (jobs/fraud-decision.ts: the decision, then the commission evaluation, so the flag's holds are
 * released or voided at once). Every action is written to the audit log.
 */
import type { FastifyInstance } from 'fastify';
import { decideAndEvaluate } from '../../jobs/fraud-decision.js';
import { audit } from '../access/console-users.js';
import { DecisionError } from '../fraud/flags.js';
import { replay } from '../postbacks/claims.js';
import { addPostback, PostbackDefinitionError, removePostback, setPostbackPaused } from '../postbacks/definitions.js';
import { secretKeyFromEnv } from '../postbacks/secret.js';
import { eraseCustomers } from '../privacy/erase.js';
import { listErasures } from '../store/erasures.js';
import type { Knex } from 'knex';
import { csrfField, html, Html, layout } from './html.js';
import { commissionsPage, reportsPage } from './money-pages.js';
import { fraudFlagPage, fraudPage, ledgerLinesPage, sourceRecordPage } from './pages.js';
import { postbacksPage } from './postbacks-page.js';
import { commissionPlansOf, CONSOLE_ROUTE, type ConsoleDeps, type ConsoleRequests, type Form, type Query } from './request.js';

export function moneyRoutes(app: FastifyInstance, deps: ConsoleDeps, { send, signedIn, after, notice }: ConsoleRequests): void {
  const { store } = deps;
  const commissionPlans = commissionPlansOf(deps);

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
    const record = await sourceRecordPage(store, request.params.kind, qy.partner ?? '', qy.id ?? '');
    // A customer's page offers the erasure of its personal data (docs/personal-data.md).
    const erase = request.params.kind === 'customers' && qy.partner && qy.id ? await erasureSection(store.knex, session, qy.partner, qy.id) : '';
    return send(reply, layout('Source record', session, html`${record}${erase}`, { current: '/console/commissions', notice: notice(request) }));
  });

  app.post('/console/customers/erase', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'manager');
    if (!session) return reply;
    const form = request.body as Form;
    const partner = (form.partner ?? '').trim();
    const customer = (form.customer_id ?? '').trim();
    if (partner === '' || customer === '') return send(reply, layout('Erase', session, html`<p class="error">An erasure needs the partner and the customer id.</p>`), 400);
    if (form.confirm !== 'yes') return send(reply, layout('Erase', session, html`<p class="error">Tick the box to confirm: an erasure cannot be undone.</p>`), 400);
    const [result] = await eraseCustomers(store, { partner, customers: [customer], by: `console:${session.user.name}`, via: 'console' });
    const rows = Object.entries(result!.tables).filter(([, n]) => n > 0).map(([t, n]) => `${t} ${n}`).join(', ') || 'no row held a personal value';
    await audit(store, session.user.name, 'erase customer', `${partner} ${customer}`, rows);
    return after(reply, `/console/records/customers?${new URLSearchParams({ partner, id: customer })}`, `Erased the personal data of ${customer} (${rows})`);
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
    if (action === 'pause' || action === 'resume') {
      const done = await setPostbackPaused(store, id, action === 'pause');
      await audit(store, session.user.name, `postbacks ${action}`, id, done ? '' : 'not found');
      return after(reply, '/console/postbacks', done ? `Postback ${id} ${action === 'pause' ? 'paused: nothing is delivered until it is resumed' : 'resumed'}` : `No postback ${id}`);
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
}

/** A manager's erasure of the customer's personal data, confirmed by a tick: it cannot be undone. */
/** The erasure form, or, once the customer's personal data was erased, when and by whom. */
async function erasureSection(db: Knex, session: Parameters<typeof csrfField>[0], partner: string, customer: string): Promise<Html> {
  const [done] = await listErasures(db, { partner, customer });
  if (done) return html`<h2>Personal data erased</h2><p>Erased on ${done.erasedAt.slice(0, 19).replace('T', ' ')} UTC by ${done.requestedBy} (${done.via}); later loads of this customer keep no personal field.</p>`;
  return erasureForm(session, partner, customer);
}

function erasureForm(session: Parameters<typeof csrfField>[0], partner: string, customer: string): Html {
  return html`<form method="post" action="/console/customers/erase" class="erase">${csrfField(session)}
  <h2>Erase personal data</h2>
  <p>Sets the e-mail and names of ${customer} to nothing everywhere in the store (rejects, fraud evidence and postback events included); the ledger and the reports stay as they are, and later loads of this customer keep no personal field.</p>
  <input type="hidden" name="partner" value="${partner}"><input type="hidden" name="customer_id" value="${customer}">
  <div><input type="checkbox" id="erase-confirm" name="confirm" value="yes"><label for="erase-confirm">I confirm this erasure request; it cannot be undone</label></div>
  <button type="submit">Erase personal data</button></form>`;
}
