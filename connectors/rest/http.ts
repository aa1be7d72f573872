/**
 * The HTTP layer of the REST source: one axios instance per source, HTTPS only (spec §5), no
 * redirects, every status returned to the caller (we classify them), bodies as text (we parse, so
 * a malformed page is our clear error, not axios' silent string). Errors and log lines carry the
 * method, the URL without secret-looking query values, the status and a short body excerpt: never
 * headers, never tokens.
 */
import { decodeUtf8 } from '../../src/kernel/utf8.js';
import axios, { AxiosError, type AxiosInstance } from 'axios';
import type { RestSource } from '../../src/config/definition.js';
import { insecureUrlReason } from '../../src/config/secure-url.js';
import type { Logger, Redact } from '../../src/log.js';
import { SourceError, type SourceStats } from '../source.js';

export const USER_AGENT = 'partner-sync (rest connector)';

/** Longest body excerpt put in an error message. */
export const BODY_EXCERPT_CHARS = 300;

/** A partner page larger than this is refused rather than buffered. */
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

/** Query parameter names whose values are credentials (`?api_key=...`, `?access_token=...`). */
const SECRET_PARAM = /token|secret|key|passw|pwd|auth|signature|^sig$|credential|session/i;

/** Removes every secret the source knows (configured and obtained at run time) from a text, then applies the definitions' redactor. */
export interface Scrubber {
  (text: string): string;
  /** A secret learnt at run time (an access token): scrubbed from then on. */
  add(secret: string): void;
}

export function createScrubber(redact: Redact, secrets: Iterable<string> = []): Scrubber {
  const known = new Set<string>();
  const scrub = ((text: string) => {
    let out = text;
    // Longest first, so a secret that contains another is removed whole.
    for (const secret of [...known].sort((a, b) => b.length - a.length)) out = out.split(secret).join('***');
    return redact(out);
  }) as Scrubber;
  scrub.add = (secret) => {
    // Very short values would shred ordinary text; they are not credentials anyway.
    if (secret.length >= 4) known.add(secret);
  };
  for (const secret of secrets) scrub.add(secret);
  return scrub;
}

export interface HttpRequest {
  method: 'GET' | 'POST';
  /** A path joined to base_url, or an absolute URL when `absolute` is set (the token URL). */
  url: string;
  absolute?: boolean;
  params?: URLSearchParams;
  headers?: Record<string, string>;
  /** A request body, already encoded (the token form). */
  body?: string;
}

export interface HttpResponse {
  status: number;
  statusText: string;
  /** Response headers, lower-case names. */
  headers: Record<string, string | undefined>;
  /** The body decoded as UTF-8; bytes that are not UTF-8 are kept as characters of their own (src/kernel/utf8.ts). */
  body: string;
  /** Offsets in `body` of the characters that stand for bytes that are not UTF-8; absent when none. */
  undecodable?: number[];
  /** `METHOD url` for messages: secret-looking query values removed. */
  what: string;
}

/** The request never got a response: a network error or a timeout. Retried. */
export class TransportError extends SourceError {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'network',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransportError';
  }
}

export interface HttpClient {
  send(request: HttpRequest): Promise<HttpResponse>;
  /** `METHOD url` for messages, the way `send` names a request. */
  describe(request: HttpRequest): string;
  readonly scrub: Scrubber;
}

export interface HttpDeps {
  logger: Logger;
  scrub: Scrubber;
  stats: SourceStats;
  /** For the request duration in the log only. */
  now?: () => number;
}

/** base_url + path, the way stream paths are joined: base_url is a prefix, one slash between. */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/** The URL with the values of secret-looking query parameters replaced by `***`. */
export function safeUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.replace(/\?.*$/, '?…');
  }
  parsed.username = '';
  parsed.password = '';
  for (const name of new Set(parsed.searchParams.keys())) {
    if (SECRET_PARAM.test(name)) parsed.searchParams.set(name, '***');
  }
  return parsed.toString().replace(/%2A%2A%2A/g, '***');
}

/** At most BODY_EXCERPT_CHARS of a body, whitespace collapsed, scrubbed. */
export function bodyExcerpt(body: string, scrub: Scrubber): string {
  const flat = scrub(body.replace(/\s+/g, ' ').trim());
  return flat.length > BODY_EXCERPT_CHARS ? `${flat.slice(0, BODY_EXCERPT_CHARS - 1)}…` : flat;
}

/** `GET url: HTTP 503 Service Unavailable: <body excerpt>`: the scrubbed description of a failed response. */
export function describeResponse(response: HttpResponse, scrub: Scrubber): string {
  const excerpt = bodyExcerpt(response.body, scrub);
  const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  return scrub(`${response.what}: ${status}${excerpt ? `: ${excerpt}` : ' (empty body)'}`);
}

export function createHttpClient(source: RestSource, deps: HttpDeps): HttpClient {
  const reason = insecureUrlReason(source.base_url);
  if (reason) throw new SourceError(`base_url ${reason}`);
  const { scrub, logger, stats } = deps;
  const now = deps.now ?? (() => performance.now());

  const instance: AxiosInstance = axios.create({
    baseURL: source.base_url,
    // Stream paths always go to base_url; only the token URL may be absolute (checked below).
    allowAbsoluteUrls: false,
    timeout: source.timeout_ms,
    validateStatus: () => true,
    // Bytes, decoded here: axios' text decoding puts U+FFFD for bytes that are not UTF-8, silently.
    responseType: 'arraybuffer',
    transformResponse: [(data: unknown) => data],
    // A redirect could move the Authorization header to another host or to plain http.
    maxRedirects: 0,
    maxContentLength: MAX_RESPONSE_BYTES,
    headers: { 'User-Agent': USER_AGENT, Accept: 'application/json' },
  });

  function fullUrl(request: HttpRequest): string {
    const base = request.absolute ? request.url : joinUrl(source.base_url, request.url);
    const query = request.params?.toString();
    return query ? `${base}${base.includes('?') ? '&' : '?'}${query}` : base;
  }

  function describe(request: HttpRequest): string {
    return scrub(`${request.method} ${safeUrl(fullUrl(request))}`);
  }

  async function send(request: HttpRequest): Promise<HttpResponse> {
    const what = describe(request);
    if (request.absolute) {
      const insecure = insecureUrlReason(request.url);
      if (insecure) throw new SourceError(`${what}: URL ${insecure}`);
    }
    const started = now();
    stats.requests += 1;
    // axios' `timeout` is a socket idle timer; this bounds the whole exchange, a body that trickles in included.
    const signal = AbortSignal.timeout(source.timeout_ms);
    try {
      const response = await instance.request<Buffer | string>({
        method: request.method,
        url: request.url,
        allowAbsoluteUrls: request.absolute === true,
        params: request.params,
        headers: request.headers,
        data: request.body,
        signal,
      });
      const ms = Math.round(now() - started);
      logger.debug(`${what} -> ${response.status} (${ms} ms)`, { method: request.method, url: what.slice(request.method.length + 1), status: response.status, ms });
      const headers: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(response.headers as Record<string, unknown>)) {
        headers[name.toLowerCase()] = Array.isArray(value) ? value.map(String).join(', ') : value == null ? undefined : String(value);
      }
      const data = response.data;
      const decoded = Buffer.isBuffer(data) ? decodeUtf8(data) : { text: typeof data === 'string' ? data : data == null ? '' : String(data) };
      return {
        status: response.status,
        statusText: response.statusText ?? '',
        headers,
        body: decoded.text,
        ...(decoded.undecodable ? { undecodable: decoded.undecodable } : {}),
        what,
      };
    } catch (error) {
      const ms = Math.round(now() - started);
      throw transportError(error, what, ms, signal.aborted, source.timeout_ms, scrub, logger);
    }
  }

  return { send, describe, scrub };
}

function transportError(error: unknown, what: string, ms: number, timedOut: boolean, timeoutMs: number, scrub: Scrubber, logger: Logger): TransportError {
  const code = error instanceof AxiosError ? error.code : undefined;
  const isTimeout = timedOut || code === 'ECONNABORTED' || code === 'ETIMEDOUT';
  // Never the axios error itself as the cause: its config holds the request headers (Authorization).
  const detail = scrub(error instanceof Error ? error.message : String(error));
  const cause = Object.assign(new Error(detail), { code });
  const message = isTimeout ? `${what}: no response within ${timeoutMs} ms (timeout)` : `${what}: request failed: ${detail}${code && !detail.includes(code) ? ` (${code})` : ''}`;
  logger.debug(`${what} -> ${isTimeout ? 'timeout' : 'network error'} (${ms} ms)`, { status: isTimeout ? 'timeout' : 'network_error', ms });
  return new TransportError(scrub(message), isTimeout ? 'timeout' : 'network', { cause });
}
