/**
 * Keyset pages of a cursor window [from, to) ordered by (cursor column, tie-breaker column): each
 * page continues strictly after the last row of the one before, by that row's raw cursor value
 * and tie-breaker as the driver read them (the source's own text, at its precision), so rows
 * sharing one cursor value across a page boundary are neither skipped nor repeated. The
 * tie-breaker must be unique.
 *
 * A table's page:
 *
 *     SELECT * FROM t WHERE c >= :from AND c < :to [AND <after>] ORDER BY c, id LIMIT :limit
 *
 * with <after> absent on the first page and, after it, the dialect's keyset form (dialects.ts):
 * `c >= :cursor AND (c > :cursor OR (c = :cursor AND id > :id))` (MariaDB, SQLite) or
 * `(c, id) > (:cursor, :id)` (PostgreSQL), each read by its planner as one index range on (c, id).
 *
 * A stream's query (`query:`) is read in one of two ways, by the parameters it uses:
 *
 * - Paged by the source (it uses none of :cursor, :id, :limit): the query is wrapped,
 *   `SELECT * FROM (<query>) ps_q WHERE <window> [AND <after>] ORDER BY c, id LIMIT :limit`, on
 *   the columns it returns (a qualified `a.updated_at` is read as `updated_at`). It may use :from
 *   and :to inside to narrow its own read; simple queries are merged into the outer one by the
 *   planners (MariaDB derived_merge, PostgreSQL subquery pull-up), so the index on (c, id) serves.
 * - Paging itself (it uses all of :cursor, :id and :limit), for queries a planner would not
 *   merge (aggregates, DISTINCT, UNION). The contract, the same on every page:
 *
 *       :from, :to      the window, from included, to excluded, as zone-less text in source.timezone
 *       :cursor, :id    continue strictly after this (cursor, tie-breaker); on the first page
 *                       :cursor is one microsecond before :from and :id is NULL, so the predicate
 *                       below admits the whole window with no special case
 *       :limit          page_size + 1: the row past the page is read again first on the next
 *                       page, and shows a tie-breaker that is not unique
 *
 *       SELECT ... FROM ... WHERE updated_at >= :from AND updated_at < :to
 *         AND updated_at >= :cursor AND (updated_at > :cursor OR (updated_at = :cursor AND id > :id))
 *       ORDER BY updated_at, id LIMIT :limit
 *
 *   (`id > NULL` is unknown, so on the first page only `updated_at > :cursor` counts; the
 *   redundant `updated_at >= :cursor` starts the index range at the cursor.) The row-value form
 *   `(updated_at, id) > (:cursor, :id)` is NOT allowed there: with a NULL :id it admits nothing.
 *   Its rows must carry the cursor and tie-breaker columns under their (last-part) names. Every
 *   page is checked: at most :limit rows, cursors inside the window and never going back, no row
 *   repeated from the previous page; a query that breaks the contract fails instead of looping
 *   or losing rows.
 *
 * Using some but not all of :cursor, :id, :limit is refused (stream.ts).
 *
 * Rows the keyset cannot reach are found, never skipped: a page is read with one row more than
 * it keeps (`:limit` is page_size + 1), so two rows sharing (cursor, tie-breaker), which a page
 * boundary would split and lose, are adjacent in what is read and fail the read naming them
 * (`duplicateKeyset`); rows whose cursor is NULL, MariaDB's zero date or outside the years any
 * window reaches are looked for before the first page (`unreachableStatement`) and fail it too.
 * The window's bounds are written in the zone of the cursor column's text: the source's zone for
 * a zone-less local column, UTC for an instant (MySQL TIMESTAMP, timestamptz) in the UTC session.
 */
import { SourceError } from '../source.js';
import { addMicros, compareInstants, instantToSourceText, parseInstant, type Instant } from '../sql/datetime.js';
import type { SqlDialect } from '../sql/dialects.js';
import type { Identifier } from '../sql/identifiers.js';
import type { Bindings, Row } from '../sql/session.js';

/** The raw cursor value and tie-breaker of the last row read. */
export interface KeysetPosition {
  cursor: unknown;
  id: unknown;
}

export interface KeysetWindow {
  /** The window as parsed, and as source text. */
  from: Instant;
  to: Instant;
  fromText: string;
  toText: string;
}

export type KeysetSource =
  /** A table, or a stream query wrapped: the source writes the window, the keyset, the order and the limit. */
  | { kind: 'paged'; from: string; cursor: string; tiebreak: string; cursorKey: string; tiebreakKey: string }
  /** A stream query that pages itself with :cursor, :id and :limit. */
  | { kind: 'self-paged'; query: string; cursorKey: string; tiebreakKey: string };

/** The parameters with which a stream query pages itself. */
export const SELF_PAGING_PARAMS = ['cursor', 'id', 'limit'] as const;

export function tableKeyset(relation: Identifier, cursor: Identifier, tiebreak: Identifier): KeysetSource {
  return { kind: 'paged', from: relation.sql, cursor: cursor.sql, tiebreak: tiebreak.sql, cursorKey: cursor.name, tiebreakKey: tiebreak.name };
}

export function queryKeyset(query: string, cursor: Identifier, tiebreak: Identifier, selfPaging: boolean): KeysetSource {
  return selfPaging
    ? { kind: 'self-paged', query, cursorKey: cursor.name, tiebreakKey: tiebreak.name }
    : { kind: 'paged', from: `(${query}) ps_q`, cursor: cursor.nameSql, tiebreak: tiebreak.nameSql, cursorKey: cursor.name, tiebreakKey: tiebreak.name };
}

export function keysetWindow(from: string, to: string, timezone: string, what: string): KeysetWindow {
  const fromInstant = parseInstant(from);
  const toInstant = parseInstant(to);
  if (fromInstant === undefined || toInstant === undefined) throw new SourceError(`${what}: a cursor window needs ISO 8601 date-times with a zone, got ${from} .. ${to}`);
  return { from: fromInstant, to: toInstant, fromText: instantToSourceText(fromInstant, timezone), toText: instantToSourceText(toInstant, timezone) };
}

function afterPredicate(form: SqlDialect['keyset'], c: string, id: string): string {
  return form === 'row-value'
    ? `(${c}, ${id}) > (:cursor, :id)`
    : `${c} >= :cursor AND (${c} > :cursor OR (${c} = :cursor AND ${id} > :id))`;
}

/** The statement of the page after `after` (undefined: the first page). */
export function keysetStatement(
  source: KeysetSource,
  dialect: SqlDialect,
  window: KeysetWindow,
  pageSize: number,
  timezone: string,
  after: KeysetPosition | undefined,
): { sql: string; bindings: Bindings } {
  if (source.kind === 'self-paged') {
    const cursor = after === undefined ? instantToSourceText(addMicros(window.from, -1), timezone) : after.cursor;
    return { sql: source.query, bindings: { from: window.fromText, to: window.toText, cursor, id: after === undefined ? null : after.id, limit: pageSize + 1 } };
  }
  const c = source.cursor;
  const id = source.tiebreak;
  const where = [`${c} >= :from`, `${c} < :to`];
  // One row past the page: a tie with the page's last row shows there (duplicateKeyset).
  const bindings: Record<string, unknown> = { from: window.fromText, to: window.toText, limit: pageSize + 1 };
  if (after !== undefined) {
    where.push(afterPredicate(dialect.keyset, c, id));
    bindings.cursor = after.cursor;
    bindings.id = after.id;
  }
  return { sql: `SELECT * FROM ${source.from} WHERE ${where.join(' AND ')} ORDER BY ${c}, ${id} LIMIT :limit`, bindings };
}

/** Where a page leaves the keyset: its last row's raw values. */
export function lastPosition(rows: readonly Row[], source: KeysetSource, what: string): KeysetPosition {
  const last = rows.at(-1) as Row;
  for (const [key, role] of [[source.cursorKey, 'cursor'], [source.tiebreakKey, 'tie-breaker']] as const) {
    if (!Object.hasOwn(last, key)) throw new SourceError(`${what}: the rows have no column ${key}; the ${role} column must be selected under that name`);
  }
  const position = { cursor: last[source.cursorKey], id: last[source.tiebreakKey] };
  if (position.cursor === null || position.cursor === undefined || position.id === null || position.id === undefined) {
    throw new SourceError(`${what}: a row has a NULL ${position.cursor == null ? 'cursor' : 'tie-breaker'} value; keyset columns must be NOT NULL`);
  }
  return position;
}

/**
 * The checks of a stream query's page against the contract (a table's page meets it by
 * construction): at most `limit` rows, cursor values inside the window and never decreasing, the
 * first row strictly after the previous page's last.
 */
export function checkQueryPage(rows: readonly Row[], source: { cursorKey: string; tiebreakKey: string }, window: KeysetWindow, limit: number, timezone: string, previous: KeysetPosition | undefined, what: string): void {
  if (rows.length > limit) throw new SourceError(`${what}: the query returned ${rows.length} rows for :limit ${limit}; it must end with LIMIT :limit`);
  let last: { at: Instant; id: unknown } | undefined;
  if (previous !== undefined) {
    const at = typeof previous.cursor === 'string' ? parseInstant(previous.cursor, timezone) : undefined;
    if (at !== undefined) last = { at, id: previous.id };
  }
  for (const [index, row] of rows.entries()) {
    const raw = row[source.cursorKey];
    const at = typeof raw === 'string' ? parseInstant(raw, timezone) : undefined;
    if (at === undefined) throw new SourceError(`${what}: row ${index + 1}: cursor column ${source.cursorKey} is ${JSON.stringify(raw)}, not a date-time`);
    if (compareInstants(at, window.from) < 0 || compareInstants(at, window.to) >= 0) {
      throw new SourceError(`${what}: row ${index + 1}: ${source.cursorKey} ${raw} is outside the window [${window.fromText}, ${window.toText}); the query must filter by :from and :to`);
    }
    if (last !== undefined) {
      const order = compareInstants(at, last.at);
      if (order < 0 || (order === 0 && String(row[source.tiebreakKey]) === String(last.id))) {
        throw new SourceError(`${what}: row ${index + 1} does not come after the previous one in (${source.cursorKey}, ${source.tiebreakKey}); the query must continue after (:cursor, :id) and ORDER BY ${source.cursorKey}, ${source.tiebreakKey}`);
      }
    }
    last = { at, id: row[source.tiebreakKey] };
  }
}

/** The earliest and latest cursor text a window can reach: a row outside them is never read. */
export const REACHABLE_FROM = '0001-01-01 00:00:00';
export const REACHABLE_TO = '9999-12-30 00:00:00';

/**
 * Up to three rows no window reaches: their cursor is NULL, zero (`0000-00-00 00:00:00`) or
 * outside REACHABLE_FROM..REACHABLE_TO. Columns `ps_c` (the cursor) and `ps_id` (the tie-breaker).
 * A self-paging query selects its rows itself: undefined.
 */
export function unreachableStatement(source: KeysetSource): { sql: string; bindings: Bindings } | undefined {
  if (source.kind === 'self-paged') return undefined;
  const { cursor: c, tiebreak: id } = source;
  return {
    sql: `SELECT ${c} AS ps_c, ${id} AS ps_id FROM ${source.from} WHERE ${c} IS NULL OR ${c} < :min OR ${c} >= :max ORDER BY ${id} LIMIT 3`,
    // A wrapped query's own :from and :to admit every row it can give.
    bindings: { min: REACHABLE_FROM, max: REACHABLE_TO, from: REACHABLE_FROM, to: REACHABLE_TO },
  };
}

/** What `unreachableStatement` found, as an error message (undefined when nothing). */
export function unreachableMessage(rows: readonly Row[], source: KeysetSource, what: string): string | undefined {
  if (rows.length === 0) return undefined;
  const examples = rows.map((r) => `${source.tiebreakKey} ${String(r.ps_id)}: ${r.ps_c === null || r.ps_c === undefined ? 'NULL' : String(r.ps_c)}`).join(', ');
  return `${what}: cursor column ${source.cursorKey} is NULL, zero or outside the years 0001..9999 in rows no cursor window reaches (${examples}${rows.length >= 3 ? ', ...' : ''}): they would never be read; give them a date-time on the source, or read the stream with a query whose cursor has one (COALESCE)`;
}

/**
 * Up to three (cursor, tie-breaker) pairs held by more than one of the newest `probe` rows: a
 * tie-breaker that is not unique among rows of one cursor value loses rows at page boundaries.
 * Columns `ps_c`, `ps_id`, `n`. Undefined for a self-paging query (its reads find them).
 */
export function duplicateStatement(source: KeysetSource, probe: number): { sql: string; bindings: Bindings } | undefined {
  if (source.kind === 'self-paged') return undefined;
  const { cursor: c, tiebreak: id } = source;
  return {
    sql: `SELECT ps_c, ps_id, COUNT(*) AS n FROM (SELECT ${c} AS ps_c, ${id} AS ps_id FROM ${source.from} WHERE ${c} >= :from AND ${c} < :to ORDER BY ${c} DESC, ${id} DESC LIMIT ${Math.floor(probe)}) ps_newest GROUP BY ps_c, ps_id HAVING COUNT(*) > 1 LIMIT 3`,
    bindings: { from: REACHABLE_FROM, to: REACHABLE_TO },
  };
}

/** The message of pairs found by `duplicateStatement`. */
export function duplicateMessage(rows: readonly Row[], source: KeysetSource, what: string, probe: number): string | undefined {
  if (rows.length === 0) return undefined;
  const examples = rows.map((r) => `(${source.cursorKey} ${String(r.ps_c)}, ${source.tiebreakKey} ${String(r.ps_id)}) ${String(r.n)} times`).join(', ');
  return `${what}: tie-breaker ${source.tiebreakKey} is not unique among rows with one ${source.cursorKey} (of the newest ${probe} rows: ${examples}): keyset pages would skip rows; set tiebreak_column to a unique column (the primary key)`;
}

/**
 * Rows read in (cursor, tie-breaker) order, one past the page: two adjacent rows with the same
 * raw pair mean the tie-breaker is not unique, and a page boundary between them would lose one.
 */
export function duplicateKeyset(rows: readonly Row[], source: { cursorKey: string; tiebreakKey: string }, what: string): void {
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1] as Row;
    const b = rows[i] as Row;
    if (String(a[source.cursorKey]) === String(b[source.cursorKey]) && String(a[source.tiebreakKey]) === String(b[source.tiebreakKey])) {
      throw new SourceError(`${what}: rows ${i} and ${i + 1} share (${source.cursorKey} ${String(a[source.cursorKey])}, ${source.tiebreakKey} ${String(a[source.tiebreakKey])}): tie-breaker ${source.tiebreakKey} is not unique among rows with one ${source.cursorKey}, so keyset pages would skip rows; set tiebreak_column to a unique column (the primary key)`);
    }
  }
}
