/**
 * How `discover` and `init` are told where a partner's data is: a REST base URL with its auth and
 * the three list paths, or a database replica or warehouse by a URL held in an environment
 * variable. Secrets are read from the environment only; the options name the variables, so the
 * draft definition refers to them as `${VAR}`.
 */
import type { RestAuth, RestSource } from '../config/definition.js';
import { DEFINITION_DEFAULTS } from '../config/definition-defaults.js';
import { createRedactor } from '../config/redact.js';
import type { Redact } from '../log.js';
import type { Entity } from '../types.js';

export type AuthKind = 'oauth2' | 'bearer' | 'api_key';

export interface RestOptions {
  kind: 'rest';
  baseUrl: string;
  auth: AuthKind;
  /** oauth2: the client id (not a secret). */
  clientId?: string;
  /** api_key: the header name. */
  apiKeyHeader?: string;
  /** Environment variable holding the secret (client secret, bearer token or API key). */
  authEnv: string;
  tokenUrl?: string;
  /** Per entity: the list path. */
  paths: Partial<Record<Entity, string>>;
  /** Query parameter of an activity day (default `date`). */
  dateParam: string;
}

export interface SqlOptions {
  kind: 'db' | 'warehouse';
  client: 'mysql' | 'postgres' | 'sqlite';
  /** Environment variable holding the connection URL. */
  urlEnv: string;
  /** Schema (PostgreSQL) or database (MySQL) to list; default the connection's own. */
  schema?: string;
  /** Per entity: a table or view chosen by the user (else guessed from names). */
  tables: Partial<Record<Entity, string>>;
}

export type SourceOptions = RestOptions | SqlOptions;

export class SourceOptionsError extends Error {}

/** The environment variable's value, or an error naming it. */
export function secretFromEnv(name: string, env: NodeJS.ProcessEnv): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new SourceOptionsError(`${JSON.stringify(name)} is not an environment variable name`);
  const value = env[name];
  if (value === undefined || value === '') throw new SourceOptionsError(`environment variable ${name} is not set (secrets are read from the environment only)`);
  return value;
}

/** The REST source (defaults of a definition) with the secret read from the environment. */
export function restSource(options: RestOptions, env: NodeJS.ProcessEnv): { source: RestSource; redact: Redact } {
  const secret = secretFromEnv(options.authEnv, env);
  let auth: RestAuth;
  switch (options.auth) {
    case 'oauth2':
      if (!options.clientId) throw new SourceOptionsError('--client-id is required with --auth oauth2');
      auth = { type: 'oauth2_client_credentials', token_url: options.tokenUrl ?? DEFINITION_DEFAULTS.token_url, client_id: options.clientId, client_secret: secret };
      break;
    case 'bearer':
      auth = { type: 'bearer', token: secret };
      break;
    case 'api_key':
      auth = { type: 'api_key', header: options.apiKeyHeader ?? 'X-API-Key', key: secret };
      break;
  }
  return {
    source: {
      type: 'rest',
      base_url: options.baseUrl,
      auth,
      requests_per_minute: 1000,
      timeout_ms: 30_000,
      retries: { max: 3, min_delay_ms: 500, max_delay_ms: 10_000, max_retry_after_ms: 60_000 },
      run_budget_ms: 300_000,
    },
    redact: createRedactor([secret]),
  };
}
