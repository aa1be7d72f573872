/**
 * One run of one (partner, stream): incremental (`run`, the worker) or a backfill of closed days,
 * through the same code over a different window.
 *
 * - Cursor streams commit each page (rows, rejects, waiting records) as it arrives; the watermark
 *   moves to the window's upper bound only after the last page, in its own transaction after the
 *   rows: state never runs ahead of the data. A crash mid-window re-pulls the window next run.
 * - Daily streams load each day in ONE transaction that first deletes the stored day, so a day is
 *   replaced whole or not at all, and its state entry commits with it.
 * - A failure ends this stream's run without moving its state; `BudgetExhausted` ends it cleanly
 *   as `partial` with what loaded kept.
 */
import { BudgetExhausted, type Source } from '../connectors/source.js';
import type { PartnerDefinition } from '../src/config/definition.js';
import type { Logger, Redact } from '../src/log.js';
import type { BatchResult, Loader } from '../src/pipeline/load.js';
import { createMapper } from '../src/pipeline/map-record.js';
import { readAhead, readEarly, type EarlyRead } from '../src/pipeline/read-ahead.js';
import { addCounts, emptyCounts, finishRun, startRun, type RunCounts, type RunStatus } from '../src/store/runs.js';
import { readState } from '../src/store/sync-state.js';
import { toUtcTimestamp } from '../src/store/values.js';
import type { Entity, RawRecord } from '../src/types.js';
import { hasChangeColumn } from '../src/config/load-definitions.js';
import {
  backfillWindows, cursorWindow, dailyDays, daysBetween, dayWindows, recordDay,
  type CursorState, type DailyState, type PullWindow,
} from './windows.js';

export type SyncPlan =
  | { kind: 'run'; /** The time the run was scheduled for: daily windows come from it. */ scheduledFor: Date }
  | { kind: 'backfill'; from: string; to: string };

export interface SyncProgress {
  partner: string;
  stream: Entity;
  window: string;
  windowIndex: number;
  windows: number;
  pulled: number;
  loaded: number;
}

export interface SyncDeps {
  loader: Loader;
  source: Source;
  logger: Logger;
  redact: Redact;
  progress?: (p: SyncProgress) => void;
}

export interface StreamRunResult {
  partner: string;
  stream: Entity;
  runId: string;
  kind: SyncPlan['kind'];
  /** `skipped`: another process held the stream's lock; nothing was done. */
  status: Exclude<RunStatus, 'running'> | 'skipped';
  windows: string;
  counts: RunCounts;
  /** The stream's position after the run: a cursor watermark or the last loaded day. */
  watermark?: string;
  error?: string;
  durationMs: number;
}

const describe = (w: PullWindow): string => (w.kind === 'days' ? (w.from === w.to ? w.from : `${w.from}..${w.to}`) : `${w.from} .. ${w.to}`);

/** A value at a dot path of a source record (`a.b.0.c`). */
function valueAt(record: unknown, path: string): unknown {
  let value: unknown = record;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The greatest cursor value seen, compared in UTC at full precision, kept as the source wrote it. */
class MaxCursor {
  private normalized: string | undefined;
  constructor(public value: string | undefined) {
    this.normalized = value === undefined ? undefined : MaxCursor.utc(value);
  }

  private static utc(value: string): string | undefined {
    try {
      return toUtcTimestamp(value);
    } catch {
      return undefined; // not a date-time: not a usable cursor value
    }
  }

  offer(candidate: unknown): void {
    if (typeof candidate !== 'string' || candidate === this.value) return;
    const utc = MaxCursor.utc(candidate);
    if (utc !== undefined && (this.normalized === undefined || utc > this.normalized)) {
      this.value = candidate;
      this.normalized = utc;
    }
  }
}

export async function syncStream(deps: SyncDeps, def: PartnerDefinition, entity: Entity, plan: SyncPlan): Promise<StreamRunResult> {
  const { loader, source } = deps;
  const store = loader.store;
  const stream = def.streams[entity];
  if (!stream) throw new Error(`partner ${def.partner} has no ${entity} stream`);
  const started = performance.now();
  const startedAt = store.clock();
  const incremental = stream.incremental;
  const state = (await readState(store.knex, def.partner, entity)) as (CursorState & DailyState) | undefined;
  // A warehouse reads several days per query; each window still loads whole, in one transaction.
  const daysPerWindow = def.source.type === 'warehouse' ? def.source.days_per_query : 1;
  const windows: PullWindow[] =
    plan.kind === 'backfill' ? backfillWindows(incremental, plan.from, plan.to, daysPerWindow)
    : incremental.mode === 'cursor' ? [cursorWindow(incremental, state, startedAt)]
    : dayWindows(dailyDays(incremental, state, plan.scheduledFor), daysPerWindow);
  const span = windows.length === 0 ? '' : windows.length === 1 ? describe(windows[0] as PullWindow) : `${describe(windows[0] as PullWindow)} .. ${describe(windows.at(-1) as PullWindow)}`;

  const runId = await startRun(store.knex, {
    partner: def.partner,
    stream: entity,
    kind: plan.kind,
    windowFrom: windows[0]?.from,
    windowTo: windows.at(-1)?.to,
  }, store.now());
  const log = deps.logger.child({ partner: def.partner, stream: entity, run_id: runId });
  log.info(`${plan.kind} started`, { window: span });

  const map = createMapper(def.variant, entity, stream.mapping, def.affiliates);
  const counts = emptyCounts();
  const statsBefore = { ...source.stats };
  let position = 0;
  let watermark = incremental.mode === 'cursor' ? state?.watermark : state?.last_day;
  const maxCursor = new MaxCursor(state?.max_cursor);
  let dailyState: DailyState | undefined = state;

  // A change field's value is the record's version (a transaction's updated_at is not a spec
  // field); a transaction_date cursor is not one: a corrected date must still apply.
  const versionField = incremental.mode === 'cursor' && (entity !== 'transactions' || hasChangeColumn(incremental.cursor_field, stream.mapping)) ? incremental.cursor_field : undefined;
  const toRaw = (page: unknown[]): RawRecord[] =>
    page.map((src) => {
      position += 1;
      const mapped = map(src);
      const cursor = versionField === undefined ? undefined : valueAt(src, versionField);
      const version = typeof cursor === 'string' ? { version: cursor } : {};
      return 'error' in mapped
        ? { position, value: src, source: src, mappingErrors: [mapped.error], ...version }
        : { position, value: mapped.record, source: src, ...version };
    });
  const tally = (r: BatchResult) =>
    addCounts(counts, { pulled: r.received, valid: r.valid, rejected: r.rejected, loaded: r.loaded, waiting: r.waiting, stale: r.stale, released: r.released });
  const batch = (records: RawRecord[]) => ({ partner: def.partner, variant: def.variant, entity, runId, records });

  let status: StreamRunResult['status'] = 'succeeded';
  let error: string | undefined;
  // The next days window's read, begun while the current one commits.
  let upcoming: EarlyRead<unknown[]> | undefined;
  try {
    for (const [index, asked] of windows.entries()) {
      // A database source serves a cursor window only up to its own clock minus a safety lag.
      const window = source.bound ? await source.bound(stream, asked) : asked;
      const report = () => deps.progress?.({ partner: def.partner, stream: entity, window: describe(window), windowIndex: index + 1, windows: windows.length, pulled: counts.pulled, loaded: counts.loaded });
      if (window.kind === 'cursor') {
        const cursorField = incremental.mode === 'cursor' ? incremental.cursor_field : '';
        for await (const page of readAhead(source.pages(stream, window))) {
          tally(await loader.load(batch(toRaw(page))));
          for (const record of page) maxCursor.offer(valueAt(record, cursorField));
          report();
        }
        if (plan.kind === 'run') {
          const next: CursorState = { watermark: window.to, ...(maxCursor.value !== undefined ? { max_cursor: maxCursor.value } : {}) };
          await loader.load({ ...batch([]), checkpoint: { stream: entity, state: next } });
          watermark = window.to;
        }
      } else {
        const days = daysBetween(window.from, window.to);
        const reading = upcoming ?? readEarly(source.pages(stream, window));
        upcoming = undefined;
        const following = windows[index + 1];
        await loader.transaction(async (tx) => {
          // Activity days are replaced whole; customers and transactions of a day only upsert.
          // The store work of a transaction runs in order: while one page is written, the next is
          // read and validated (the next page's result is awaited only after it was handed over).
          let writing: Promise<BatchResult | void> = entity === 'activity' ? tx.replaceDays(def.partner, def.variant, days, runId) : Promise.resolve();
          for await (const page of reading.pages) {
            const loading = tx.load(batch(toRaw(page)));
            const done = await writing;
            if (done) tally(done);
            writing = loading;
            report();
          }
          // This window is read: the next one's read begins while these rows finish and commit.
          if (following?.kind === 'days') upcoming = readEarly(source.pages(stream, source.bound ? await source.bound(stream, following) : following));
          const done = await writing;
          if (done) tally(done);
          if (plan.kind === 'run') {
            let next = dailyState ?? {};
            for (const day of days) next = recordDay(next, day, store.now());
            await tx.checkpoint(def.partner, { stream: entity, state: next }, runId);
            dailyState = next;
            watermark = next.last_day;
          }
        });
      }
      report();
    }
  } catch (err) {
    await upcoming?.close().catch(() => undefined);
    status = err instanceof BudgetExhausted ? 'partial' : 'failed';
    error = deps.redact((err as Error).message ?? String(err));
    if (status === 'partial') log.warn(`run budget exhausted, ending the stream with what loaded kept: ${error}`);
    else log.error(`${plan.kind} failed: ${error}`);
  }

  counts.retries = source.stats.retries - statsBefore.retries;
  counts.throttled = source.stats.throttled - statsBefore.throttled;
  const durationMs = performance.now() - started;
  await finishRun(store.knex, runId, { status, counts, finalCursor: watermark, error, durationMs }, store.now());
  log.info(`${plan.kind} ${status}`, { ...counts, watermark, duration_ms: Math.round(durationMs) });
  return { partner: def.partner, stream: entity, runId, kind: plan.kind, status, windows: span, counts, watermark, error, durationMs };
}
