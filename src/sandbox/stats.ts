/**
 * What the sandbox saw of its clients: requests per path and status, auth failures, 429s, the
 * faults it injected, and the most requests each token made in any rolling 60 s window. Only
 * partner traffic is counted (the token endpoint and /api/v1), not the /_sandbox/ endpoints.
 */
import { createWindowPeaks } from './rate-limit.js';

export interface SandboxStats {
  /** Partner requests (token endpoint and API). */
  requests: number;
  /** Requests per URL path (without the query). */
  requestsByPath: Record<string, number>;
  /** Responses per HTTP status. */
  responsesByStatus: Record<string, number>;
  /** 401 responses (token endpoint and API). */
  unauthorized: number;
  /** All 429 responses: rateLimited + throttled. */
  tooManyRequests: number;
  /** 429s of the rate limit (rateLimitPerMinute). */
  rateLimited: number;
  /** 429s injected by the throttleEvery fault. */
  throttled: number;
  /** 5xx injected by the errorRate fault. */
  serverErrorsInjected: number;
  /** Truncated page bodies injected by the malformedEvery fault. */
  malformedInjected: number;
  tokensIssued: number;
  /** Per token (named `client#n`): the most API requests in any rolling 60 s window, refused ones included. */
  maxRequestsPerWindowByToken: Record<string, number>;
  /** The largest of maxRequestsPerWindowByToken (0 before any API request). */
  maxRequestsPerWindow: number;
}

export interface StatsCollector {
  request(path: string): void;
  response(status: number): void;
  tokenRequest(label: string, now: number): void;
  rateLimited(): void;
  throttled(): void;
  serverErrorInjected(): void;
  malformedInjected(): void;
  snapshot(tokensIssued: number): SandboxStats;
  /** Starts counting afresh; `tokensIssued` is the token count so far. */
  reset(tokensIssued: number): void;
}

export function createStatsCollector(): StatsCollector {
  const peaks = createWindowPeaks();
  let byPath = new Map<string, number>();
  let byStatus = new Map<string, number>();
  let counts = { requests: 0, rateLimited: 0, throttled: 0, serverErrorsInjected: 0, malformedInjected: 0 };
  let tokensAtReset = 0;
  const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

  return {
    request(path) {
      counts.requests += 1;
      bump(byPath, path);
    },
    response: (status) => bump(byStatus, String(status)),
    tokenRequest: (label, now) => peaks.record(label, now),
    rateLimited: () => void (counts.rateLimited += 1),
    throttled: () => void (counts.throttled += 1),
    serverErrorInjected: () => void (counts.serverErrorsInjected += 1),
    malformedInjected: () => void (counts.malformedInjected += 1),
    snapshot(tokensIssued) {
      const byToken = peaks.peaks();
      return {
        requests: counts.requests,
        requestsByPath: Object.fromEntries(byPath),
        responsesByStatus: Object.fromEntries(byStatus),
        unauthorized: byStatus.get('401') ?? 0,
        tooManyRequests: byStatus.get('429') ?? 0,
        rateLimited: counts.rateLimited,
        throttled: counts.throttled,
        serverErrorsInjected: counts.serverErrorsInjected,
        malformedInjected: counts.malformedInjected,
        tokensIssued: tokensIssued - tokensAtReset,
        maxRequestsPerWindowByToken: byToken,
        maxRequestsPerWindow: Math.max(0, ...Object.values(byToken)),
      };
    },
    reset(tokensIssued) {
      byPath = new Map();
      byStatus = new Map();
      counts = { requests: 0, rateLimited: 0, throttled: 0, serverErrorsInjected: 0, malformedInjected: 0 };
      peaks.reset();
      tokensAtReset = tokensIssued;
    },
  };
}
