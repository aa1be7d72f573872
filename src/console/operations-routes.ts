/**
 * The console's operations pages: partners (run now, backfill and its progress), runs, rejects
 * (replay, discard), onboarding and the activity log. Every signed-in user sees them; the actions
 * need the operator role. Actions call the jobs the CLI calls (jobs/run-partner.ts under the
 * worker's stream locks, jobs/replay-rejects.ts, discardRejects) and are written to the audit log.
 */
import { applyHold, discardHold, HoldError } from '../../jobs/delete-holds.js';
import type { FastifyInstance } from 'fastify';
import { withExclusiveStreams } from '../../jobs/exclusive-streams.js';
import { replayRejects } from '../../jobs/replay-rejects.js';
import { runPartner } from '../../jobs/run-partner.js';
import { audit } from '../access/console-users.js';
import { discardRejects } from '../store/reject-lifecycle.js';
import { ENTITIES } from '../types.js';
import { Backfills, summaryOf } from './backfills.js';
import { html, layout } from './html.js';
import { activityPage, backfillPage, onboardingPage, partnersPage, rejectsPage, runsPage } from './pages.js';
import { CONSOLE_ROUTE, type ConsoleDeps, type ConsoleRequests, type Form, type Query } from './request.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function operationsRoutes(app: FastifyInstance, deps: ConsoleDeps, { send, sessionOf, signedIn, after, notice }: ConsoleRequests): void {
  const { store } = deps;
  const backfills = new Backfills(store.clock);
  const definitions = deps.config?.definitions ?? [];

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

  // An operator's decision on deletes the mass-delete guard held: the same job as `partner-sync deletes apply|discard`.
  for (const decision of ['apply', 'discard'] as const) {
    app.post(`/console/deletes/${decision}`, CONSOLE_ROUTE, async (request, reply) => {
      const session = await signedIn(request, reply, 'operator');
      if (!session) return reply;
      const id = Number((request.body as Form).hold ?? '');
      if (!Number.isInteger(id) || id <= 0) return send(reply, layout('Deletes', session, html`<p class="error">No such hold.</p>`), 400);
      try {
        const d = decision === 'apply' ? await applyHold(deps.loader, id, session.user.name) : await discardHold(deps.loader, id, session.user.name);
        const summary = decision === 'apply' ? `${d.deleted} ${d.hold.entity} deleted${d.cameBack.length > 0 ? `, ${d.cameBack.length} kept (sent again since)` : ''}` : `${d.hold.ids.length} ${d.hold.entity} kept`;
        await audit(store, session.user.name, `deletes ${decision}`, d.hold.partner, `hold ${id}: ${summary}`);
        return after(reply, '/console/partners', `Hold ${id} ${decision === 'apply' ? 'applied' : 'discarded'}: ${summary}`);
      } catch (error) {
        if (error instanceof HoldError) return send(reply, layout('Deletes', session, html`<p class="error">${error.message}</p>`), 409);
        throw error;
      }
    });
  }

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
