/**
 * One run of one (partner, stream): incremental (`run`, the worker) or a backfill of closed days,
 * through the same code over a different window.
 *
 * - Cursor streams commit each page (rows, rejects, waiting records, the read position) as it
 *   arrives; the stream's start and watermark move only after the last page, in their own
 *   transaction after the rows: state never runs ahead of the data. A crash mid-window continues
 *   after the last committed page next run (cursor-window.ts, cursor-state.ts).
 * - Daily streams load each day in ONE transaction that first deletes the stored day, so a day is
 *   replaced whole or not at all, and its state entry commits with it.
 * - A failure ends this stream's run without moving its state; `BudgetExhausted` ends it cleanly
 *   as `partial` with what loaded kept, and so does `PageWalkUnstable` (a page walk whose records
 *   never held still; connectors/rest/page-shift.ts), its window's state left where it began.
 */
import { BudgetExhausted, PageWalkUnstable, type Source } from '../connectors/source.js';
import type { PartnerDefinition } from '../src/config/definition.js';
import { cursorInstant } from '../src/config/cursor-format.js';
import type { Logger, Redact } from '../src/log.js';
import { LoadsInTurn, type Loader, type SettleGroup } from '../src/pipeline/load.js';
import type { BatchResult } from '../src/pipeline/batch.js';
import { createMapper } from '../src/pipeline/map-record.js';
import { readEarly, type EarlyRead } from '../src/pipeline/read-ahead.js';
import { hasCompletedRun, type RunCounts, type RunStatus } from '../src/store/runs.js';
import { Run } from '../src/pipeline/run.js';
import { readState } from '../src/store/sync-state.js';
import type { Entity, RawRecord } from '../src/types.js';
import { dayGuardFor, DayRefused } from './day-guard.js';
import { hasChangeColumn } from '../src/config/build-definition.js';
import { backfillWindows, cursorWindow, dailyDays, dayWindows, recordDay, type DailyState } from './windows.js';
import { daysBetween } from '../src/kernel/dates.js';
import type { CursorState } from './cursor-state.js';
import type { PullWindow } from '../connectors/source.js';
import { loadCursorWindow, valueAt } from './cursor-window.js';
import { ID_FIELD, saysDeleted } from '../src/pipeline/soft-delete.js';
import { loadDeletedList } from './deleted-list.js';
import { DEFAULT_MAX_REJECT_RATIO, RejectRateExceeded, rejectGuard } from './reject-guard.js';
import { inSpan } from '../src/trace.js';

export type SyncPlan = (
  | { kind: 'run'; /** The time the run was scheduled for: daily windows come from it. */ scheduledFor: Date }
  | { kind: 'backfill'; from: string; to: string }
) & { /** Accept activity days that shrink or are empty (`--allow-shrink`; ./day-guard.ts). */ allowShrink?: boolean };

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
  /** The group of the Loader.settleTogether this sync runs in: its bulk run's settle waits for the end of that work. */
  together?: SettleGroup;
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
  /** Page walks read again because the partner's records shifted between pages (connectors/rest/page-shift.ts); absent when none. */
  pageRewalks?: number;
  error?: string;
  durationMs: number;
  /** Rejected records per `field rule` (their first violation); absent when none were rejected. */
  rejectedBy?: Record<string, number>;
}

/** "completed with N rejected (field rule: count, ...)" for a run that loaded with rejects, else undefined. */
export function rejectedLine(r: Pick<StreamRunResult, 'counts' | 'rejectedBy'>): string | undefined {
  if (r.counts.rejected === 0) return undefined;
  const by = Object.entries(r.rejectedBy ?? {}).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([k, n]) => `${k}: ${n}`);
  return `completed with ${r.counts.rejected} rejected${by.length > 0 ? ` (${by.join(', ')})` : ''}`;
}

const describe = (w: PullWindow): string => (w.kind === 'days' ? (w.from === w.to ? w.from : `${w.from}..${w.to}`) : `${w.from} .. ${w.to}`);

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
    : incremental.mode === 'cursor' ? [cursorWindow(incremental, state, startedAt, state?.resume?.from)]
    : dayWindows(dailyDays(incremental, state, plan.scheduledFor), daysPerWindow);
  const span = windows.length === 0 ? '' : windows.length === 1 ? describe(windows[0] as PullWindow) : `${describe(windows[0] as PullWindow)} .. ${describe(windows.at(-1) as PullWindow)}`;

  // A backfill and a stream's first sync (until one run of it completes: a killed first sync's
  // rerun is one too) are bulk runs: fraud rules, commissions and the report facts evaluate over
  // groups of records and at the run's end, not after every page (docs/loading.md, Bulk runs). So is
  // every run of a command that evaluates what a killed run left (Loader.settleLeftovers): the
  // leftovers and these loads are judged once, over all of them, as the uninterrupted run was.
  const bulk = plan.kind === 'backfill' || state === undefined || loader.hasLeftovers(def.partner) || !(await hasCompletedRun(store.knex, def.partner, entity));
  const run = await Run.start(loader, { partner: def.partner, stream: entity, kind: plan.kind, windowFrom: windows[0]?.from, windowTo: windows.at(-1)?.to }, bulk ? 'group' : 'at-commit', deps.together);
  const runId = run.id;
  const log = deps.logger.child({ partner: def.partner, stream: entity, run_id: runId });
  log.info(`${plan.kind} started`, { window: span });

  const map = createMapper(def.variant, entity, stream.mapping, def.affiliates);
  const counts = run.counts;
  const statsBefore = { ...source.stats };
  let position = 0;
  let watermark = incremental.mode === 'cursor' ? state?.watermark : state?.last_day;
  let dailyState: DailyState | undefined = state;

  // A change field's value is the record's version (a transaction's updated_at is not a spec
  // field); a transaction_date cursor is not one: a corrected date must still apply.
  const versionField = incremental.mode === 'cursor' && (entity !== 'transactions' || hasChangeColumn(incremental.cursor_field, stream.mapping)) ? incremental.cursor_field : undefined;
  const softDelete = entity === 'activity' ? undefined : stream.soft_delete;
  const toRaw = (page: unknown[]): RawRecord[] =>
    page.map((src) => {
      position += 1;
      const mapped = map(src);
      const cursor = versionField === undefined ? undefined : cursorInstant(valueAt(src, versionField), incremental.mode === 'cursor' ? incremental.cursor_format : undefined);
      const version = typeof cursor === 'string' ? { version: cursor } : {};
      if ('error' in mapped) return { position, value: src, source: src, mappingErrors: [mapped.error], ...version };
      // A row its soft-delete column says was deleted at the source deletes its record (docs/loading.md, Deletes).
      const deleted = softDelete !== undefined && saysDeleted(valueAt(src, softDelete.field), softDelete.values) ? mapped.record[ID_FIELD[entity]] : undefined;
      if (typeof deleted === 'string' && deleted !== '') return { position, value: mapped.record, source: src, deletedAtSource: deleted, ...version };
      return { position, value: mapped.record, source: src, ...version };
    });
  const rejectedBy = run.rejectedBy;
  const tally = (r: BatchResult) => run.tally(r);
  const deletedVia = def.source.type === 'rest' ? 'rest_flag' as const : 'soft_delete' as const;
  const batch = (records: RawRecord[]) => ({ partner: def.partner, variant: def.variant, entity, runId, records, personalData: def.personal_data, ...(softDelete ? { deletedVia, ...(def.delete_guard ? { deleteGuard: def.delete_guard } : {}) } : {}) });

  let status: StreamRunResult['status'] = 'succeeded';
  let error: string | undefined;
  let cause: unknown;
  // The next days window's read, begun while the current one commits.
  let upcoming: EarlyRead<unknown[]> | undefined;
  try {
    for (const [index, asked] of windows.entries()) {
      // Each window a `window` span, child of the run's; its batches are its children.
      const about = { partner: def.partner, stream: entity, 'run.id': runId, 'window.kind': asked.kind, 'window.index': index + 1 };
      await run.within(() => inSpan('window', about, async (span) => {
        // A database source serves a cursor window only up to its own clock minus a safety lag.
        const window = source.bound ? await source.bound(stream, asked) : asked;
        const tallied = { pulled: counts.pulled, loaded: counts.loaded, rejected: counts.rejected };
        span.setAttributes({ 'window.from': window.from, 'window.to': window.to });
        const report = () => deps.progress?.({ partner: def.partner, stream: entity, window: describe(window), windowIndex: index + 1, windows: windows.length, pulled: counts.pulled, loaded: counts.loaded });
        if (window.kind === 'cursor') {
          watermark = await loadCursorWindow({
            loader, source, def, entity, stream, window, keepsState: plan.kind === 'run', state, log,
            toRaw, batch, tally, report, now: () => store.now(),
          });
        } else {
          const days = daysBetween(window.from, window.to);
          const reading = upcoming ?? readEarly(source.pages(stream, window));
          upcoming = undefined;
          const following = windows[index + 1];
          // Activity days are replaced only when the source's answer can be trusted (./day-guard.ts).
          const guard = dayGuardFor({ partner: def.partner, variant: def.variant, entity, incremental }, plan, days, dailyState);
          const before = run.mark();
          // The reject-rate guard judges the window as a whole; its rejects are kept even when the
          // window is refused, so the records it rejected are held until the transaction ends.
          const rejectsGuard = rejectGuard(def.max_reject_ratio ?? DEFAULT_MAX_REJECT_RATIO, `${def.partner}/${entity} ${describe(window)}`);
          const rejectedRaw: RawRecord[] = [];
          await loader.transaction(async (tx) => {
            guard?.begin(tx);
            // Activity days are replaced whole; customers and transactions of a day only upsert.
            // The pages load in turn in this one transaction, as a cursor window's do each in its
            // own: while one page is written, the next is read and validated.
            // Queued first: the pages' writes follow it, while the first page is read.
            const replaced = entity === 'activity' ? tx.replaceDays(def.partner, def.variant, days, runId) : undefined;
            const pages = new LoadsInTurn(tx, (result, input) => {
              rejectsGuard.add(result);
              if (result.rejected > 0) {
                const positions = new Set(result.rejects.map((r) => r.position));
                for (const record of input.records) if (positions.has(record.position)) rejectedRaw.push(record);
              }
              tally(result);
              report();
            });
            try {
              for await (const page of reading.pages) await pages.add(batch(guard ? guard.mark(toRaw(page)) : toRaw(page)));
              // This window is read: the next one's read begins while these rows finish and commit.
              if (following?.kind === 'days') upcoming = readEarly(source.pages(stream, source.bound ? await source.bound(stream, following) : following));
              await pages.done();
              await replaced;
            } catch (error) {
              await pages.stop();
              throw error;
            }
            rejectsGuard.check();
            await guard?.finish(tx);
            if (plan.kind === 'run') {
              let next = dailyState ?? {};
              for (const day of days) next = recordDay(next, day, store.now());
              await tx.checkpoint(def.partner, { stream: entity, state: next }, runId);
              dailyState = next;
              watermark = next.last_day;
            }
          }).catch(async (err: unknown) => {
            // Nothing of a refused window was kept: its counts go, its records dated elsewhere stay as rejects.
            if (err instanceof DayRefused) {
              run.restore(before);
              if (err.outside.length > 0) tally(await loader.load(batch([...err.outside])));
            }
            // A window stopped by the reject-rate guard: nothing replaced, its rejects kept, the day not
            // recorded as loaded, and the stream marked stopped until a window loads (freshness).
            if (err instanceof RejectRateExceeded) {
              run.restore(before);
              if (rejectedRaw.length > 0) tally(await loader.load(batch(rejectedRaw)));
              if (plan.kind === 'run') {
                const halted: DailyState = { ...(dailyState ?? {}), halted: { at: store.now(), detail: (err as Error).message } };
                await loader.load({ ...batch([]), checkpoint: { stream: entity, state: halted } });
              }
            }
            throw err;
          });
        }
        report();
        span.setAttributes({ 'records.pulled': counts.pulled - tallied.pulled, 'records.loaded': counts.loaded - tallied.loaded, 'records.rejected': counts.rejected - tallied.rejected });
      }, { redact: deps.redact }));
    }
    // A REST partner's list of deleted ids, after the stream's own windows.
    if (plan.kind === 'run' && entity !== 'activity' && 'path' in stream && stream.deleted_list) await run.within(() => loadDeletedList(loader, source, def, entity, stream, run));
    await run.settle();
  } catch (err) {
    await upcoming?.close().catch(() => undefined);
    // What loaded stays loaded: it is evaluated now, or, if that fails too, by the next loading command.
    await run.settle().catch((settleError: unknown) => log.error(`evaluating the run's records failed, they stay pending: ${(settleError as Error).message}`));
    status = err instanceof BudgetExhausted || err instanceof PageWalkUnstable ? 'partial' : 'failed';
    error = deps.redact((err as Error).message ?? String(err));
    cause = err;
    if (err instanceof PageWalkUnstable) log.warn(`pagination unstable, ending the window with what loaded kept and its state unmoved: ${error}`, { page_rewalks: (source.stats.pageRewalks ?? 0) - (statsBefore.pageRewalks ?? 0) });
    else if (status === 'partial') log.warn(`run budget exhausted, ending the stream with what loaded kept: ${error}`);
    else log.error(`${plan.kind} failed: ${error}`);
  }

  counts.retries = source.stats.retries - statsBefore.retries;
  counts.throttled = source.stats.throttled - statsBefore.throttled;
  const pageRewalks = (source.stats.pageRewalks ?? 0) - (statsBefore.pageRewalks ?? 0);
  const durationMs = performance.now() - started;
  await run.finish(status as Exclude<RunStatus, 'running' | 'skipped'>, { finalCursor: watermark, error, cause }).catch((closeError: unknown) => {
    // A run that failed keeps its own error: the store that failed under it (a full disk) may fail
    // this close too, and the next run of the stream closes the run as abandoned (src/store/runs.ts).
    if (status === 'succeeded') throw closeError;
    log.error(`closing the run failed, the next run of the stream closes it: ${deps.redact((closeError as Error).message)}`);
  });
  log.info(`${plan.kind} ${status}`, { ...counts, ...(pageRewalks > 0 ? { page_rewalks: pageRewalks } : {}), watermark, duration_ms: Math.round(durationMs) });
  return { partner: def.partner, stream: entity, runId, kind: plan.kind, status, windows: span, counts, watermark, error, durationMs, ...(pageRewalks > 0 ? { pageRewalks } : {}), ...(counts.rejected > 0 ? { rejectedBy } : {}) };
}
