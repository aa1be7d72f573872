/**
 * The web console: server-rendered pages under /console/, a route module that a fastify app
 * registers (`partner-sync serve` serves it on the API's port: src/cli/server.ts composes the two).
 * - Sign in with a console user (partner-sync users add): ./session-routes.ts.
 * - Every request passes the same checks (session, CSRF token on a POST, role): ./request.ts.
 * - Roles: operators run partners and replay or discard rejects (./operations-routes.ts);
 *   managers see commissions and reports, keep postbacks and decide fraud flags
 *   (./money-routes.ts); affiliates see their own figures, players, statements and postbacks,
 *   which managers can open read-only (./affiliate-routes.ts). A page or action of another role
 *   answers 403.
 * - Every action is written to the audit log (who, when, what) shown on the Activity page.
 * Actions call the jobs the CLI calls; the console imports no other face.
 */
import type { FastifyInstance } from 'fastify';
import { affiliateRoutes } from './affiliate-routes.js';
import { assetRoutes } from './assets.js';
import { moneyRoutes } from './money-routes.js';
import { operationsRoutes } from './operations-routes.js';
import { consoleRequests, CONSOLE_ROUTE, type ConsoleDeps } from './request.js';
import { sessionRoutes } from './session-routes.js';

function consoleModule(app: FastifyInstance, deps: ConsoleDeps): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  const requests = consoleRequests(deps.store);

  assetRoutes(app);
  app.get('/', CONSOLE_ROUTE, async (_request, reply) => reply.redirect('/console/partners', 303));
  app.get('/console', CONSOLE_ROUTE, async (_request, reply) => reply.redirect('/console/partners', 303));
  sessionRoutes(app, deps.store, requests);
  operationsRoutes(app, deps, requests);
  moneyRoutes(app, deps, requests);
  affiliateRoutes(app, deps, requests);
}

/** In an encapsulated child: the form parser applies to the console's routes only. */
export async function consoleRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  await app.register(async (child) => consoleModule(child, deps));
}
