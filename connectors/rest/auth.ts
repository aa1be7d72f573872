/**
 * Credentials for API requests (spec §5): OAuth 2.0 client credentials, a static bearer token or
 * an API-key header. The OAuth token is a client's state with a lifetime: cached, renewed before
 * it expires (by the injected clock), renewed once when the partner refuses it with a 401, and
 * fetched once for all parallel callers. The client secret and every access token are registered
 * with the scrubber, so no error or log line of ours can carry them.
 */
import type { RestAuth } from '../../src/config/definition.js';
import { insecureUrlReason } from '../../src/config/secure-url.js';
import { SourceError } from '../source.js';
import { bodyExcerpt, joinUrl, type HttpClient, type HttpResponse } from './http.js';
import { checkStatus } from './retry.js';

/** Spec §2.6 / §8: the token lifetime when the response does not say. */
export const DEFAULT_TOKEN_LIFETIME_S = 3600;
/** Renew this long before expiry at most (10% of the lifetime for short-lived tokens). */
export const TOKEN_RENEW_MARGIN_MS = 60_000;

export interface Credentials {
  headers: Record<string, string>;
  /** Which credential this is, so a 401 renews it once however many callers saw it refused. */
  id: string;
}

export interface Authorizer {
  credentials(): Promise<Credentials>;
  /** After a 401 with `refused`: a fresh credential, or undefined when this kind cannot be renewed. */
  renew(refused: Credentials): Promise<Credentials | undefined>;
  /** For messages: `OAuth token from <url>`, `static bearer token`, `API key header X-Api-Key`. */
  readonly description: string;
}

export interface AuthDeps {
  http: HttpClient;
  clock: () => Date;
  /** Runs a token request with the source's retry policy (network errors, timeouts, 5xx, 429). */
  retry: <T>(attempt: () => Promise<T>) => Promise<T>;
}

/** The token URL: absolute as written, or joined to base_url like a stream path. */
export function resolveTokenUrl(baseUrl: string, tokenUrl: string): string {
  return /^[a-z][a-z\d+.-]*:\/\//i.test(tokenUrl) ? tokenUrl : joinUrl(baseUrl, tokenUrl);
}

export function createAuthorizer(auth: RestAuth, baseUrl: string, deps: AuthDeps): Authorizer {
  switch (auth.type) {
    case 'bearer':
      deps.http.scrub.add(auth.token);
      return staticCredentials({ Authorization: `Bearer ${auth.token}` }, 'static bearer token');
    case 'api_key':
      deps.http.scrub.add(auth.key);
      return staticCredentials({ [auth.header]: auth.key }, `API key header ${auth.header}`);
    case 'oauth2_client_credentials':
      return clientCredentials(auth, baseUrl, deps);
  }
}

function staticCredentials(headers: Record<string, string>, description: string): Authorizer {
  const credentials: Credentials = { headers, id: 'static' };
  return {
    description,
    credentials: () => Promise.resolve(credentials),
    renew: () => Promise.resolve(undefined),
  };
}

interface CachedToken {
  token: string;
  /** Epoch ms after which the token is renewed before use. */
  renewAt: number;
}

function clientCredentials(auth: Extract<RestAuth, { type: 'oauth2_client_credentials' }>, baseUrl: string, deps: AuthDeps): Authorizer {
  const { http, clock } = deps;
  http.scrub.add(auth.client_secret);
  const url = resolveTokenUrl(baseUrl, auth.token_url);
  const insecure = insecureUrlReason(url);
  if (insecure) throw new SourceError(`token_url ${insecure}`);
  const what = http.describe({ method: 'POST', url, absolute: true });

  let cached: CachedToken | undefined;
  let inFlight: Promise<CachedToken> | undefined;

  async function requestToken(): Promise<CachedToken> {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: auth.client_id, client_secret: auth.client_secret });
    if (auth.scope) form.set('scope', auth.scope);
    // Lifetime counts from before the request: the partner's clock started no later than that.
    const requestedAt = clock().getTime();
    const response = await deps.retry(async () => {
      const answer = await http.send({
        method: 'POST',
        url,
        absolute: true,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: form.toString(),
      });
      if (answer.status >= 200 && answer.status < 300) return answer;
      if (answer.status === 408 || answer.status === 429 || answer.status >= 500) checkStatus(answer, http.scrub, clock);
      throw tokenError(answer);
    });
    const { token, lifetimeMs } = parseTokenResponse(response);
    http.scrub.add(token);
    const margin = Math.min(TOKEN_RENEW_MARGIN_MS, lifetimeMs / 10);
    return { token, renewAt: requestedAt + lifetimeMs - margin };
  }

  function tokenError(response: HttpResponse): SourceError {
    // RFC 6749 §5.2 error body: {"error": "invalid_client", "error_description": "..."}.
    let code: string | undefined;
    let description: string | undefined;
    try {
      const body = JSON.parse(response.body) as unknown;
      if (isObject(body)) {
        if (typeof body.error === 'string') code = body.error;
        if (typeof body.error_description === 'string') description = body.error_description;
      }
    } catch {
      // Not JSON: the excerpt below says what it was.
    }
    const partner = code !== undefined ? `partner error "${bodyExcerpt(code, http.scrub)}"${description ? `: ${bodyExcerpt(description, http.scrub)}` : ''}` : bodyExcerpt(response.body, http.scrub) || '(empty body)';
    return new SourceError(http.scrub(`${what}: token request refused: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}: ${partner} (check client_id / client_secret / scope)`), {
      status: response.status,
    });
  }

  function parseTokenResponse(response: HttpResponse): { token: string; lifetimeMs: number } {
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      throw new SourceError(http.scrub(`${what}: token response is not JSON: ${bodyExcerpt(response.body, http.scrub) || '(empty body)'}`), { status: response.status });
    }
    if (!isObject(body) || typeof body.access_token !== 'string' || body.access_token === '') {
      throw new SourceError(`${what}: token response has no access_token (fields: ${isObject(body) ? Object.keys(body).join(', ') || 'none' : typeof body})`);
    }
    if (body.token_type !== undefined && String(body.token_type).toLowerCase() !== 'bearer') {
      http.scrub.add(body.access_token);
      throw new SourceError(http.scrub(`${what}: token_type ${JSON.stringify(body.token_type)} is not supported (spec §2.6: Bearer)`));
    }
    const seconds = typeof body.expires_in === 'number' ? body.expires_in : typeof body.expires_in === 'string' ? Number(body.expires_in) : NaN;
    const lifetimeMs = (Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_TOKEN_LIFETIME_S) * 1000;
    return { token: body.access_token, lifetimeMs };
  }

  async function current(): Promise<CachedToken> {
    if (cached && clock().getTime() < cached.renewAt) return cached;
    if (!inFlight) {
      inFlight = requestToken().finally(() => {
        inFlight = undefined;
      });
      cached = await inFlight;
      return cached;
    }
    return inFlight;
  }

  const asCredentials = (token: CachedToken): Credentials => ({ headers: { Authorization: `Bearer ${token.token}` }, id: token.token });

  return {
    description: `OAuth token from ${what.slice('POST '.length)}`,
    async credentials() {
      return asCredentials(await current());
    },
    async renew(refused) {
      // Drop the refused token unless another caller has already replaced it (then that one is used).
      if (cached?.token === refused.id) cached = undefined;
      return asCredentials(await current());
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
