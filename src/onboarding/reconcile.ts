/**
 * `reconcile`: the partner's source against the store, per UTC day and entity. The source is read
 * through the partner's own definition (its list endpoints, tables or views, and its mapping), the
 * store's rows of the same days are read back, and per day both sides' record counts and sums
 * (deposits, withdrawals, GGR, NGR, P&L, challenge fees) are set side by side; for a day that
 * differs, the keys missing on either side and the records whose fields differ.
 *
 * A record's day is its business day: a customer's signup_date, a transaction's
 * transaction_date, an activity row's date (UTC). Cursor streams are read from the first day's
 * 00:00 on with no upper bound (a record changes after it happens, so every record of the days
 * asked is among them); daily streams day by day.
 *
 * A REST partner's `meta.total` is held against the distinct keys its pages gave, never the raw
 * count: a partner that writes while its pages are read shifts them, so a record comes twice at a
 * page boundary. That is a note; only a record missing, differing or unread is a difference.
 */
import { Decimal } from 'decimal.js';
import { createSource, type SourceDeps } from '../../connectors/index.js';
import { windowParams, type RestSourceClient } from '../../connectors/rest/source.js';
import type { PullWindow, Source } from '../../connectors/source.js';
import { addDays, daysBetween } from '../kernel/dates.js';
import type { PartnerDefinition, StreamDefinition } from '../config/definition.js';
import { createMapper } from '../pipeline/map-record.js';
import { valueAt } from '../kernel/value-at.js';
import { minimiseRecord, minimises } from '../spec/personal-data.js';
import { storedToRecord } from '../store/rows.js';
import type { Store } from '../store/store.js';
import { entityTable } from '../store/tables.js';
import { toUtcTimestamp } from '../kernel/timestamp.js';
import type { Entity, SpecRecord, Variant } from '../types.js';
import { DAY_FIELD, SUMS, sourceAggregates, sourceClock, sourceKeys } from './source-aggregates.js';
import { DEFAULT_SAMPLE, Groups, Sample, grouping, independentValues, readings, streamValues, valueLines, type Reading, type ValueReconciliation } from './reconcile-values.js';

export interface DaySide {
  count: number;
  sums: Record<string, string>;
}

export interface FieldDifference {
  field: string;
  source: unknown;
  store: unknown;
}

export interface DayReconciliation {
  entity: Entity;
  day: string;
  source: DaySide;
  store: DaySide;
  ok: boolean;
  /** Keys the source has and the store does not. */
  missing_in_store: string[];
  /** Keys the store has and the source does not. */
  missing_at_source: string[];
  differing: { key: string; fields: FieldDifference[] }[];
  /**
   * Database and warehouse streams read from a table or view: the day's COUNT and SUMs computed by
   * SQL on the source (the mapping applied: day, type codes, units), beside the rows read.
   */
  source_sql?: DaySide;
  /** Keys the source's SQL finds on the day that the definition's reads did not return (its cursor or query misses them). */
  not_read?: string[];
}

export interface Reconciliation {
  partner: string;
  from: string;
  to: string;
  ok: boolean;
  days: DayReconciliation[];
  /**
   * Source records the mapping could not read (they cannot be compared), with their key when the
   * key's own field reads (a record present at the source, whatever else is wrong with it).
   */
  unmappable: { entity: Entity; message: string; key?: string }[];
  /**
   * REST sources: what the partner's list endpoint says it holds (`meta.total` of the same query)
   * beside the distinct records its pages gave (by key); a difference means records were not read.
   * `read` counts every record the pages gave: a partner that writes while its pages are read
   * shifts them, and a record at a page boundary comes twice (`repeated`, a note, not a
   * difference). Per activity day, or per cursor stream for everything changed since the first day.
   */
  totals: { entity: Entity; window: string; partner_total: number; distinct: number; read: number; repeated: number; ok: boolean }[];
  /** Database and warehouse streams the source's SQL could not aggregate, and why (compared on the rows read only). */
  source_sql_skipped: { entity: Entity; reason: string }[];
  /** REST streams whose answer has no `meta.total`: the partner's own count was not checked (a note). */
  no_total: Entity[];
  /**
   * The values read apart from the definition (reconcile-values.ts): a seeded sample compared field
   * by field with the store, the counts and sums per day, currency, status and type, and the newest
   * date-time against the source's clock.
   */
  values: ValueReconciliation;
}

export interface ReconcileOptions {
  /** Records sampled per stream for the field-by-field check (default 200). */
  sample?: number;
  /** The sample's seed: the same seed draws the same records (default: drawn, and reported). */
  seed?: number;
}

/** A newest date-time this far past the source's clock means the definition reads the source's times in the wrong zone. */
const AHEAD_MS = 5 * 60_000;

export interface ReconcileDeps extends SourceDeps {
  store: Store;
}

/** A record as the store holds it: spec fields of the table, date-times in UTC at microseconds. */
function normalized(variant: Variant, entity: Entity, record: SpecRecord): SpecRecord {
  const table = entityTable(variant, entity);
  const out: SpecRecord = {};
  for (const column of table.columns) {
    const value = record[column.name];
    if (value === undefined || value === null) continue;
    if (column.kind === 'timestamp' && typeof value === 'string') {
      try {
        out[column.name] = toUtcTimestamp(value);
      } catch {
        out[column.name] = value;
      }
    } else out[column.name] = value;
  }
  return out;
}

const keyOf = (variant: Variant, entity: Entity, record: SpecRecord): string => entityTable(variant, entity).key.map((k) => String(record[k] ?? '')).join('|');

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || a === null || b === undefined || b === null) return (a ?? null) === (b ?? null);
  const numeric = (v: unknown) => typeof v === 'number' || (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v));
  if (numeric(a) && numeric(b) && (typeof a === 'number' || typeof b === 'number')) return new Decimal(String(a)).eq(new Decimal(String(b)));
  if (typeof a === 'string' && typeof b === 'string' && /T.*Z$/.test(a) && /T.*Z$/.test(b)) return toUtcTimestamp(a) === toUtcTimestamp(b);
  return JSON.stringify(a) === JSON.stringify(b);
}

function side(variant: Variant, entity: Entity, records: Iterable<SpecRecord>): DaySide {
  const sums = SUMS[variant][entity] ?? {};
  const totals: Record<string, Decimal> = Object.fromEntries(Object.keys(sums).map((k) => [k, new Decimal(0)]));
  let count = 0;
  for (const record of records) {
    count += 1;
    for (const [name, [field, type]] of Object.entries(sums)) {
      if (type !== undefined && record.transaction_type !== type) continue;
      const value = record[field];
      if (typeof value === 'number' || (typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value)))) totals[name] = (totals[name] as Decimal).plus(new Decimal(String(value)));
    }
  }
  return { count, sums: Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, v.toFixed()])) };
}

const dayOf = (entity: Entity, record: SpecRecord): string | undefined => {
  const value = record[DAY_FIELD[entity]];
  return typeof value === 'string' ? value.slice(0, 10) : undefined;
};

export async function reconcile(deps: ReconcileDeps, def: PartnerDefinition, from: string, to: string, only?: Entity, options: ReconcileOptions = {}): Promise<Reconciliation> {
  const days = daysBetween(from, to);
  const size = options.sample ?? DEFAULT_SAMPLE;
  const seed = options.seed ?? Math.floor(Math.random() * 1_000_000);
  const result: Reconciliation = { partner: def.partner, from, to, ok: true, days: [], unmappable: [], totals: [], source_sql_skipped: [], no_total: [], values: { sample: size, seed, streams: [] } };
  let clock: number | undefined;
  const source = createSource(def, deps);
  try {
    for (const [entity, stream] of Object.entries(def.streams) as [Entity, NonNullable<PartnerDefinition['streams'][Entity]>][]) {
      if (only !== undefined && entity !== only) continue;
      const map = createMapper(def.variant, entity, stream.mapping, def.affiliates);
      const bySource = new Map<string, Map<string, SpecRecord>>(days.map((d) => [d, new Map()]));
      // The values apart from the definition: readings built from the first record's columns, a seeded sample, the groups over the pages, the newest date-times.
      const by = grouping(def.variant, entity, DAY_FIELD[entity]);
      const sample = new Sample<{ key: string; raw: unknown }>(size, seed, entity);
      const pageGroups = new Groups(by);
      const pageValues = new Map<string, Record<string, unknown>>();
      const newest = new Map<string, { value: string; key: string }>();
      const stamps = entityTable(def.variant, entity).columns.filter((c) => c.kind === 'timestamp').map((c) => c.name);
      let read: { readings: Reading[]; notes: string[] } | undefined;
      let mappedCount = 0;
      const windows: PullWindow[] =
        stream.incremental.mode === 'daily'
          ? days.map((d) => ({ kind: 'days', from: d, to: d }))
          : [{ kind: 'cursor', from: `${from}T00:00:00Z`, to: deps.clock().toISOString(), open: true }];
      for (const asked of windows) {
        const window = source.bound ? await source.bound(stream, asked) : asked;
        let pagesRead = 0;
        // The keys the pages gave (a record that cannot be mapped: its raw form), each counted once against meta.total.
        const seen = new Set<string>();
        for await (const page of source.pages(stream, window)) {
          pagesRead += page.length;
          for (const raw of page) {
            const mapped = map(raw);
            if ('error' in mapped) {
              const rawKey = `raw:${JSON.stringify(raw)}`;
              const key = rawRecordKey(def.variant, entity, stream, raw);
              if (!seen.has(rawKey)) result.unmappable.push({ entity, message: mapped.error.message, ...(key !== undefined ? { key } : {}) });
              seen.add(rawKey);
              continue;
            }
            // The store holds what the partner's personal-data policy kept: the source's values are compared as kept.
            if (entity === 'customers' && minimises(def.personal_data)) minimiseRecord(mapped.record, def.personal_data);
            const record = normalized(def.variant, entity, mapped.record);
            const key = keyOf(def.variant, entity, record);
            seen.add(`key:${key}`);
            const day = dayOf(entity, record);
            const bucket = day === undefined ? undefined : bySource.get(day);
            const first = bucket !== undefined && !bucket.has(key);
            bucket?.set(key, record);
            read ??= readings(def, entity, stream, typeof raw === 'object' && raw !== null ? Object.keys(raw) : [], def.source.type === 'rest');
            for (const f of stamps) {
              const v = record[f];
              if (typeof v === 'string' && (newest.get(f)?.value ?? '') < v) newest.set(f, { value: v, key });
            }
            if (bucket === undefined) continue;
            // A record a page repeats counts once (the last read, as in the comparison by day).
            pageValues.set(key, independentValues(raw, record, read.readings, by));
            if (!first) continue;
            mappedCount += 1;
            sample.offer({ key, raw });
          }
        }
        const total = await partnerTotal(source, stream, window);
        if (total === undefined && def.source.type === 'rest' && !result.no_total.includes(entity)) result.no_total.push(entity);
        if (total !== undefined) {
          result.totals.push({ entity, window: window.kind === 'days' ? window.from : `changed since ${window.from}`, partner_total: total, distinct: seen.size, read: pagesRead, repeated: pagesRead - seen.size, ok: total === seen.size });
        }
      }
      const table = entityTable(def.variant, entity);
      // The store's rows of the days asked (date-times are stored as UTC text or timestamptz, days as text or date).
      const dayColumn = DAY_FIELD[entity];
      const kind = table.columns.find((c) => c.name === dayColumn)?.kind;
      const [lo, hi] = kind === 'timestamp' ? [`${from}T00:00:00.000000Z`, `${addDays(to, 1)}T00:00:00.000000Z`] : [from, addDays(to, 1)];
      const rows = (await deps.store.knex(table.name).where('partner_id', def.partner).andWhere(dayColumn, '>=', lo).andWhere(dayColumn, '<', hi)) as Record<string, unknown>[];
      const byStore = new Map<string, Map<string, SpecRecord>>(days.map((d) => [d, new Map()]));
      for (const row of rows) {
        const record = normalized(def.variant, entity, storedToRecord(table, row));
        const day = dayOf(entity, record);
        const bucket = day === undefined ? undefined : byStore.get(day);
        bucket?.set(keyOf(def.variant, entity, record), record);
      }
      const found = await sourceAggregates(deps, def, entity, stream, from, to).catch((error: Error) => {
        result.unmappable.push({ entity, message: `SQL aggregates on the source failed: ${deps.redact(error.message)}` });
        return undefined;
      });
      if (found !== undefined && 'skipped' in found) result.source_sql_skipped.push({ entity, reason: found.skipped });
      const aggregates = found !== undefined && 'days' in found ? found : undefined;
      for (const day of days) {
        const src = bySource.get(day) as Map<string, SpecRecord>;
        const dst = byStore.get(day) as Map<string, SpecRecord>;
        const s = side(def.variant, entity, src.values());
        const sql = aggregates === undefined ? undefined : (aggregates.days.get(day) ?? { count: 0, sums: Object.fromEntries(aggregates.sums.map((k) => [k, '0'])) });
        const sqlAgrees = sql === undefined || (sql.count === s.count && Object.entries(sql.sums).every(([k, v]) => s.sums[k] !== undefined && new Decimal(v).eq(new Decimal(s.sums[k] as string))));
        // The source's SQL sees other records than the definition's reads: its keys of the day, by SQL, name them.
        const sqlKeys = sqlAgrees ? undefined : (await sourceKeys(deps, def, entity, stream, [day], (r) => keyOf(def.variant, entity, r)).catch(() => undefined))?.get(day);
        const sourceSide = new Set([...src.keys(), ...(sqlKeys ?? [])]);
        const missingInStore = [...sourceSide].filter((k) => !dst.has(k)).sort();
        const missingAtSource = [...dst.keys()].filter((k) => !src.has(k) || (sqlKeys !== undefined && !sqlKeys.has(k))).sort();
        const unread = sqlKeys === undefined ? [] : [...sqlKeys].filter((k) => !src.has(k)).sort();
        const differing: DayReconciliation['differing'] = [];
        for (const [key, record] of src) {
          const stored = dst.get(key);
          if (stored === undefined) continue;
          const fields = table.columns
            .map((c) => c.name)
            .filter((f) => !same(record[f], stored[f]))
            .map((f) => ({ field: f, source: record[f] ?? null, store: stored[f] ?? null }));
          if (fields.length > 0) differing.push({ key, fields });
        }
        const t = side(def.variant, entity, dst.values());
        const ok = missingInStore.length === 0 && missingAtSource.length === 0 && differing.length === 0 && JSON.stringify(s) === JSON.stringify(t) && sqlAgrees;
        if (!ok) result.ok = false;
        result.days.push({ entity, day, source: s, store: t, ok, missing_in_store: missingInStore, missing_at_source: missingAtSource, differing, ...(sql ? { source_sql: sql } : {}), ...(unread.length > 0 ? { not_read: unread } : {}) });
      }
      for (const v of pageValues.values()) pageGroups.add(v);
      const stored = new Map<string, SpecRecord>();
      for (const m of byStore.values()) for (const [k, r] of m) stored.set(k, r);
      clock ??= def.source.type === 'rest' ? deps.clock().getTime() : await sourceClock(deps, def).catch(() => undefined);
      const values = await streamValues(deps, def, entity, stream, from, to, AHEAD_MS, { found: read ?? { readings: [], notes: [] }, sample, mapped: mappedCount, pageGroups, stored, newest, clock });
      result.values.streams.push(values);
      if (values.fields.some((f) => f.differing > 0) || (values.groups?.differing.length ?? 0) > 0 || values.ahead !== undefined) result.ok = false;
    }
  } finally {
    await source.close?.();
  }
  if (result.unmappable.length > 0 || result.totals.some((x) => !x.ok)) result.ok = false;
  return result;
}

/** A raw source record's key read through the mapping of the key's fields alone (a plain source field), or undefined. */
function rawRecordKey(variant: Variant, entity: Entity, stream: StreamDefinition, raw: unknown): string | undefined {
  const parts: string[] = [];
  for (const field of entityTable(variant, entity).key) {
    const rule = stream.mapping.fields[field];
    const from = rule === undefined ? (stream.mapping.passthrough ? field : undefined) : typeof rule === 'string' ? rule : rule.const === undefined && Object.keys(rule).every((k) => k === 'from') ? rule.from : undefined;
    const value = from === undefined ? undefined : valueAt(raw, from);
    if ((typeof value !== 'string' || value === '') && typeof value !== 'number') return undefined;
    parts.push(String(value));
  }
  return parts.join('|');
}

/** `meta.total` of a REST stream's query for the window (one record asked), or undefined. */
async function partnerTotal(source: Source, stream: StreamDefinition, window: PullWindow): Promise<number | undefined> {
  if (!('getJson' in source) || !('path' in stream)) return undefined;
  const rest = source as RestSourceClient;
  const params: Record<string, string> = { ...stream.params, ...windowParams(stream.incremental, window) };
  if (stream.pagination.type !== 'offset') params[stream.pagination.per_page_param] = '1';
  const body = await rest.getJson(stream.path, params);
  const meta = typeof body === 'object' && body !== null ? (body as { meta?: { total?: unknown } }).meta : undefined;
  return typeof meta?.total === 'number' ? meta.total : undefined;
}

const repeats = (x: Reconciliation['totals'][number]): string => (x.repeated > 0 ? ` (${x.read} with ${x.repeated} repeated across pages)` : '');

/** The report as text: one line per entity and day, then what differs. */
export function reconciliationLines(r: Reconciliation, limit = 10): string[] {
  const lines: string[] = [];
  for (const d of r.days) {
    const sums = Object.keys(d.source.sums).map((k) => `${k} ${d.source.sums[k]}/${d.store.sums[k]}`).join(', ');
    lines.push(`${d.ok ? 'ok  ' : 'DIFF'} ${d.day} ${d.entity}: records ${d.source.count}/${d.store.count} (source/store)${sums ? `; ${sums}` : ''}`);
    if (d.ok) continue;
    if (d.source_sql) lines.push(`     source by SQL: records ${d.source_sql.count}${Object.keys(d.source_sql.sums).length ? `; ${Object.entries(d.source_sql.sums).map(([k, v]) => `${k} ${v}`).join(', ')}` : ''}`);
    if (d.missing_in_store.length > 0) lines.push(`     missing in the store: ${d.missing_in_store.slice(0, limit).join(', ')}${d.missing_in_store.length > limit ? ` (+${d.missing_in_store.length - limit} more)` : ''}`);
    if (d.not_read !== undefined) lines.push(`     at the source by SQL but not read through the definition: ${d.not_read.slice(0, limit).join(', ')}${d.not_read.length > limit ? ` (+${d.not_read.length - limit} more)` : ''}`);
    if (d.missing_at_source.length > 0) lines.push(`     missing at the source: ${d.missing_at_source.slice(0, limit).join(', ')}${d.missing_at_source.length > limit ? ` (+${d.missing_at_source.length - limit} more)` : ''}`);
    for (const diff of d.differing.slice(0, limit)) {
      lines.push(`     differs ${diff.key}: ${diff.fields.map((f) => `${f.field} source ${JSON.stringify(f.source)} store ${JSON.stringify(f.store)}`).join('; ')}`);
    }
  }
  for (const u of r.unmappable.slice(0, limit)) lines.push(`unmappable ${u.entity}: ${u.message}`);
  for (const x of r.source_sql_skipped) lines.push(`note ${x.entity}: not aggregated by SQL on the source (${x.reason})`);
  const bySql = [...new Set(r.days.filter((d) => d.source_sql !== undefined).map((d) => d.entity))];
  if (bySql.length > 0) lines.push(`counted and summed by SQL on the source as well: ${bySql.join(', ')}`);
  for (const x of r.totals.filter((y) => !y.ok)) lines.push(`DIFF ${x.entity} ${x.window}: the partner's meta.total is ${x.partner_total}, its pages gave ${x.distinct} distinct records${repeats(x)}`);
  for (const x of r.totals.filter((y) => y.ok && y.repeated > 0)) {
    lines.push(`note ${x.entity} ${x.window}: its pages gave ${x.read} records for ${x.distinct} keys: ${x.repeated} repeated across pages (a partner writing while its pages are read shifts them), not a difference`);
  }
  for (const e of r.no_total ?? []) lines.push(`note ${e}: no meta.total: the partner's count was not checked`);
  const checked = r.totals.filter((y) => y.ok).length;
  if (checked > 0) lines.push(`meta.total agrees with the distinct records read for ${checked} quer${checked === 1 ? 'y' : 'ies'}`);
  lines.push(...valueLines(r.values, limit));
  const parts = [`${r.days.filter((d) => !d.ok).length} day(s) differ`];
  const fields = r.values.streams.flatMap((v) => v.fields.filter((f) => f.differing > 0).map((f) => `${v.entity}.${f.field}`));
  if (fields.length > 0) parts.push(`values differ in ${fields.join(', ')}`);
  // Groups of an entity whose days differ repeat those days' difference: counted where the days agree.
  const groups = r.values.streams.filter((v) => r.days.every((d) => d.entity !== v.entity || d.ok)).reduce((n, v) => n + (v.groups?.differing.length ?? 0), 0);
  if (groups > 0) parts.push(`${groups} group(s) by currency, status or type differ`);
  const ahead = r.values.streams.filter((v) => v.ahead).map((v) => `${v.entity}.${v.ahead?.field}`);
  if (ahead.length > 0) parts.push(`date-times ahead of the source's clock in ${ahead.join(', ')}`);
  const totals = r.totals.filter((x) => !x.ok).length;
  if (totals > 0) parts.push(`${totals} meta.total disagree${totals === 1 ? 's' : ''}`);
  if (r.unmappable.length > 0) parts.push(`${r.unmappable.length} source record(s) unmappable`);
  lines.push(r.ok ? `reconciled: ${r.partner} ${r.from}..${r.to}, no difference` : `differences: ${r.partner} ${r.from}..${r.to}: ${parts.join(', ')}`);
  return lines;
}

