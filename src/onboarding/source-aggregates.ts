/**
 * Reconcile's second opinion on a database or warehouse source: per UTC day, the record count and
 * the sums computed by SQL ON THE SOURCE (`COUNT(*)`, `SUM(col)` ... `GROUP BY day[, type]`), for
 * every entity of a stream read from a table or view: customers per signup day (prop trading: and
 * their account sizes); transactions per
 * day and per type (deposits, withdrawals, bonuses; challenge fees, reset fees, payouts, refunds);
 * activity per day (bets, wins, GGR, NGR; P&L, lots).
 *
 * The partner's columns are not the spec's, so the definition's mapping is applied to the
 * aggregate: the day comes from the column the day field is mapped from (a DATE; a date-time
 * column read in the source's zone and turned to its UTC day; epoch milliseconds or seconds
 * divided into UTC days), the type codes of each group go through the type field's own rule
 * (`map`), and each SUM through the amount's rule when it is linear (a rename, `number`,
 * `minor_units`, `multiply`), so that sums in cents or thousands come out in spec units.
 *
 * A stream this cannot aggregate (read by a query, a day field from a nested path or a text
 * format, a non-linear amount rule) has a reason instead, shown by reconcile.
 */
import { Decimal } from 'decimal.js';
import { DateTime } from 'luxon';
import { parseInstant } from '../../connectors/sql/datetime.js';
import { resultColumns } from '../../connectors/sql/inspect.js';
import { openSqlConnection } from '../../connectors/sql/connection.js';
import type { SqlDialect } from '../../connectors/sql/dialects.js';
import { columnIdentifier, relationIdentifier } from '../../connectors/sql/identifiers.js';
import { addDays } from '../kernel/dates.js';
import type { FieldRule, PartnerDefinition, StreamDefinition } from '../config/definition.js';
import type { Logger, Redact } from '../log.js';
import { createMapper } from '../pipeline/map-record.js';
import { entityTable } from '../store/tables.js';
import type { Entity, SpecRecord, Variant } from '../types.js';

export interface AggregateSide {
  count: number;
  sums: Record<string, string>;
}

/** Per UTC day (YYYY-MM-DD): the source's count and sums, in spec units; `sums` names the sums computed. */
export type SourceAggregates = { days: Map<string, AggregateSide>; sums: string[] } | { skipped: string };

/** The sums kept per entity and variant: name → [spec field, only records of this transaction_type]. */
export const SUMS: Record<Variant, Partial<Record<Entity, Record<string, [string, string?]>>>> = {
  igaming: {
    transactions: { deposits: ['amount_currency', 'deposit'], withdrawals: ['amount_currency', 'withdrawal'], bonuses: ['amount_currency', 'bonus'] },
    activity: { total_bets: ['total_bets'], wins: ['wins'], ggr: ['ggr'], ngr: ['ngr'] },
  },
  'prop-trading': {
    customers: { account_sizes: ['account_size'] },
    transactions: { challenge_fees: ['amount_currency', 'challenge_fee'], reset_fees: ['amount_currency', 'reset_fee'], payouts: ['amount_currency', 'payout'], refunds: ['amount_currency', 'refund'] },
    activity: { pnl: ['pnl'], lots_traded: ['lots_traded'] },
  },
};

export const DAY_FIELD: Record<Entity, string> = { customers: 'signup_date', transactions: 'transaction_date', activity: 'date' };

const MS_PER_DAY = 86_400_000;
const LINEAR_KEYS = ['from', 'number', 'minor_units', 'multiply'];

/** The source column a rule of `field` reads (a top-level column only; no `from`: the field's own name), or undefined. */
function columnOf(rule: FieldRule | undefined, field: string): string | undefined {
  if (typeof rule === 'object' && rule.const !== undefined) return undefined;
  const column = typeof rule === 'string' ? rule : rule === undefined ? undefined : (rule.from ?? field);
  return column === undefined || column.includes('.') ? undefined : column;
}

const ruleOf = (stream: StreamDefinition, field: string): FieldRule | undefined => stream.mapping.fields[field] ?? (stream.mapping.passthrough ? field : undefined);

type DayExpression =
  | { kind: 'date'; column: string }
  | { kind: 'datetime'; column: string }
  | { kind: 'epoch'; column: string; unitMs: number };

/** How the entity's day is read from the source, or why it cannot be. */
function dayExpression(entity: Entity, stream: StreamDefinition): DayExpression | string {
  const field = DAY_FIELD[entity];
  const rule = ruleOf(stream, field);
  const column = columnOf(rule, field) ?? ('date_column' in stream && entity === 'activity' ? stream.date_column : undefined);
  if (column === undefined) return `${field} is not mapped from one column of the table`;
  const datetime = typeof rule === 'object' ? rule.datetime : undefined;
  if (datetime?.format === 'unix_millis') return { kind: 'epoch', column, unitMs: 1 };
  if (datetime?.format === 'unix_seconds') return { kind: 'epoch', column, unitMs: 1000 };
  if (datetime !== undefined) return `${field} is read from text (datetime format ${datetime.format ?? 'iso'}): its day is not computed by SQL`;
  return entity === 'activity' ? { kind: 'date', column } : { kind: 'datetime', column };
}

/** The local text a date-time day expression groups by, per dialect, and its luxon form: hours, or minutes for a zone off the hour. */
function localFormat(zone: string, from: string, to: string, dialect: SqlDialect): { sql: (col: string) => string; luxon: string } {
  const whole = [from, to].every((d) => DateTime.fromISO(d, { zone }).offset % 60 === 0 && DateTime.fromISO(d, { zone }).plus({ months: 6 }).offset % 60 === 0);
  const luxon = whole ? 'yyyy-MM-dd HH' : 'yyyy-MM-dd HH:mm';
  if (dialect.client === 'mysql') return { sql: (col) => `DATE_FORMAT(${col}, '${whole ? '%Y-%m-%d %H' : '%Y-%m-%d %H:%i'}')`, luxon };
  if (dialect.client === 'postgres') return { sql: (col) => `to_char(${col}, '${whole ? 'YYYY-MM-DD HH24' : 'YYYY-MM-DD HH24:MI'}')`, luxon };
  return { sql: (col) => `strftime('${whole ? '%Y-%m-%d %H' : '%Y-%m-%d %H:%M'}', ${col})`, luxon };
}

interface DaySql {
  expr: string;
  range: string;
  params: Record<string, unknown>;
  toDay: (v: unknown) => string;
  /** The SQL filters the grouped days itself (`d` between :dlo and :dhi); otherwise toDay's days are filtered in JS. */
  sqlDays: boolean;
}

/**
 * The day's SQL (a DATE, or a day number for epochs) and a sargable range on the raw column that
 * holds every row of the days asked (date-times: a day wider each side, whatever the source's zone).
 * A date-time is grouped by its local hour's text and each hour turned to its UTC day here (luxon,
 * the source's `timezone`), on every database: the session is in UTC and never asked to convert a
 * zone (MariaDB without the server's time-zone tables cannot; a replica usually lacks them).
 * `zone` is the zone the column's text is in: UTC for an instant (MySQL TIMESTAMP, PostgreSQL
 * timestamptz) read in the UTC session, the source's zone for a local one (DATETIME, timestamp).
 * A local hour that occurs twice (clocks going back) is read as its later occurrence, as the
 * replica source reads it (connectors/sql/datetime.ts).
 */
function daySql(day: DayExpression, dialect: SqlDialect, from: string, to: string, zone = 'UTC'): DaySql {
  const col = columnIdentifier(day.column, 'mapping', dialect).sql;
  const text = (v: unknown) => (v instanceof Date ? v.toISOString() : String(v)).slice(0, 10);
  if (day.kind === 'epoch') {
    const perDay = MS_PER_DAY / day.unitMs;
    const expr = dialect.client === 'mysql' ? `FLOOR(${col} / ${perDay})` : dialect.client === 'postgres' ? `floor(${col} / ${perDay}.0)` : `CAST(${col} / ${perDay} AS INTEGER)`;
    const lo = Date.parse(`${from}T00:00:00Z`) / day.unitMs;
    const hi = Date.parse(`${addDays(to, 1)}T00:00:00Z`) / day.unitMs;
    return { expr, range: `${col} >= :lo AND ${col} < :hi`, params: { lo, hi }, toDay: (v) => new Date(Number(v) * MS_PER_DAY).toISOString().slice(0, 10), sqlDays: true };
  }
  if (day.kind === 'date') return { expr: col, range: `${col} >= :lo AND ${col} <= :hi`, params: { lo: from, hi: to }, toDay: text, sqlDays: true };
  const range = `${col} >= :lo AND ${col} < :hi`;
  const params = { lo: `${addDays(from, -1)} 00:00:00`, hi: `${addDays(to, 2)} 00:00:00` };
  const format = localFormat(zone, from, to, dialect);
  const days = new Map<string, string>();
  const toDay = (v: unknown): string => {
    const local = String(v);
    let d = days.get(local);
    if (d === undefined) {
      const seconds = parseInstant(`${local}${format.luxon.endsWith('mm') ? '' : ':00'}:00`, zone)?.seconds;
      d = seconds === undefined ? local.slice(0, 10) : new Date(seconds * 1000).toISOString().slice(0, 10);
      days.set(local, d);
    }
    return d;
  };
  return { expr: format.sql(col), range, params, toDay, sqlDays: false };
}

/**
 * The connection reconcile's SQL reads with (in UTC, as every source session), and the zone a
 * date-time column's text is in, from the column's type in a read of no rows.
 */
async function openForAggregates(deps: AggregateDeps, def: PartnerDefinition & { source: { type: 'db' | 'warehouse' } }, relation: string, day: DayExpression): Promise<{ db: ReturnType<typeof openSqlConnection>; zone: string }> {
  const source = def.source;
  const db = openSqlConnection({ client: source.client, url: source.url, timezone: source.timezone ?? 'UTC', statementTimeoutMs: source.statement_timeout_ms, redact: deps.redact, logger: deps.logger, stats: { requests: 0, retries: 0, throttled: 0, waitedMs: 0 } });
  if (day.kind !== 'datetime') return { db, zone: 'UTC' };
  try {
    const session = await db.acquire('reconcile column type');
    try {
      const dialect = db.dialect;
      const columns = await resultColumns(session, `SELECT ${columnIdentifier(day.column, 'mapping', dialect).sql} FROM ${relationIdentifier(relation, 'table', dialect).sql}`, {}, 'reconcile column type');
      return { db, zone: columns[0]?.type === 'timestamptz' ? 'UTC' : (source.timezone ?? 'UTC') };
    } finally {
      await session.release();
    }
  } catch (error) {
    await db.close();
    throw error;
  }
}

/** A linear amount rule applied to a SUM (cents → units, thousands → units), in spec units. */
function linearMapper(variant: Variant, entity: Entity, field: string, rule: FieldRule, affiliates: PartnerDefinition['affiliates']): ((sum: unknown) => string) | undefined {
  if (typeof rule === 'object' && !Object.keys(rule).every((k) => LINEAR_KEYS.includes(k))) return undefined;
  const fields = { [field]: typeof rule === 'string' ? { from: 'v', number: true } : { ...rule, from: 'v', number: true } };
  const map = createMapper(variant, entity, { fields, passthrough: false }, affiliates);
  return (sum) => {
    const mapped = map({ v: sum ?? 0 });
    const value = 'record' in mapped ? mapped.record[field] : undefined;
    return value === undefined || value === null ? 'n/a' : new Decimal(String(value)).toFixed();
  };
}

export interface AggregateDeps {
  redact: Redact;
  logger: Logger;
}

/** The source's per-day counts and sums for a db or warehouse stream; undefined for a REST stream. */
export async function sourceAggregates(deps: AggregateDeps, def: PartnerDefinition, entity: Entity, stream: StreamDefinition, from: string, to: string): Promise<SourceAggregates | undefined> {
  if (def.source.type === 'rest') return undefined;
  const relation = 'view' in stream && stream.view ? stream.view : 'table' in stream && stream.table ? stream.table : undefined;
  if (relation === undefined) return { skipped: 'the stream is read by a query: compared on the rows it reads only' };
  const day = dayExpression(entity, stream);
  if (typeof day === 'string') return { skipped: day };

  const sums = Object.entries(SUMS[def.variant][entity] ?? {});
  const amounts: { name: string; column: string; type?: string; apply: (sum: unknown) => string }[] = [];
  for (const [name, [field, type]] of sums) {
    const rule = ruleOf(stream, field);
    const column = columnOf(rule, field);
    const apply = rule === undefined ? undefined : linearMapper(def.variant, entity, field, rule, def.affiliates);
    if (column === undefined || apply === undefined) return { skipped: `${field} is not a linear rule on one column (a rename, number, minor_units, multiply)` };
    amounts.push({ name, column, ...(type !== undefined ? { type } : {}), apply });
  }
  const typed = amounts.some((a) => a.type !== undefined);
  const typeRule = typed ? ruleOf(stream, 'transaction_type') : undefined;
  const typeColumn = columnOf(typeRule, 'transaction_type');
  if (typed && (typeRule === undefined || typeColumn === undefined)) return { skipped: 'transaction_type is not mapped from one column of the table' };
  const typeOf = typeRule === undefined ? undefined : createMapper(def.variant, entity, { fields: { transaction_type: typeof typeRule === 'string' ? { from: 'v' } : { ...typeRule, from: 'v' } }, passthrough: false }, def.affiliates);

  const { db, zone } = await openForAggregates(deps, def as never, relation, day);
  try {
    const dialect = db.dialect;
    const q = (column: string) => columnIdentifier(column, 'mapping', dialect).sql;
    const { expr, range, params, toDay, sqlDays } = daySql(day, dialect, from, to, zone);
    // One SUM per distinct amount column; the rows grouped by day (and by the raw type code).
    const columns = [...new Set(amounts.map((a) => a.column))];
    const inner = [`${expr} AS d`, ...(typeColumn !== undefined ? [`${q(typeColumn)} AS t`] : []), ...columns.map((c, i) => `${q(c)} AS a${i}`)];
    const outer = ['d', ...(typeColumn !== undefined ? ['t'] : []), 'COUNT(*) AS n', ...columns.map((_c, i) => `SUM(a${i}) AS s${i}`)];
    const [lo, hi] = day.kind === 'epoch' ? [Math.floor((params.lo as number) / (MS_PER_DAY / day.unitMs)), Math.floor((params.hi as number) / (MS_PER_DAY / day.unitMs)) - 1] : [from, to];
    const sql =
      `SELECT ${outer.join(', ')} FROM (SELECT ${inner.join(', ')} FROM ${relationIdentifier(relation, 'table', dialect).sql} WHERE ${range}) x` +
      `${sqlDays ? ' WHERE d >= :dlo AND d <= :dhi' : ''} GROUP BY d${typeColumn !== undefined ? ', t' : ''}`;
    const session = await db.acquire('reconcile aggregates');
    try {
      const { rows } = await session.query(sql, { ...params, dlo: lo, dhi: hi }, `reconcile aggregates of ${relation}`);
      // Raw sums per day and name (before the rule), added up over the type codes of the day.
      const raw = new Map<string, { count: number; sums: Map<string, Decimal> }>();
      for (const row of rows) {
        const d = toDay(row.d);
        if (d < from || d > to) continue;
        const entry = raw.get(d) ?? { count: 0, sums: new Map(amounts.map((a) => [a.name, new Decimal(0)])) };
        raw.set(d, entry);
        entry.count += Number(row.n);
        const mapped = typeOf?.({ v: row.t });
        const specType = mapped !== undefined && 'record' in mapped ? mapped.record.transaction_type : undefined;
        for (const a of amounts) {
          if (a.type !== undefined && specType !== a.type) continue;
          const s = row[`s${columns.indexOf(a.column)}`];
          if (s !== null && s !== undefined) entry.sums.set(a.name, (entry.sums.get(a.name) as Decimal).plus(new Decimal(String(s))));
        }
      }
      const days = new Map<string, AggregateSide>();
      for (const [d, entry] of raw) {
        days.set(d, { count: entry.count, sums: Object.fromEntries(amounts.map((a) => [a.name, a.apply((entry.sums.get(a.name) as Decimal).toFixed())])) });
      }
      return { days, sums: amounts.map((a) => a.name) };
    } finally {
      await session.release();
    }
  } finally {
    await db.close();
  }
}

/**
 * The keys of the source's records of some days, read by SQL with the same day expression as the
 * aggregates and mapped through the key fields' own rules (numeric ids become the spec's text):
 * for a day whose SQL aggregate disagrees, the keys that the definition's reads (or the store)
 * lack. Undefined when the stream cannot be read so (see sourceAggregates).
 */
export async function sourceKeys(deps: AggregateDeps, def: PartnerDefinition, entity: Entity, stream: StreamDefinition, days: readonly string[], keyOf: (record: SpecRecord) => string): Promise<Map<string, Set<string>> | undefined> {
  if (def.source.type === 'rest' || days.length === 0) return undefined;
  const relation = 'view' in stream && stream.view ? stream.view : 'table' in stream && stream.table ? stream.table : undefined;
  const day = dayExpression(entity, stream);
  if (relation === undefined || typeof day === 'string') return undefined;
  const keyFields = entityTable(def.variant, entity).key;
  const rules = Object.fromEntries(keyFields.map((f) => [f, ruleOf(stream, f)]));
  const columns = keyFields.map((f) => columnOf(rules[f], f));
  if (columns.some((c) => c === undefined)) return undefined;
  const fields = Object.fromEntries(keyFields.map((f, i) => [f, typeof rules[f] === 'string' ? { from: `k${i}` } : { ...(rules[f] as object), from: `k${i}` }]));
  const map = createMapper(def.variant, entity, { fields, passthrough: false }, def.affiliates);
  const { db, zone } = await openForAggregates(deps, def as never, relation, day);
  try {
    const dialect = db.dialect;
    const out = new Map<string, Set<string>>();
    const session = await db.acquire('reconcile keys');
    try {
      for (const d of days) {
        const { expr, range, params, toDay } = daySql(day, dialect, d, d, zone);
        const select = columns.map((c, i) => `${columnIdentifier(c as string, 'mapping', dialect).sql} AS k${i}`);
        const dayValue = day.kind === 'epoch' ? Math.floor((params.lo as number) / (MS_PER_DAY / day.unitMs)) : d;
        const sql = `SELECT ${select.join(', ')}, ${expr} AS d FROM ${relationIdentifier(relation, 'table', dialect).sql} WHERE ${range}`;
        const { rows } = await session.query(sql, params, `reconcile keys of ${relation} on ${d}`);
        const keys = new Set<string>();
        for (const row of rows) {
          if (toDay(row.d) !== (day.kind === 'epoch' ? toDay(dayValue) : d)) continue;
          const mapped = map(row);
          keys.add('record' in mapped ? keyOf(mapped.record) : keyFields.map((_f, i) => String(row[`k${i}`])).join('|'));
        }
        out.set(d, keys);
      }
      return out;
    } finally {
      await session.release();
    }
  } finally {
    await db.close();
  }
}

/** One group of the source's rows as its SQL computed it: the UTC day, the raw values grouped by, the count and the raw sums. */
export interface RawGroup {
  day: string;
  values: Record<string, unknown>;
  count: number;
  sums: Record<string, unknown>;
}

/**
 * The source's counts and raw sums per UTC day and per raw value of some columns (its currency,
 * status and type columns), one GROUP BY on the stream's table or view: reconcile reads the
 * groups' values and sums by what the source says of them, apart from the definition's rules.
 * `group` and `sums` name, per spec field, the top-level column read.
 */
export async function sourceGroups(deps: AggregateDeps, def: PartnerDefinition, entity: Entity, stream: StreamDefinition, from: string, to: string, group: Record<string, string>, sums: Record<string, string>): Promise<{ groups: RawGroup[] } | { skipped: string } | undefined> {
  if (def.source.type === 'rest') return undefined;
  const relation = 'view' in stream && stream.view ? stream.view : 'table' in stream && stream.table ? stream.table : undefined;
  if (relation === undefined) return { skipped: 'the stream is read by a query' };
  const day = dayExpression(entity, stream);
  if (typeof day === 'string') return { skipped: day };
  const { db, zone } = await openForAggregates(deps, def as never, relation, day);
  try {
    const dialect = db.dialect;
    const q = (column: string) => columnIdentifier(column, 'mapping', dialect).sql;
    const { expr, range, params, toDay, sqlDays } = daySql(day, dialect, from, to, zone);
    const parts = Object.entries(group);
    const amounts = Object.entries(sums);
    const inner = [`${expr} AS d`, ...parts.map(([, c], i) => `${q(c)} AS g${i}`), ...amounts.map(([, c], i) => `${q(c)} AS a${i}`)];
    const keys = ['d', ...parts.map((_p, i) => `g${i}`)];
    const outer = [...keys, 'COUNT(*) AS n', ...amounts.map((_a, i) => `SUM(a${i}) AS s${i}`)];
    const [lo, hi] = day.kind === 'epoch' ? [Math.floor((params.lo as number) / (MS_PER_DAY / day.unitMs)), Math.floor((params.hi as number) / (MS_PER_DAY / day.unitMs)) - 1] : [from, to];
    const sql = `SELECT ${outer.join(', ')} FROM (SELECT ${inner.join(', ')} FROM ${relationIdentifier(relation, 'table', dialect).sql} WHERE ${range}) x${sqlDays ? ' WHERE d >= :dlo AND d <= :dhi' : ''} GROUP BY ${keys.join(', ')}`;
    const session = await db.acquire('reconcile groups');
    try {
      const { rows } = await session.query(sql, { ...params, dlo: lo, dhi: hi }, `reconcile groups of ${relation}`);
      const groups: RawGroup[] = [];
      for (const row of rows) {
        const d = toDay(row.d);
        if (d < from || d > to) continue;
        groups.push({ day: d, values: Object.fromEntries(parts.map(([f], i) => [f, row[`g${i}`]])), count: Number(row.n), sums: Object.fromEntries(amounts.map(([f], i) => [f, row[`s${i}`]])) });
      }
      return { groups };
    } finally {
      await session.release();
    }
  } finally {
    await db.close();
  }
}

/** The source database's own clock (epoch milliseconds), for the newest change read in the definition's zone; undefined for REST. */
export async function sourceClock(deps: AggregateDeps, def: PartnerDefinition): Promise<number | undefined> {
  const source = def.source;
  if (source.type === 'rest') return undefined;
  const db = openSqlConnection({ client: source.client, url: source.url, timezone: 'UTC', statementTimeoutMs: source.statement_timeout_ms, redact: deps.redact, logger: deps.logger, stats: { requests: 0, retries: 0, throttled: 0, waitedMs: 0 } });
  try {
    const session = await db.acquire('reconcile clock');
    try {
      const sql = source.client === 'mysql' ? 'SELECT UNIX_TIMESTAMP(NOW(6)) * 1000 AS ms' : source.client === 'postgres' ? 'SELECT extract(epoch FROM clock_timestamp()) * 1000 AS ms' : "SELECT (julianday('now') - 2440587.5) * 86400000 AS ms";
      const { rows } = await session.query(sql, {}, 'reconcile clock');
      const ms = Number(rows[0]?.ms);
      return Number.isFinite(ms) ? ms : undefined;
    } finally {
      await session.release();
    }
  } finally {
    await db.close();
  }
}
