/**
 * The contract between the HTTP API's parts (server, authentication, route modules): who is
 * calling, and what every route module gets.
 */
import type { FastifyInstance } from 'fastify';
import type { Scope } from '../access/api-clients.js';
import type { PartnerDefinition } from '../config/definition.js';
import type { InvalidDefinition } from '../config/load-definitions.js';
import type { Logger, Redact } from '../log.js';
import type { Loader } from '../pipeline/load.js';
import type { Store } from '../store/store.js';
import type { Variant } from '../types.js';

/** The caller, from a verified, unrevoked, unexpired bearer token. */
export interface Principal {
  clientId: string;
  partner: string;
  variant: Variant;
  scopes: readonly Scope[];
  /** Set for a credential that may see only one affiliate's report rows. */
  affiliate?: string;
  /** The access token's id (its `jti`): rate limits count per token. */
  tokenId?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication pre-handler on routes that require a token. */
    principal?: Principal;
  }
}

/** What every route module is given. */
export interface ApiDeps {
  store: Store;
  /** The one Loader of the process (src/pipeline/load.ts with jobs/load-hooks.ts). */
  loader: Loader;
  logger: Logger;
  /**
   * The connector definitions and settings folder of the process (the web console's runs and
   * replays); `invalid`: the definition files that cannot load (the Partners page says why).
   */
  config?: { dir: string; definitions: readonly PartnerDefinition[]; invalid?: readonly InvalidDefinition[]; redact: Redact };
}

/**
 * A route that is not part of the partner API (a web console's HTML pages and login forms, for
 * example) says so in its options: `app.get('/console', { config: { openapi: false } }, handler)`.
 * Such a route is left out of /openapi.json and /docs, and the check that every served route is
 * documented skips it. Every other route of a module must be documented in src/api/openapi.ts.
 */
export interface RouteDocConfig {
  /** false: not part of the partner API, never documented. */
  openapi?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    openapi?: boolean;
  }
}

/** Whether a declared route (fastify's route options, e.g. from an onRoute hook) belongs to the partner API document. */
export function isDocumentedRoute(route: { config?: unknown }): boolean {
  return (route.config as RouteDocConfig | undefined)?.openapi !== false;
}

/** A module of routes: registers them on the app. */
export type RouteModule = (app: FastifyInstance, deps: ApiDeps) => Promise<void> | void;
