/**
 * The contract between the HTTP API's parts (server, authentication, route modules): who is
 * calling, and what every route module gets.
 */
import type { FastifyInstance } from 'fastify';
import type { PartnerDefinition } from '../config/definition.js';
import type { Logger, Redact } from '../log.js';
import type { Loader } from '../pipeline/load.js';
import type { Store } from '../store/store.js';
import type { Variant } from '../types.js';

export type Scope = 'read' | 'write';

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
  /** The connector definitions and settings folder of the process (the web console's runs and replays). */
  config?: { dir: string; definitions: readonly PartnerDefinition[]; redact: Redact };
}

/** A module of routes: registers them on the app. */
export type RouteModule = (app: FastifyInstance, deps: ApiDeps) => Promise<void> | void;
