/**
 * Test and admin endpoints under /_sandbox/: no authentication, answered only to loopback
 * clients. They let a test that runs the CLI as a subprocess read statistics, switch faults and
 * change data while the sandbox runs.
 *
 * | Method | Path                                           | Body / query                         | Answer |
 * |--------|------------------------------------------------|--------------------------------------|--------|
 * | GET    | /_sandbox                                      |                                      | { seed, from, to, variants: { v: { customers, transactions, activity_days } } } |
 * | GET    | /_sandbox/stats                                |                                      | SandboxStats |
 * | GET    | /_sandbox/fraud-patterns                       |                                      | { data: injected patterns: variant, rule, instance, affiliate, customers } |
 * | POST   | /_sandbox/stats/reset                          |                                      | SandboxStats (zeroed) |
 * | GET    | /_sandbox/clock                                |                                      | { now, offset_ms }: the clock records are stamped with |
 * | POST   | /_sandbox/clock                                | { offset_ms }                        | { now, offset_ms }; 400 for a bad offset |
 * | GET    | /_sandbox/faults                               |                                      | SandboxFaults |
 * | POST   | /_sandbox/faults                               | partial SandboxFaults (merged)       | SandboxFaults; 400 naming bad keys |
 * | GET    | /_sandbox/{variant}/customers                  |                                      | { data: all customers, sorted } |
 * | GET    | /_sandbox/{variant}/transactions               |                                      | { data: all transactions, sorted } |
 * | GET    | /_sandbox/{variant}/activity                   | ?date=YYYY-MM-DD (optional)          | { data: rows, sorted } |
 * | POST   | /_sandbox/{variant}/customers                  | { record } or { records: [] }, at?   | { data: stored records } (upsert: fields merged, last_modified_date = at or now) |
 * | POST   | /_sandbox/{variant}/transactions               | { record } or { records: [] }, at?   | { data: stored records } (upsert: fields merged, updated_at = at or now) |
 * | POST   | /_sandbox/{variant}/transactions/{id}/status   | { status, at? }                      | { data: stored record }; 404 for an unknown id |
 * | POST   | /_sandbox/{variant}/activity                   | { record } or { records: [] }        | { results: ["added" or "replaced", ...] } (upsert on the aggregation key) |
 * | DELETE | /_sandbox/{variant}/activity                   | ?date&customer_id&game_type or instrument&currency | { deleted: true or false } |
 *
 * `at` is an ISO 8601 date-time kept as given (so microseconds are possible); records are not
 * validated against the spec, so tests can serve invalid ones. Without `at`, a change is stamped
 * by the partner's clock: ours plus `offset_ms` (a partner whose clock runs behind, negative, or
 * ahead, positive; tokens and rate limits keep the real clock).
 */
import type { SpecRecord, Variant } from '../types.js';
import { VARIANTS, isVariant } from '../types.js';
import { activityKeyField, type ActivityKey, type SandboxData } from './data.js';
import { mergeFaults, type SandboxFaults } from './faults.js';
import { errorReply, jsonReply, methodNotAllowed, notFound, type Reply } from './http.js';
import type { SandboxStats } from './stats.js';

export const ADMIN_PREFIX = '/_sandbox';

export interface AdminContext {
  data: SandboxData;
  faults: SandboxFaults;
  stats(): SandboxStats;
  resetStats(): void;
  /** The clock changes are stamped with when they carry no `at`. */
  recordClock?: { now(): Date; offsetMs(): number; setOffsetMs(ms: number): void };
}

export interface AdminRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  /** The parsed JSON body (undefined when there was none). */
  body: unknown;
}

export function handleAdmin(ctx: AdminContext, request: AdminRequest): Reply {
  const { method, path } = request;
  const parts = path === ADMIN_PREFIX ? [] : path.slice(ADMIN_PREFIX.length + 1).split('/');
  const route = parts.join('/');
  try {
    if (route === '') return only(method, 'GET', () => jsonReply(200, overview(ctx.data)));
    if (route === 'stats') return only(method, 'GET', () => jsonReply(200, ctx.stats()));
    if (route === 'fraud-patterns') return only(method, 'GET', () => jsonReply(200, { data: ctx.data.patterns }));
    if (route === 'stats/reset') {
      return only(method, 'POST', () => {
        ctx.resetStats();
        return jsonReply(200, ctx.stats());
      });
    }
    if (route === 'clock' && ctx.recordClock) {
      const recordClock = ctx.recordClock;
      const answer = () => jsonReply(200, { now: recordClock.now().toISOString(), offset_ms: recordClock.offsetMs() });
      if (method === 'GET') return answer();
      if (method !== 'POST') return methodNotAllowed(method, ['GET', 'POST']);
      const offset = isObject(request.body) ? request.body.offset_ms : undefined;
      if (typeof offset !== 'number' || !Number.isSafeInteger(offset)) throw new AdminInputError('the body must be { "offset_ms": <whole milliseconds, negative for a partner clock behind ours> }');
      recordClock.setOffsetMs(offset);
      return answer();
    }
    if (route === 'faults') {
      if (method === 'GET') return jsonReply(200, ctx.faults);
      if (method !== 'POST') return methodNotAllowed(method, ['GET', 'POST']);
      const errors = mergeFaults(ctx.faults, request.body);
      return errors.length > 0 ? errorReply(400, 'invalid_request', errors.join('; ')) : jsonReply(200, ctx.faults);
    }
    const [variant, entity, id, action, ...rest] = parts;
    if (!isVariant(variant) || rest.length > 0) return notFound(path);
    if (entity === 'transactions' && id !== undefined && action === 'status') {
      return only(method, 'POST', () => setStatus(ctx.data, variant, decodePathSegment(id), request.body));
    }
    if (id !== undefined) return notFound(path);
    switch (entity) {
      case 'customers':
        if (method === 'GET') return jsonReply(200, { data: ctx.data.customers(variant) });
        return only(method, 'POST', () => {
          const { records, at } = recordsOf(request.body);
          return jsonReply(200, { data: records.map((r) => ctx.data.upsertCustomer(variant, r, at)) });
        });
      case 'transactions':
        if (method === 'GET') return jsonReply(200, { data: ctx.data.transactions(variant) });
        return only(method, 'POST', () => {
          const { records, at } = recordsOf(request.body);
          return jsonReply(200, { data: records.map((r) => ctx.data.upsertTransaction(variant, r, at)) });
        });
      case 'activity':
        if (method === 'GET') return jsonReply(200, { data: ctx.data.activity(variant, request.query.get('date') ?? undefined) });
        if (method === 'DELETE') return jsonReply(200, { deleted: ctx.data.deleteActivity(variant, activityKeyOf(variant, request.query)) });
        return only(method, 'POST', () => {
          const { records } = recordsOf(request.body);
          return jsonReply(200, { results: records.map((r) => ctx.data.putActivity(variant, r)) });
        });
      default:
        return notFound(path);
    }
  } catch (error) {
    if (error instanceof AdminInputError || (error instanceof Error && error.message.startsWith('sandbox data:'))) {
      return errorReply(400, 'invalid_request', error.message);
    }
    throw error;
  }
}

class AdminInputError extends Error {}

function only(method: string, allowed: string, answer: () => Reply): Reply {
  return method === allowed ? answer() : methodNotAllowed(method, [allowed]);
}

function overview(data: SandboxData): unknown {
  const variants: Record<string, unknown> = {};
  for (const variant of VARIANTS) {
    variants[variant] = {
      customers: data.customers(variant).length,
      transactions: data.transactions(variant).length,
      activity_days: data.activityDates(variant).length,
    };
  }
  return { seed: data.seed, from: data.from, to: data.to, variants };
}

function isObject(value: unknown): value is SpecRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{ record }` or `{ records: [] }`, and an optional `at` date-time. */
function recordsOf(body: unknown): { records: SpecRecord[]; at: string | undefined } {
  if (!isObject(body)) throw new AdminInputError('the body must be a JSON object: { "record": {...} } or { "records": [...] }, with an optional "at"');
  const at = body.at;
  if (at !== undefined && typeof at !== 'string') throw new AdminInputError('"at" must be an ISO 8601 date-time string');
  const records = body.records !== undefined ? body.records : body.record !== undefined ? [body.record] : undefined;
  if (!Array.isArray(records) || !records.every(isObject)) {
    throw new AdminInputError('the body needs "record" (an object) or "records" (an array of objects)');
  }
  return { records, at };
}

function setStatus(data: SandboxData, variant: Variant, transactionId: string, body: unknown): Reply {
  if (!isObject(body) || typeof body.status !== 'string') throw new AdminInputError('the body must be { "status": "...", "at"?: "..." }');
  if (body.at !== undefined && typeof body.at !== 'string') throw new AdminInputError('"at" must be an ISO 8601 date-time string');
  if (data.transaction(variant, transactionId) === undefined) return errorReply(404, 'not_found', `no ${variant} transaction ${JSON.stringify(transactionId)}`);
  return jsonReply(200, { data: data.setTransactionStatus(variant, transactionId, body.status, body.at) });
}

function activityKeyOf(variant: Variant, query: URLSearchParams): ActivityKey {
  const field = activityKeyField(variant);
  const get = (name: string): string => {
    const value = query.get(name);
    if (value === null) throw new AdminInputError(`query parameter ${name} is required (date, customer_id, ${field}, currency)`);
    return value;
  };
  return { date: get('date'), customer_id: get('customer_id'), currency: get('currency'), [field]: get(field) };
}

function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new AdminInputError(`malformed percent-encoding in path segment ${JSON.stringify(segment)}`);
  }
}
