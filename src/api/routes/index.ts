/**
 * Every route module of the API, in registration order. A module receives the app itself (not an
 * encapsulated child): hooks it adds apply to every route; a module that wants its own
 * content-type parsers, hooks or error handler registers a child plugin inside. One line each.
 * The web console is a route module of its own face (src/console/routes.ts): `serve` registers it
 * after these (src/cli/server.ts).
 */
import type { RouteModule } from '../types.js';
import { docsRoutes } from './docs.js';
import { erasureRoutes } from './erasure.js';
import { metricsRoutes } from './metrics.js';
import { recordRoutes } from './records.js';
import { reportRoutes } from './reports.js';

export const API_ROUTE_MODULES: readonly RouteModule[] = [
  metricsRoutes,
  docsRoutes,
  recordRoutes,
  reportRoutes,
  erasureRoutes,
];
