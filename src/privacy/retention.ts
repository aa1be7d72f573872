/**
 * Retention with an end (docs/personal-data.md, "Retention"): what the store keeps only for a time,
 * purged by `partner-sync purge` and the worker's daily purge, in small transactions under a time
 * budget so that a purge never holds the load path for long.
 *
 * - delivered postback events, by their delivery time (their data may carry personal fields);
 * - resolved rejects (replayed, superseded, loaded, discarded), by their resolution time; open ones
 *   stay until they are resolved;
 * - run history, by the run's end, except each stream's latest run and its latest completed run
 *   (what `status` and the first-sync rule read).
 *
 * Never purged: the ledger and everything `commissions recompute` reads (records, FX rates, plans'
 * state), the report facts, fraud flags and decisions, and the erasures' audit.
 */
import { readFile } from 'node:fs/promises';
import type { Knex } from 'knex';
import { parse as parseYaml } from 'yaml';
import { addDays } from '../kernel/dates.js';
import type { Store } from '../store/store.js';

export interface Retention {
  /** Days a delivered postback event is kept after its delivery. */
  delivered_postback_events: number;
  /** Days a resolved reject is kept after its resolution. */
  resolved_rejects: number;
  /** Days a run is kept after its end (each stream's latest runs are kept). */
  run_history: number;
}

export const DEFAULT_RETENTION: Retention = { delivered_postback_events: 30, resolved_rejects: 90, run_history: 400 };

export type PurgeKind = keyof Retention;

export interface PurgeOptions {
  dryRun?: boolean;
  /** Rows a transaction deletes at most (default 1000). */
  batch?: number;
  /** Time budget (default 60 s): the purge stops after the batch that passes it, and says so. */
  budgetMs?: number;
}

export interface PurgeResult {
  kind: PurgeKind;
  /** Rows older than the retention (with dryRun: what would go). */
  due: number;
  purged: number;
  /** The cut-off: rows before it are due. */
  before: string;
}

export interface Purge {
  results: PurgeResult[];
  /** True when the budget ran out with rows still due (the next purge goes on). */
  more: boolean;
  durationMs: number;
}

interface Kind {
  table: string;
  key: string;
  due(q: Knex.QueryBuilder, before: string, knex: Knex): Knex.QueryBuilder;
}

const KINDS: Record<PurgeKind, Kind> = {
  delivered_postback_events: { table: 'postback_events', key: 'seq', due: (q, before) => q.where('state', 'delivered').where('delivered_at', '<', before) },
  resolved_rejects: { table: 'rejects', key: 'id', due: (q, before) => q.whereNot('status', 'open').whereNotNull('resolved_at').where('resolved_at', '<', before) },
  run_history: {
    table: 'runs',
    key: 'id',
    due: (q, before, knex) => q.whereNotNull('finished_at').where('finished_at', '<', before)
      .whereNotIn('id', knex('runs as l').select('l.id').whereRaw('l.started_at = (SELECT max(m.started_at) FROM runs m WHERE m.partner_id = l.partner_id AND m.stream = l.stream)'))
      .whereNotIn('id', knex('runs as c').select('c.id').whereIn('c.status', ['succeeded', 'partial'])
        .whereRaw("c.started_at = (SELECT max(m.started_at) FROM runs m WHERE m.partner_id = c.partner_id AND m.stream = c.stream AND m.kind = c.kind AND m.status IN ('succeeded', 'partial'))")),
  },
};

export async function purge(store: Store, retention: Retention = DEFAULT_RETENTION, options: PurgeOptions = {}): Promise<Purge> {
  const started = performance.now();
  const batch = options.batch ?? 1000;
  const budget = options.budgetMs ?? 60_000;
  const today = store.now().slice(0, 10);
  const results: PurgeResult[] = [];
  let more = false;
  for (const kind of Object.keys(KINDS) as PurgeKind[]) {
    const k = KINDS[kind];
    const before = `${addDays(today, -retention[kind])}T00:00:00.000Z`;
    const dueRows = () => k.due(store.knex(k.table), before, store.knex);
    const [count] = (await dueRows().count({ n: '*' })) as { n: number | string }[];
    const result: PurgeResult = { kind, due: Number(count?.n ?? 0), purged: 0, before };
    results.push(result);
    if (options.dryRun) continue;
    while (result.purged < result.due) {
      if (performance.now() - started > budget) {
        more = true;
        break;
      }
      const n = await store.transaction(async (trx) => {
        const ids = (await k.due(trx(k.table), before, store.knex).orderBy(k.key).limit(batch).pluck(k.key)) as (string | number)[];
        if (ids.length === 0) return 0;
        return trx(k.table).whereIn(k.key, ids).delete();
      });
      if (n === 0) break;
      result.purged += n;
    }
  }
  return { results, more, durationMs: performance.now() - started };
}

/** `config/retention.yaml` (absent: the defaults): each kind's days, a whole number from 1; unknown keys are errors. */
export function parseRetention(data: unknown, file: string): { retention?: Retention; errors: string[] } {
  if (data === undefined || data === null) return { retention: { ...DEFAULT_RETENTION }, errors: [] };
  if (typeof data !== 'object' || Array.isArray(data)) return { errors: [`${file}: must be a mapping of ${Object.keys(DEFAULT_RETENTION).join(', ')} to days`] };
  const retention: Retention = { ...DEFAULT_RETENTION };
  const errors: string[] = [];
  for (const [key, value] of Object.entries(data)) {
    if (!(key in DEFAULT_RETENTION)) errors.push(`${file}: ${key}: unknown key; allowed keys: ${Object.keys(DEFAULT_RETENTION).join(', ')}`);
    else if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) errors.push(`${file}: ${key}: must be a whole number of days from 1, got ${JSON.stringify(value)}`);
    else retention[key as PurgeKind] = value;
  }
  return errors.length > 0 ? { errors } : { retention, errors };
}

/** The retention of a settings file (absent: the defaults); a file that does not parse or holds a wrong key is an error naming it. */
export async function loadRetention(file: string): Promise<{ retention?: Retention; errors: string[] }> {
  let data: unknown;
  try {
    data = parseYaml(await readFile(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { retention: { ...DEFAULT_RETENTION }, errors: [] };
    return { errors: [`${file}: ${(error as Error).message.split('\n')[0]}`] };
  }
  return parseRetention(data, file);
}
