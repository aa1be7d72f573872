/**
 * A read of whole UTC days: the rows whose day column lies in `from`..`to` (both included), from a
 * table or view, from a stream's own query with `:date_from` / `:date_to`, or from a query
 * without them, wrapped and filtered by its day column. The sync job loads
 * such a window in one store transaction, so the rows come in one snapshot and are streamed a page
 * at a time (PostgreSQL DECLARE/FETCH, the mysql2 row stream, the SQLite statement iterator):
 * memory holds a page, whatever the size of the days.
 */
import { BudgetExhausted, SourceError, type DaysWindow } from '../source.js';
import type { SqlConnection } from './connection.js';
import { instantToSourceText } from './datetime.js';
import type { Identifier } from './identifiers.js';
import { rowConverter } from './rows.js';
import { inSnapshot } from './snapshot.js';
import type { Bindings } from './session.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export type DaySource =
  /**
   * What follows FROM (a quoted table or view, or `(<query>) ps_q`), its quoted day column, and a
   * select list (`*` when absent). With `stamps`, the day column is a date-time: a UTC day is the
   * half-open range of its instants, `c >= :stamp_from AND c < :stamp_to`, the bounds written in
   * the zone the column's text is in (`stamps`: the source's zone for a zone-less column, UTC for
   * an instant in the UTC session).
   */
  | { from: string; dateColumn: string; select?: string; stamps?: string }
  /** A query that selects the days itself with :date_from and :date_to. */
  | { query: string };

export function relationDays(relation: Identifier, dateColumn: Identifier, select?: string, stamps?: string): DaySource {
  return { from: relation.sql, dateColumn: dateColumn.sql, select, ...(stamps !== undefined ? { stamps } : {}) };
}

/** The day after `day` (YYYY-MM-DD). */
const nextDay = (day: string): string => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

/** A query without :date_from / :date_to, filtered outside by the day column it returns. */
export function wrappedDays(query: string, dateColumn: Identifier): DaySource {
  return { from: `(${query}) ps_q`, dateColumn: dateColumn.nameSql };
}

export interface DayReadOptions {
  pageSize: number;
  /** Zone of zone-less date-times. */
  timezone: string;
  /** For messages: `partner stream customers, table x`. */
  what: string;
  /** Throws BudgetExhausted when the run's budget is spent. Checked before the read only: a days window loads whole or not at all, so stopping midway would only throw the read away. */
  budget?: (what: string) => void;
}

export function checkDaysWindow(window: DaysWindow, what: string): void {
  if (!DAY.test(window.from) || !DAY.test(window.to) || window.from > window.to) {
    throw new SourceError(`${what}: a days window needs days YYYY-MM-DD with from <= to, got ${window.from}..${window.to}`);
  }
}

export function dayStatement(source: DaySource, window: DaysWindow): { sql: string; bindings: Bindings } {
  const bindings = { date_from: window.from, date_to: window.to };
  if ('query' in source) return { sql: source.query, bindings };
  if (source.stamps !== undefined) {
    const at = (day: string) => instantToSourceText({ seconds: Date.parse(`${day}T00:00:00Z`) / 1000, micros: 0 }, source.stamps as string);
    return {
      sql: `SELECT ${source.select ?? '*'} FROM ${source.from} WHERE ${source.dateColumn} >= :stamp_from AND ${source.dateColumn} < :stamp_to`,
      bindings: { stamp_from: at(window.from), stamp_to: at(nextDay(window.to)) },
    };
  }
  return {
    sql: `SELECT ${source.select ?? '*'} FROM ${source.from} WHERE ${source.dateColumn} BETWEEN :date_from AND :date_to`,
    bindings,
  };
}

/** Pages of partner records of the window's days, in one read-only snapshot. */
export async function* readDays(db: SqlConnection, source: DaySource, window: DaysWindow, options: DayReadOptions): AsyncGenerator<Record<string, unknown>[]> {
  checkDaysWindow(window, options.what);
  const { sql, bindings } = dayStatement(source, window);
  const what = `${options.what}, days ${window.from === window.to ? window.from : `${window.from}..${window.to}`}`;
  options.budget?.(what);
  yield* inSnapshot(db, what, async function* (session) {
    for await (const page of session.stream(sql, bindings, options.pageSize, what)) {
      const toRecord = rowConverter(page.columns, options.timezone);
      yield page.rows.map(toRecord);
    }
  });
}

/** A budget check: past the deadline, the stream ends cleanly with what loaded kept. */
export function budgetCheck(clock: () => Date, deadline: number): (what: string) => void {
  return (what) => {
    if (clock().getTime() >= deadline) throw new BudgetExhausted(`${what}: the run's budget (source.run_budget_ms) is spent; the rest is read next run`);
  };
}
