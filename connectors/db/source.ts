/**
 * The DB replica source kind: a partner's read replica (MySQL/MariaDB or PostgreSQL; SQLite in
 * the demo) as a Source. Per stream a table or a query, read with the guarantees of the pull sync:
 *
 * - Cursor streams: the window in keyset pages on (cursor column, tie-breaker), all pages of a
 *   read in one read-only consistent snapshot (keyset.ts, ../sql/snapshot.ts), continuing after a
 *   stored keyset position when asked. The window's upper bound is lowered to the source's clock
 *   minus `safety_lag_ms` (`bound`). An open window (an incremental run) is still read past it, so
 *   a row stamped ahead of the clock loads now; the sync job never moves the stream's start past
 *   the bound, so a row stamped before it but committed after the snapshot was taken is read by
 *   the next run, and the state is never above what the source had committed.
 * - Daily streams: whole days by a date column of a table already aggregated per day, or from a
 *   query that aggregates (`GROUP BY day, customer, game`) with `:date_from` / `:date_to`;
 *   streamed with bounded memory in one snapshot (../sql/days.ts); the sync job replaces each day.
 *
 * Identifiers from the definition are validated and quoted before any statement is built; values
 * are always bound. Sessions are read-only.
 */
import type { DbSource, DbStream, StreamDefinition } from '../../src/config/definition.js';
import type { Variant } from '../../src/types.js';
import { PositionRefused, SourceError, type CursorWindow, type PositionedPage, type PullWindow, type Source } from '../source.js';
import { AHEAD_TOLERANCE_S, MAX_OFFSET_S, sourceNow, zoneEvidence } from '../sql/clock.js';
import { addMicros, compareInstants, instantToIso, instantToSourceText, parseInstant, type Instant } from '../sql/datetime.js';
import { checkDaysWindow, readDays, relationDays, wrappedDays, type DaySource } from '../sql/days.js';
import type { SqlDialect } from '../sql/dialects.js';
import { sqlSourceBase, type SqlSourceBaseDeps } from '../sql/source-base.js';
import { columnIdentifier, relationIdentifier, type Identifier } from '../sql/identifiers.js';
import { codeMapProblems, columnProblems, mappingNeeds, relationExists, resultColumns, type ColumnNeed } from '../sql/inspect.js';
import { rowConverter } from '../sql/rows.js';
import { inSnapshot } from '../sql/snapshot.js';
import type { ResultColumn } from '../sql/column-types.js';
import type { SqlSession } from '../sql/session.js';
import {
  checkQueryPage, duplicateKeyset, duplicateMessage, duplicateStatement, keysetStatement, keysetWindow, lastPosition, queryKeyset, SELF_PAGING_PARAMS,
  REACHABLE_FROM, tableKeyset, unreachableMessage, unreachableStatement, type KeysetPosition, type KeysetSource,
} from './keyset.js';

export interface DbSourceDeps extends SqlSourceBaseDeps {
  /** The partner's variant: `inspect` then checks column types against spec fields and required passthrough fields. */
  variant?: Variant;
}

/** A stream's definition checked before any SQL: identifiers valid, its query's parameters known. */
interface StreamPlan {
  /** `streams.<entity>`, for messages. */
  path: string;
  what: string;
  relation?: Identifier;
  query?: string;
  cursor?: Identifier;
  tiebreak?: Identifier;
  date?: Identifier;
  /** Cursor streams: how pages are read. */
  keyset?: KeysetSource;
  /** Daily streams: how days are read. */
  days?: DaySource;
}

/**
 * Rows per page of a days read at most (the spec's bulk size): a day loads in one transaction
 * whatever the page size, and small pages keep what is in flight (read, validated, being written)
 * small enough to die young in the garbage collector instead of piling up.
 */
export const DAY_PAGE_MAX = 1000;

const CURSOR_PARAMS = ['from', 'to', ...SELF_PAGING_PARAMS] as const;

/** `check` tests the tie-breaker's uniqueness over this many of the newest rows (a bounded read). */
export const DUPLICATE_PROBE = 100_000;
const DAILY_PARAMS = ['date_from', 'date_to'] as const;

// String literals, quoted identifiers and comments: knex replaces `:name` even there.
const QUOTED_OR_COMMENT = /'(?:[^']|'')*'|"(?:[^"]|"")*"|`(?:[^`]|``)*`|--[^\n]*|\/\*[\s\S]*?\*\//g;
const NAMED = /(?<!:):([A-Za-z_][A-Za-z0-9_]*)/g;

/** Named parameters of a query (`:from`; not `::date` casts, nor inside quotes or comments). */
export function namedParams(sql: string): Set<string> {
  return new Set([...sql.replace(QUOTED_OR_COMMENT, ' ').matchAll(NAMED)].map((m) => m[1] as string));
}

/** A stream query: one SELECT, trailing semicolons dropped, no positional placeholders, only known parameters. */
export function checkStreamQuery(query: string, allowed: readonly string[], field: string): { sql: string; params: Set<string> } {
  const sql = query.trim().replace(/;\s*$/, '').trim();
  if (sql === '') throw new SourceError(`${field}: the query is empty`);
  if (!/^(select|with)\b/i.test(sql)) throw new SourceError(`${field}: a stream query must be one SELECT (or WITH ... SELECT)`);
  if (sql.includes('?')) throw new SourceError(`${field}: ? is read as a positional placeholder, even inside quotes: use the named parameters (${allowed.map((p) => ':' + p).join(', ')})`);
  for (const [text] of sql.matchAll(QUOTED_OR_COMMENT)) {
    const inside = [...text.matchAll(NAMED)].map((m) => m[1] as string).find((name) => allowed.includes(name));
    if (inside !== undefined) throw new SourceError(`${field}: :${inside} inside quotes or a comment would still be replaced by its value: write that text differently`);
  }
  const params = namedParams(sql);
  const unknown = [...params].filter((p) => !allowed.includes(p));
  if (unknown.length > 0) throw new SourceError(`${field}: unknown parameter ${unknown.map((p) => ':' + p).join(', ')}; this query may use ${allowed.map((p) => ':' + p).join(', ')}`);
  return { sql, params };
}

function planStream(stream: DbStream, dialect: SqlDialect): StreamPlan {
  const path = `streams.${stream.entity}`;
  const hasTable = stream.table !== undefined && stream.table !== '';
  const hasQuery = stream.query !== undefined && stream.query.trim() !== '';
  if (hasTable === hasQuery) throw new SourceError(`${path}: a db stream needs exactly one of table or query`);
  const plan: StreamPlan = { path, what: `${path} (${hasTable ? `table ${stream.table}` : 'query'})` };
  if (hasTable) plan.relation = relationIdentifier(stream.table, `${path}.table`, dialect);
  const optional = (value: string | undefined, field: string): Identifier | undefined =>
    value === undefined || value === '' ? undefined : columnIdentifier(value, `${path}.${field}`, dialect);

  if (stream.incremental.mode === 'cursor') {
    plan.cursor = columnIdentifier(stream.cursor_column, `${path}.cursor_column`, dialect);
    plan.tiebreak = columnIdentifier(stream.tiebreak_column, `${path}.tiebreak_column`, dialect);
    if (plan.relation) plan.keyset = tableKeyset(plan.relation, plan.cursor, plan.tiebreak);
    else {
      const { sql, params } = checkStreamQuery(stream.query as string, CURSOR_PARAMS, `${path}.query`);
      const paging = SELF_PAGING_PARAMS.filter((p) => params.has(p));
      if (paging.length > 0 && paging.length < SELF_PAGING_PARAMS.length) {
        throw new SourceError(`${path}.query: uses ${paging.map((p) => ':' + p).join(', ')} but not ${SELF_PAGING_PARAMS.filter((p) => !params.has(p)).map((p) => ':' + p).join(', ')}: a query pages itself with all of :cursor, :id and :limit, or with none of them and the source pages it`);
      }
      plan.query = sql;
      plan.keyset = queryKeyset(sql, plan.cursor, plan.tiebreak, paging.length > 0);
    }
    return plan;
  }

  plan.date = optional(stream.date_column, 'date_column');
  if (plan.relation) {
    if (plan.date === undefined) throw new SourceError(`${path}.date_column: a daily stream of a table needs the column holding each row's UTC day`);
    plan.days = relationDays(plan.relation, plan.date);
    return plan;
  }
  const { sql, params } = checkStreamQuery(stream.query as string, DAILY_PARAMS, `${path}.query`);
  plan.query = sql;
  const used = DAILY_PARAMS.filter((p) => params.has(p));
  if (used.length === DAILY_PARAMS.length) plan.days = { query: sql };
  else if (used.length === 0 && plan.date !== undefined) plan.days = wrappedDays(sql, plan.date);
  else throw new SourceError(`${path}.query: must select the days read with :date_from and :date_to (both included), or use neither and name date_column`);
  return plan;
}

const cursorAccepts = (dialect: SqlDialect) => (column: ResultColumn): string | undefined =>
  column.type === 'timestamp' || column.type === 'timestamptz' || column.type === 'untyped' || (dialect.client === 'sqlite' && column.type === 'string')
    ? undefined
    : `the cursor column must be a date-time (DATETIME(6), TIMESTAMP, timestamptz)`;

const dateAccepts = (column: ResultColumn): string | undefined =>
  column.type === 'date' || column.type === 'string' || column.type === 'untyped'
    ? undefined
    : `the day column must be a DATE: a date-time would miss the last day's times in BETWEEN days; cast it in a query`;

/** The read end of an open window: far enough that no real stamp lies beyond it, near enough for every dialect's date-time type. */
const OPEN_END = '9999-12-30T00:00:00Z';

async function* recordsOf(pages: AsyncIterable<PositionedPage>): AsyncGenerator<unknown[]> {
  for await (const page of pages) yield page.records;
}

/** A stored keyset position: [raw cursor value, tie-breaker], as `cursorPages` wrote it. */
function parseKeysetPosition(text: string, what: string): KeysetPosition {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const scalar = (v: unknown) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
  if (!Array.isArray(value) || value.length !== 2 || !scalar(value[0]) || !scalar(value[1])) {
    throw new PositionRefused(`${what}: the stored read position ${JSON.stringify(text.slice(0, 80))} is not a keyset position [cursor, tie-breaker]`);
  }
  return { cursor: value[0], id: value[1] };
}

export function createDbSource(source: DbSource, deps: DbSourceDeps): Source {
  const base = sqlSourceBase(source, deps, 'database', (definition, dialect) => planStream(definition as DbStream, dialect));
  const { dialect, timezone, stats, budget, connection, planFor } = base;
  if (!Number.isInteger(source.page_size) || source.page_size < 1) throw new SourceError(`source.page_size: ${source.page_size} is not a positive integer`);
  if (!Number.isFinite(source.safety_lag_ms) || source.safety_lag_ms < 0) throw new SourceError(`source.safety_lag_ms: ${source.safety_lag_ms} is not a duration in milliseconds`);

  /**
   * The zone the cursor column's text is in, from its type in a read of no rows: UTC for an
   * instant (MySQL TIMESTAMP, timestamptz: the session is in UTC), else the source's zone.
   */
  const cursorZones = new WeakMap<StreamPlan, string>();
  async function cursorZone(session: SqlSession, plan: StreamPlan, keyset: KeysetSource, what: string): Promise<string> {
    let zone = cursorZones.get(plan);
    if (zone === undefined) {
      const probe = keysetWindow('2000-01-01T00:00:00Z', '2000-01-01T00:00:00Z', 'UTC', what);
      const { sql, bindings } = keysetStatement(keyset, dialect, probe, 1, 'UTC', undefined);
      const columns = await resultColumns(session, sql, bindings, `${what}: reading the cursor column's type`);
      zone = columns.find((c) => c.name === keyset.cursorKey)?.type === 'timestamptz' ? 'UTC' : timezone;
      cursorZones.set(plan, zone);
    }
    return zone;
  }

  async function* cursorPages(plan: StreamPlan, keyset: KeysetSource, window: CursorWindow, resumeAt?: string): AsyncGenerator<PositionedPage> {
    const what = plan.what;
    // The instants first (a window that is not one fails here, an empty one reads nothing); their text comes with the cursor's zone.
    const asked = keysetWindow(window.from, window.open ? OPEN_END : window.to, 'UTC', what);
    if (compareInstants(asked.from, asked.to) >= 0) return;
    const pageSize = source.page_size;
    const resumed = resumeAt === undefined ? undefined : parseKeysetPosition(resumeAt, what);
    let newest: { at: Instant; zone: string } | undefined;
    yield* inSnapshot(connection(), what, async function* (session) {
      const zone = await cursorZone(session, plan, keyset, what);
      // An open window reads every row from `from` on: a row stamped in the future loads now, while
      // the stream's start stays capped by `to` (the source clock minus the safety lag, `bound`).
      const bounds = keysetWindow(window.from, window.open ? OPEN_END : window.to, zone, what);
      const unreachable = unreachableStatement(keyset);
      if (unreachable !== undefined && resumed === undefined) {
        const { rows } = await session.query(unreachable.sql, unreachable.bindings, `${what}: looking for rows no cursor window reaches`);
        const message = unreachableMessage(rows, keyset, what);
        if (message !== undefined) throw new SourceError(message);
      }
      let after: KeysetPosition | undefined = resumed;
      for (let page = 1; ; page += 1) {
        budget(what);
        const { sql, bindings } = keysetStatement(keyset, dialect, bounds, pageSize, zone, after);
        const result = await session.query(sql, bindings, `${what}, page ${page}`);
        duplicateKeyset(result.rows, keyset, `${what}, page ${page}`);
        if (keyset.kind === 'self-paged') checkQueryPage(result.rows, keyset, bounds, pageSize + 1, zone, after, `${what}, page ${page}`);
        if (result.rows.length === 0) return;
        // The row past the page was read only to compare with the page's last: the next page starts with it.
        const rows = result.rows.slice(0, pageSize);
        const next = lastPosition(rows, keyset, `${what}, page ${page}`);
        const toRecord = rowConverter(result.columns, timezone);
        // In one snapshot a page without a row past it is the last: nothing can appear behind it.
        const last = result.rows.length <= pageSize;
        const at = last && typeof next.cursor === 'string' ? parseInstant(next.cursor, zone) : undefined;
        if (at !== undefined) newest = { at, zone };
        yield last ? { records: rows.map(toRecord) } : { records: rows.map(toRecord), next: JSON.stringify([next.cursor, next.id]) };
        if (last) return;
        after = next;
      }
    });
    if (newest !== undefined && newest.at.seconds * 1000 > deps.clock().getTime() + AHEAD_TOLERANCE_S * 1000) await warnAhead(plan, newest.at, newest.zone);
  }

  /**
   * What `check` finds in a cursor stream's rows that its reads would fail on or get wrong: rows
   * no window reaches (NULL or zero cursor), a tie-breaker that is not unique over the newest
   * DUPLICATE_PROBE rows, and a newest stamp ahead of the source's clock (a zone other than declared).
   */
  async function keysetProblems(session: SqlSession, plan: StreamPlan, keyset: KeysetSource, what: string): Promise<string[]> {
    const problems: string[] = [];
    const unreachable = unreachableStatement(keyset);
    if (unreachable !== undefined) {
      const { rows } = await session.query(unreachable.sql, unreachable.bindings, `${what}: looking for rows no cursor window reaches`);
      const message = unreachableMessage(rows, keyset, plan.path);
      if (message !== undefined) problems.push(message);
    }
    const duplicates = duplicateStatement(keyset, DUPLICATE_PROBE);
    if (duplicates !== undefined) {
      const { rows } = await session.query(duplicates.sql, duplicates.bindings, `${what}: testing that the tie-breaker is unique`);
      const message = duplicateMessage(rows, keyset, plan.path, DUPLICATE_PROBE);
      if (message !== undefined) problems.push(message);
    }
    if (keyset.kind === 'paged') {
      const zone = await cursorZone(session, plan, keyset, what);
      const now = await sourceNow(session, what);
      // The newest stamp a zone could explain (a bogus one far in the future is not evidence).
      const to = instantToSourceText(addMicros(now, (MAX_OFFSET_S + AHEAD_TOLERANCE_S) * 1_000_000), zone);
      const { rows } = await session.query(`SELECT ${keyset.cursor} AS ps_c FROM ${keyset.from} WHERE ${keyset.cursor} >= :from AND ${keyset.cursor} < :to ORDER BY ${keyset.cursor} DESC LIMIT 1`, { from: REACHABLE_FROM, to }, `${what}: reading the newest ${keyset.cursorKey}`);
      const raw = rows[0]?.ps_c;
      const newest = typeof raw === 'string' ? parseInstant(raw, zone) : undefined;
      const evidence = newest === undefined ? undefined : zoneEvidence(newest, now, zone);
      if (evidence !== undefined) problems.push(`${plan.path}: cursor column ${keyset.cursorKey}: ${evidence}`);
    }
    return problems;
  }

  /** A newest stamp ahead of our clock: compared with the source's, and a warning when it is ahead of that too (a zone other than declared). */
  async function warnAhead(plan: StreamPlan, newest: Instant, zone: string): Promise<void> {
    const session = await connection().acquire(plan.what);
    try {
      const now = await sourceNow(session, plan.what);
      const evidence = zoneEvidence(newest, now, zone);
      if (evidence !== undefined) deps.logger.warn(`${plan.what}: cursor column ${plan.cursor?.name ?? ''}: ${evidence}`);
    } finally {
      await session.release();
    }
  }

  return {
    stats,

    async bound(definition: StreamDefinition, window: PullWindow): Promise<PullWindow> {
      const plan = planFor(definition);
      if (window.kind === 'days') return window;
      const what = plan.what;
      const from = parseInstant(window.from);
      const to = parseInstant(window.to);
      if (from === undefined || to === undefined) throw new SourceError(`${what}: a cursor window needs ISO 8601 date-times with a zone, got ${window.from} .. ${window.to}`);
      const session = await connection().acquire(what);
      let now;
      try {
        now = await sourceNow(session, what);
      } finally {
        await session.release();
      }
      const lagMicros = Math.round(source.safety_lag_ms * 1000);
      let limit = addMicros(now, -lagMicros);
      if (compareInstants(limit, from) < 0) limit = from; // a source clock behind ours: an empty window, not a negative one
      return compareInstants(limit, to) < 0 ? { ...window, to: instantToIso(limit) } : window;
    },

    cursorPages(definition: StreamDefinition, window: CursorWindow, after?: string): AsyncIterable<PositionedPage> {
      const plan = planFor(definition);
      if (plan.keyset === undefined) throw new SourceError(`${plan.what}: a cursor window needs a cursor stream (cursor_column, tiebreak_column)`);
      return cursorPages(plan, plan.keyset, window, after);
    },

    pages(definition: StreamDefinition, window: PullWindow): AsyncIterable<unknown[]> {
      // Checked here, before the iterator runs: a bad definition fails before any connection.
      const plan = planFor(definition);
      if (window.kind === 'cursor') {
        if (plan.keyset === undefined) throw new SourceError(`${plan.what}: a cursor window needs a cursor stream (cursor_column, tiebreak_column)`);
        return recordsOf(cursorPages(plan, plan.keyset, window));
      }
      if (plan.days === undefined) throw new SourceError(`${plan.what}: a days window needs a daily stream (date_column, or a query with :date_from and :date_to)`);
      checkDaysWindow(window, plan.what);
      return readDays(connection(), plan.days, window, { pageSize: Math.min(source.page_size, DAY_PAGE_MAX), timezone, what: plan.what, budget });
    },

    async inspect(definition: StreamDefinition): Promise<string[]> {
      const plan = planFor(definition);
      const stream = definition as DbStream;
      const what = `check ${plan.what}`;
      const needs: ColumnNeed[] = mappingNeeds(stream, deps.variant);
      if (plan.cursor && plan.tiebreak) {
        needs.push({ column: plan.cursor.name, origin: 'cursor_column', required: true, check: cursorAccepts(dialect) });
        needs.push({ column: plan.tiebreak.name, origin: 'tiebreak_column', required: true });
      }
      if (plan.date && !(plan.days && 'query' in plan.days)) needs.push({ column: plan.date.name, origin: 'date_column', required: true, check: dateAccepts });
      const session = await connection().acquire(what);
      try {
        let problems: string[];
        if (plan.relation) {
          if (!(await relationExists(session, plan.relation, what))) return [`${plan.path}.table: table or view ${plan.relation.text} does not exist (or this user cannot read it)`];
          const columns = await resultColumns(session, `SELECT * FROM ${plan.relation.sql}`, {}, what);
          problems = columnProblems(columns, needs, `${plan.path}.table ${plan.relation.text}`);
          if (problems.length === 0) problems = await codeMapProblems(session, stream, plan.relation, `${plan.path}.table ${plan.relation.text}`, what);
        } else {
          const bindings = stream.incremental.mode === 'cursor'
            ? { from: '2000-01-01 00:00:00', to: '2000-01-01 00:00:00', cursor: '1999-12-31 23:59:59.999999', id: null, limit: 0 }
            : { date_from: '2000-01-01', date_to: '2000-01-01' };
          let columns: ResultColumn[];
          try {
            columns = await resultColumns(session, plan.query as string, bindings, what);
          } catch (error) {
            return [`${plan.path}.query: ${(error as Error).message}`];
          }
          problems = columnProblems(columns, needs, `${plan.path}.query`);
        }
        if (problems.length > 0 || plan.keyset === undefined) return problems;
        return await keysetProblems(session, plan, plan.keyset, what);
      } finally {
        await session.release();
      }
    },

    close: base.close,
  };
}
