/**
 * Loading one cursor window (customers, transactions): each page commits as it arrives, with its
 * rows, rejects and waiting records, and (incremental runs) the source's position after it in the
 * same transaction, so a crash or the end of the run budget resumes after the last committed page.
 * The stream's start and watermark move only when the window completes, in their own
 * transaction after the rows (cursor-state.ts says where to). A stored position the partner no
 * longer accepts starts the window over, logged. A window that rejects too much fails and leaves
 * the state as it found it (reject-guard.ts); so does a page walk whose records never held still
 * (PageWalkUnstable), which also drops the position. Backfills never touch the state.
 */
import { valueAt } from '../src/kernel/value-at.js';
import { PageWalkUnstable, PositionRefused, type CursorWindow, type PositionedPage, type Source } from '../connectors/source.js';
import { cursorInstant } from '../src/config/cursor-format.js';
import type { PartnerDefinition, StreamDefinition } from '../src/config/definition.js';
import type { Logger } from '../src/log.js';
import { LoadsInTurn, type Loader } from '../src/pipeline/load.js';
import type { BatchInput, BatchResult } from '../src/pipeline/batch.js';
import { readAhead } from '../src/pipeline/read-ahead.js';
import type { Entity, RawRecord } from '../src/types.js';
import { currentStart, MaxCursor, nextStart, utcMicros, type CursorState } from './cursor-state.js';
import { DEFAULT_MAX_REJECT_RATIO, RejectRateExceeded, rejectGuard } from './reject-guard.js';

export interface CursorWindowLoad {
  loader: Loader;
  source: Source;
  def: PartnerDefinition;
  entity: Entity;
  stream: StreamDefinition;
  /** The window as the source serves it (a database source lowers its upper bound). */
  window: CursorWindow;
  /** Incremental runs keep state; backfills never touch it. */
  keepsState: boolean;
  /** The stream's state when the run began. */
  state: CursorState | undefined;
  log: Logger;
  toRaw(records: unknown[]): RawRecord[];
  batch(records: RawRecord[]): BatchInput;
  tally(result: BatchResult): void;
  report(): void;
  now(): string;
}

export { valueAt };

async function* withoutPositions(pages: AsyncIterable<unknown[]>): AsyncGenerator<PositionedPage> {
  for await (const records of pages) yield { records };
}

/** Loads the window; resolves to the stream's watermark after it (unchanged for a backfill). */
export async function loadCursorWindow(w: CursorWindowLoad): Promise<string | undefined> {
  const { loader, source, entity, window, state, log } = w;
  const incremental = w.stream.incremental;
  const cursorField = incremental.mode === 'cursor' ? incremental.cursor_field : '';
  // An epoch-number change field is compared as the instant it stands for (kept as ISO text).
  const cursorFormat = incremental.mode === 'cursor' ? incremental.cursor_format : undefined;
  // A position is only good for the window it was taken in.
  let resume = w.keepsState && state?.resume?.from === window.from ? state.resume : undefined;
  const guard = rejectGuard(w.def.max_reject_ratio ?? DEFAULT_MAX_REJECT_RATIO, `${w.def.partner}/${entity} window from ${window.from}`);
  // The greatest value up to the run's upper bound moves the start; the greatest of all is kept for the record.
  const ceiling = utcMicros(window.to);
  let windowMax = new MaxCursor(resume?.max_cursor, ceiling);
  const seenMax = new MaxCursor(state?.max_cursor);
  let pages = resume?.pages ?? 0;

  const read = async (after: string | undefined): Promise<void> => {
    const positioned = source.cursorPages ? source.cursorPages(w.stream, window, after) : withoutPositions(source.pages(w.stream, window));
    // Each page (with its checkpoint) its own transaction, in order; the next page is fetched and
    // validated while this one loads (LoadsInTurn).
    const batches = new LoadsInTurn(loader, (result) => {
      w.tally(result);
      guard.add(result);
      w.report();
    });
    try {
      await readPages(positioned, batches);
      await batches.done();
    } finally {
      await batches.stop();
    }
  };
  const readPages = async (positioned: AsyncIterable<PositionedPage>, batches: LoadsInTurn): Promise<void> => {
    for await (const page of readAhead(positioned)) {
      const raw = w.toRaw(page.records);
      for (const record of page.records) {
        const value = cursorInstant(valueAt(record, cursorField), cursorFormat);
        windowMax.offer(value);
        seenMax.offer(value);
      }
      pages += 1;
      const input = w.batch(raw);
      if (w.keepsState && page.next !== undefined) {
        const at: CursorState = { ...state, resume: { from: window.from, after: page.next, pages, ...(windowMax.value !== undefined ? { max_cursor: windowMax.value } : {}) } };
        input.checkpoint = { stream: entity, state: at };
      }
      await batches.add(input);
    }
  };

  // Records slid onto pages already read: the rows read stay, but no position inside the window
  // is trusted; the state as the run found it, without one, so the next run reads it all.
  const readOrKeep = (after: string | undefined): Promise<void> => read(after).catch(async (error: unknown) => {
    if (error instanceof PageWalkUnstable && w.keepsState) {
      const kept: CursorState = { ...state };
      delete kept.resume;
      await loader.load({ ...w.batch([]), checkpoint: { stream: entity, state: kept } });
    }
    throw error;
  });

  if (resume) log.info(`continuing the window from ${window.from} after page ${resume.pages}`, { pages: resume.pages });
  try {
    await readOrKeep(resume?.after);
  } catch (error) {
    if (!(resume && error instanceof PositionRefused)) throw error;
    log.warn(`${(error as Error).message}; reading the window from ${window.from} again from its first page`);
    resume = undefined;
    windowMax = new MaxCursor(undefined, ceiling);
    pages = 0;
    await readOrKeep(undefined);
  }

  try {
    guard.check();
  } catch (error) {
    if (error instanceof RejectRateExceeded && w.keepsState) {
      // The state as the run found it: the start, and any position, stay where they were.
      const kept: CursorState = { ...state, halted: { at: w.now(), detail: error.message } };
      await loader.load({ ...w.batch([]), checkpoint: { stream: entity, state: kept } });
    }
    throw error;
  }
  if (!w.keepsState) return state?.watermark;

  const start = nextStart(currentStart(state) ?? window.from, window.to, windowMax.value);
  const next: CursorState = {
    watermark: window.to,
    ...(start !== undefined ? { start } : {}),
    ...(seenMax.value !== undefined ? { max_cursor: seenMax.value } : {}),
  };
  await loader.load({ ...w.batch([]), checkpoint: { stream: entity, state: next } });
  return window.to;
}
