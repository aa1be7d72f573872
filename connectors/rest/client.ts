/**
 * One API call of the REST source: authorized, rate-limited, retried, its JSON body parsed.
 * Order within an attempt: credentials first (a token request may take a while), then the rate
 * limiter's slot, then the request, so the limiter's log holds send times, not queueing times.
 */
import type { Logger } from '../../src/log.js';
import { parsePartnerJson } from '../../src/kernel/strict-json.js';
import { SourceError } from '../source.js';
import type { Authorizer, Credentials } from './auth.js';
import { bodyExcerpt, describeResponse, type HttpClient, type HttpResponse } from './http.js';
import type { RateLimiter } from './rate-limiter.js';
import { checkStatus, RetryableFailure } from './retry.js';

export interface ApiResponse {
  body: unknown;
  /** `GET url` (scrubbed), for messages about this page. */
  what: string;
}

/** Checks a parsed 2xx body inside the attempt: throwing a RetryableFailure repeats the request like a malformed body. */
export type AcceptBody = (body: unknown, what: string) => void;

export interface ApiClient {
  getJson(path: string, params: URLSearchParams, accept?: AcceptBody): Promise<ApiResponse>;
}

export interface ApiClientDeps {
  http: HttpClient;
  auth: Authorizer;
  limiter: RateLimiter;
  retry: <T>(attempt: () => Promise<T>) => Promise<T>;
  clock: () => Date;
  logger: Logger;
}

export function createApiClient(deps: ApiClientDeps): ApiClient {
  const { http, auth, limiter, clock, logger } = deps;

  async function send(path: string, params: URLSearchParams, credentials: Credentials): Promise<HttpResponse> {
    await limiter.acquire();
    return http.send({ method: 'GET', url: path, params, headers: credentials.headers });
  }

  return {
    async getJson(path, params, accept) {
      // Once per call, across its retries: a token the partner refuses twice is not a token problem.
      let renewed = false;
      return deps.retry(async () => {
        const credentials = await auth.credentials();
        let response = await send(path, params, credentials);
        if (response.status === 401) {
          let note = `${auth.description} refused`;
          if (!renewed) {
            renewed = true;
            const fresh = await auth.renew(credentials);
            if (fresh) {
              logger.info(`${response.what}: HTTP 401, renewing the token once`);
              response = await send(path, params, fresh);
              note = `${auth.description} refused again after renewing it`;
            }
          } else {
            note = `${auth.description} refused again (already renewed once)`;
          }
          if (response.status === 401) throw new SourceError(`${describeResponse(response, http.scrub)}: authentication failed (${note})`, { status: 401 });
        }
        checkStatus(response, http.scrub, clock);
        const body = parseJson(response, http);
        accept?.(body, response.what);
        return { body, what: response.what };
      });
    },
  };
}

/**
 * A 2xx body that is not JSON is a partner fault (a proxy's HTML page, a truncated body): retried,
 * then reported. The strict parser's issues (a field given twice, a number a double cannot keep,
 * bytes not UTF-8) travel with the records (src/kernel/strict-json.ts): the mapping rejects a
 * record whose mapped fields have one, and the walk refuses an envelope that has one (./paginate.ts).
 */
function parseJson(response: HttpResponse, http: HttpClient): unknown {
  try {
    return parsePartnerJson(response.body, { undecodable: response.undecodable }).value;
  } catch (error) {
    const reason = http.scrub(error instanceof Error ? error.message : String(error));
    const excerpt = bodyExcerpt(response.body, http.scrub) || '(empty body)';
    throw new RetryableFailure(new SourceError(`${response.what}: HTTP ${response.status} but the body is not valid JSON (${reason.slice(0, 120)}): ${excerpt}`, { status: response.status }));
  }
}
