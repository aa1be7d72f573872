/**
 * The warehouse view source kind: a view per stream in a partner's data warehouse (PostgreSQL or
 * MySQL; SQLite in the demo), read by date partition:
 *
 *     SELECT <mapped columns, or * with passthrough> FROM <view> WHERE <date_column> BETWEEN :date_from AND :date_to
 *
 * Closed UTC days only, by the warehouse's own clock: a window reaching today (or later) is
 * refused, since today's partition is still being written. Activity is read by its `date`,
 * customers and transactions by a modified-day column; the sync job re-pulls the recent days
 * (`late_days`) for late corrections and loads each window whole; `days_per_query` sets how many
 * days one window (one query) spans. Every statement runs under `statement_timeout_ms`; rows are
 * streamed a page at a time in one read-only snapshot.
 */
import type { StreamDefinition, WarehouseSource, WarehouseStream } from '../../src/config/definition.js';
import type { Variant } from '../../src/types.js';
import { SourceError, type PullWindow, type Source } from '../source.js';
import { sourceNow } from '../sql/clock.js';
import type { ResultColumn } from '../sql/column-types.js';
import { instantToIso } from '../sql/datetime.js';
import { checkDaysWindow, readDays, relationDays } from '../sql/days.js';
import type { SqlDialect } from '../sql/dialects.js';
import { sqlSourceBase, type SqlSourceBaseDeps } from '../sql/source-base.js';
import { columnIdentifier, quoteIdentifier, relationIdentifier, type Identifier } from '../sql/identifiers.js';
import { codeMapProblems, columnProblems, mappingNeeds, relationExists, resultColumns } from '../sql/inspect.js';

export interface WarehouseSourceDeps extends SqlSourceBaseDeps {
  /** The partner's variant: `inspect` then checks column types against spec fields. */
  variant?: Variant;
}

/** Rows per page handed to the pipeline (the spec's bulk size). */
export const WAREHOUSE_PAGE_SIZE = 1000;

interface ViewPlan {
  path: string;
  view: Identifier;
  date: Identifier;
  /** The select list: the mapped columns when the mapping names all it reads, else `*`. */
  select: string;
}

const PLAIN_COLUMN = /^[A-Za-z_][A-Za-z0-9_]*$/;

function planView(stream: WarehouseStream, dialect: SqlDialect): ViewPlan {
  const path = `streams.${stream.entity}`;
  if (stream.incremental.mode !== 'daily') throw new SourceError(`${path}: a warehouse stream is read by closed days: set incremental.mode to daily (with the day column in date_column)`);
  const view = relationIdentifier(stream.view, `${path}.view`, dialect);
  const date = columnIdentifier(stream.date_column, `${path}.date_column`, dialect);
  let select = '*';
  if (!stream.mapping.passthrough) {
    // Only the columns the mapping reads (wide views cost less); `*` when one is not a plain name.
    // And the soft-delete column: a row saying it was deleted must say so (docs/loading.md, Deletes).
    const softDelete = stream.entity === 'activity' || stream.soft_delete === undefined ? [] : [stream.soft_delete.field.split('.')[0] as string];
    const columns = new Set([date.name, ...mappingNeeds(stream, undefined).map((need) => need.column), ...softDelete]);
    if ([...columns].every((c) => PLAIN_COLUMN.test(c))) select = [...columns].map((c) => quoteIdentifier(c, dialect)).join(', ');
  }
  return { path, view, date, select };
}

const dayColumnAccepts = (column: ResultColumn): string | undefined =>
  column.type === 'date' || column.type === 'string' || column.type === 'untyped' || column.type === 'timestamp' || column.type === 'timestamptz'
    ? undefined
    : 'the day column must be a DATE or a date-time';

/**
 * How the day column's days are read: a DATE (or its text) by BETWEEN; a date-time by the half-open
 * range of the UTC day's instants, its bounds in the zone its text is in: UTC for an instant (a
 * timestamptz, a MySQL TIMESTAMP, read in the UTC session), else the source's `timezone`.
 */
function stampZone(column: ResultColumn | undefined, timezone: string): string | undefined {
  if (column === undefined || (column.type !== 'timestamp' && column.type !== 'timestamptz')) return undefined;
  return column.type === 'timestamptz' || /^TIMESTAMP$/i.test(column.typeName) ? 'UTC' : timezone;
}

export function createWarehouseSource(source: WarehouseSource, deps: WarehouseSourceDeps): Source {
  const base = sqlSourceBase(source, deps, 'warehouse', (definition, dialect) => planView(definition as WarehouseStream, dialect));
  const { timezone, stats, budget, connection, planFor } = base;
  if (!Number.isInteger(source.days_per_query) || source.days_per_query < 1) throw new SourceError(`source.days_per_query: ${source.days_per_query} is not a positive integer`);

  // The day column's kind, read once per stream (a read of no rows).
  const stamps = new WeakMap<ViewPlan, { zone: string | undefined }>();
  async function dayStamps(plan: ViewPlan, what: string): Promise<string | undefined> {
    let known = stamps.get(plan);
    if (known === undefined) {
      const session = await connection().acquire(what);
      try {
        const columns = await resultColumns(session, `SELECT ${plan.date.sql} FROM ${plan.view.sql}`, {}, `${what}: reading the day column's type`);
        known = { zone: stampZone(columns.find((c) => c.name === plan.date.name), timezone) };
      } finally {
        await session.release();
      }
      stamps.set(plan, known);
    }
    return known.zone;
  }

  async function* dayPages(plan: ViewPlan, window: PullWindow): AsyncGenerator<unknown[]> {
    const what = `${plan.path} (view ${plan.view.text})`;
    if (window.kind !== 'days') throw new SourceError(`${what}: the warehouse reads closed days, not a cursor window (${window.from} .. ${window.to})`);
    checkDaysWindow(window, what);
    // Closed days only, by the warehouse's clock: today's partition is still being written.
    const session = await connection().acquire(what);
    let today: string;
    try {
      today = instantToIso(await sourceNow(session, what)).slice(0, 10);
    } finally {
      await session.release();
    }
    if (window.to >= today) {
      throw new SourceError(`${what}: days ${window.from}..${window.to} are not all closed: the warehouse's day is ${today} (UTC); only days before it are read`);
    }
    yield* readDays(connection(), relationDays(plan.view, plan.date, plan.select, await dayStamps(plan, what)), window, { pageSize: WAREHOUSE_PAGE_SIZE, timezone, what, budget });
  }

  return {
    stats,

    pages(definition: StreamDefinition, window: PullWindow): AsyncIterable<unknown[]> {
      return dayPages(planFor(definition), window);
    },

    async inspect(definition: StreamDefinition): Promise<string[]> {
      const plan = planFor(definition);
      const what = `check ${plan.path} (view ${plan.view.text})`;
      const needs = [...mappingNeeds(definition, deps.variant), { column: plan.date.name, origin: 'date_column', required: true, check: dayColumnAccepts }];
      const session = await connection().acquire(what);
      try {
        if (!(await relationExists(session, plan.view, what))) return [`${plan.path}.view: view ${plan.view.text} does not exist (or this user cannot read it)`];
        const columns = await resultColumns(session, `SELECT * FROM ${plan.view.sql}`, {}, what);
        const problems = columnProblems(columns, needs, `${plan.path}.view ${plan.view.text}`);
        return problems.length > 0 ? problems : codeMapProblems(session, definition, plan.view, `${plan.path}.view ${plan.view.text}`, what);
      } finally {
        await session.release();
      }
    },

    close: base.close,
  };
}
