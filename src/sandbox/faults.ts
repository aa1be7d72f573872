/**
 * Fault injection: the ways real partner APIs misbehave, all off by default and changeable while
 * the sandbox runs (assign to `sandbox.faults`, or POST /_sandbox/faults). Counters of the
 * "every Nth" faults run only while their fault is on and restart when it is switched off, and the
 * error sequence comes from the seed, so a test sees the same faults on the same requests.
 */
import { createRandom, deriveSeed } from './prng.js';

export interface SandboxFaults {
  /** Fraction (0..1) of API requests answered 500, 502 or 503. */
  errorRate: number;
  /** Milliseconds added before answering each partner request (token and API). */
  latencyMs: number;
  /** Every Nth API request gets 429 (0: off). */
  throttleEvery: number;
  /** Retry-After of throttled requests, in seconds. */
  throttleRetryAfter: number;
  /** Send Retry-After as an HTTP-date instead of seconds (both the rate limit and throttling). */
  retryAfterAsDate: boolean;
  /** Lifetime of newly issued tokens, overriding the sandbox option (undefined: no override). */
  tokenTtlSeconds: number | undefined;
  /** The last record of each page is repeated as the first of the next page. */
  duplicateAcrossPages: boolean;
  /** Every Nth list page body is truncated JSON (0: off). */
  malformedEvery: number;
  /** next_cursor never changes: always present, and the cursor a request sent comes back as is. */
  repeatCursor: boolean;
  /** An outage that answers 200 with nothing: every list page is empty, its meta.total 0. */
  emptyPages: boolean;
}

export function defaultFaults(): SandboxFaults {
  return {
    errorRate: 0,
    latencyMs: 0,
    throttleEvery: 0,
    throttleRetryAfter: 1,
    retryAfterAsDate: false,
    tokenTtlSeconds: undefined,
    duplicateAcrossPages: false,
    malformedEvery: 0,
    repeatCursor: false,
    emptyPages: false,
  };
}

type FaultKind = 'fraction' | 'count' | 'seconds' | 'flag' | 'optionalSeconds';
const FAULT_KINDS: Record<keyof SandboxFaults, FaultKind> = {
  errorRate: 'fraction',
  latencyMs: 'count',
  throttleEvery: 'count',
  throttleRetryAfter: 'seconds',
  retryAfterAsDate: 'flag',
  tokenTtlSeconds: 'optionalSeconds',
  duplicateAcrossPages: 'flag',
  malformedEvery: 'count',
  repeatCursor: 'flag',
  emptyPages: 'flag',
};
export const FAULT_NAMES = Object.keys(FAULT_KINDS) as (keyof SandboxFaults)[];

/**
 * Checks a patch of faults (from options or JSON) and returns the problems, one message each;
 * when there are none, the patch is merged into `target` (null clears tokenTtlSeconds).
 */
export function mergeFaults(target: SandboxFaults, patch: unknown): string[] {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return ['faults must be a JSON object'];
  const errors: string[] = [];
  const updates: Partial<Record<keyof SandboxFaults, unknown>> = {};
  for (const [name, value] of Object.entries(patch)) {
    const kind = (FAULT_KINDS as Record<string, FaultKind | undefined>)[name];
    if (kind === undefined) {
      errors.push(`unknown fault ${JSON.stringify(name)}; faults are ${FAULT_NAMES.join(', ')}`);
      continue;
    }
    if (value === undefined) continue;
    const problem = checkFault(kind, value);
    if (problem !== undefined) errors.push(`${name}: ${problem}, got ${JSON.stringify(value)}`);
    else updates[name as keyof SandboxFaults] = kind === 'optionalSeconds' && value === null ? undefined : value;
  }
  if (errors.length === 0) Object.assign(target, updates);
  return errors;
}

function checkFault(kind: FaultKind, value: unknown): string | undefined {
  switch (kind) {
    case 'fraction':
      return typeof value === 'number' && value >= 0 && value <= 1 ? undefined : 'must be a number from 0 to 1';
    case 'count':
      return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? undefined : 'must be a whole number ≥ 0';
    case 'seconds':
      return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? undefined : 'must be whole seconds ≥ 0';
    case 'optionalSeconds':
      return value === null || (typeof value === 'number' && Number.isInteger(value) && value >= 1) ? undefined : 'must be whole seconds ≥ 1, or null to clear';
    case 'flag':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
  }
}

export interface FaultInjector {
  /** Whether this API request is one of the throttled ones. */
  throttle(): boolean;
  /** The 5xx status to answer this API request with, if it is one of the failed ones. */
  serverError(): 500 | 502 | 503 | undefined;
  /** Whether this list page's body is to be truncated. */
  malformed(): boolean;
}

const SERVER_ERRORS = [500, 502, 503] as const;

export function createFaultInjector(seed: number, faults: SandboxFaults): FaultInjector {
  const rng = createRandom(deriveSeed(seed, 'faults'));
  let requests = 0;
  let pages = 0;
  return {
    throttle() {
      if (!(faults.throttleEvery > 0)) {
        requests = 0;
        return false;
      }
      requests += 1;
      return requests % faults.throttleEvery === 0;
    },
    serverError() {
      if (!(faults.errorRate > 0)) return undefined;
      const failed = rng.next() < faults.errorRate;
      const status = rng.pick(SERVER_ERRORS);
      return failed ? status : undefined;
    },
    malformed() {
      if (!(faults.malformedEvery > 0)) {
        pages = 0;
        return false;
      }
      pages += 1;
      return pages % faults.malformedEvery === 0;
    },
  };
}
