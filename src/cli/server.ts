/**
 * The one HTTP app of `partner-sync serve`: the API's server (src/api/server.ts) with the API's
 * route modules, then the web console's (src/console/routes.ts), on one port. Composed here, where
 * the process starts, because a face imports no other face: the API does not know the console,
 * and the console is a route module any fastify app can register.
 */
import type { FastifyInstance } from 'fastify';
import { API_ROUTE_MODULES } from '../api/routes/index.js';
import { buildApi as buildApiServer, type ApiOptions } from '../api/server.js';
import type { ApiDeps, RouteModule } from '../api/types.js';
import { consoleRoutes } from '../console/routes.js';

/** Every route module of `serve`, in registration order. */
export const ROUTE_MODULES: readonly RouteModule[] = [...API_ROUTE_MODULES, consoleRoutes];

/** The app `serve` listens with: the API's server with ROUTE_MODULES (or `options.routes`, when given). */
export function buildApi(deps: ApiDeps, options: ApiOptions = {}): Promise<FastifyInstance> {
  return buildApiServer(deps, { ...options, routes: options.routes ?? ROUTE_MODULES });
}
