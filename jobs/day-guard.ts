/**
 * Why a day replacement does not trust whatever the source answers. A daily activity window
 * deletes the stored days and loads what the source answered for them, in one transaction; a
 * partner API that answers nothing (an outage behind a 200), ignores the `date` parameter, or
 * stops paging early would otherwise wipe or shrink days that were right, their commissions
 * reversed, while the run says `succeeded`. The rules this module keeps:
 *
 * - Every record's `date` falls in the requested days. One that does not is a reject (field
 *   `date`, rule `requestedDays`) and its window fails without replacing anything.
 * - A day that holds rows and would become empty, or lose more than `max_day_shrink` of them
 *   (default 0.5), is not replaced: the window fails naming the day, the rows stored and received.
 * - An incremental run does not record as loaded the day it is scheduled for (the previous closed
 *   day, the one freshness is about) when the source answered no loadable row for it and it is not
 *   recorded already: the window fails, so the worker retries it and the 06:00 freshness breach
 *   fires if it stays so. Older days a run reads for the first time (a first run from `start`,
 *   catch-up after downtime) may be empty: a partner's history has quiet days.
 *
 * Rows are counted in the store, in the replacing transaction (table rows plus records parked for
 * their customer), before the delete and after the load. A real shrink or a genuinely empty day is
 * accepted deliberately: `--allow-shrink` on `run` or `backfill` for one run, or `max_day_shrink: 1`
 * in the definition for a partner whose days may shrink or be empty.
 */
import type { Knex } from 'knex';
import type { Incremental } from '../src/config/definition.js';
import type { LoadTransaction } from '../src/pipeline/load-transaction.js';
import { countDayRows } from '../src/store/day-rows.js';
import type { Entity, RawRecord, Variant, Violation } from '../src/types.js';
import { utcDay, type DailyState } from './windows.js';
import { addDays } from '../src/kernel/dates.js';

export const DEFAULT_MAX_DAY_SHRINK = 0.5;

export interface DayGuardOptions {
  /** Share of a day's stored rows a replacement may remove (0–1); 1 accepts any answer, even none. */
  maxShrink: number;
  /** This run accepts any shrink and empty days (`--allow-shrink`). */
  allowShrink: boolean;
  /** Incremental runs: the day the run is for, and the days recorded as loaded so far. Absent for a backfill. */
  due?: { day: string; recorded: Readonly<Record<string, string>> };
}

/** The day an incremental run scheduled for `scheduledFor` is for: the previous closed UTC day. */
export const dueDay = (scheduledFor: Date): string => addDays(utcDay(scheduledFor), -1);

/** A window the guard refused: nothing of it was replaced. `outside` are its records dated elsewhere, to keep as rejects. */
export class DayRefused extends Error {
  constructor(message: string, readonly outside: readonly RawRecord[]) {
    super(message);
    this.name = 'DayRefused';
  }
}

const ROW = (n: number) => `${n} ${n === 1 ? 'row' : 'rows'}`;
const percent = (share: number) => `${Math.round(share * 1000) / 10}%`;

/** The guard of one window of days of a stream, or undefined when its days are not replaced (only activity's are). */
export function dayGuardFor(
  stream: { partner: string; variant: Variant; entity: Entity; incremental: Incremental },
  plan: { kind: 'run'; scheduledFor: Date; allowShrink?: boolean } | { kind: 'backfill'; allowShrink?: boolean },
  days: readonly string[],
  state: DailyState | undefined,
): DayGuard | undefined {
  if (stream.entity !== 'activity' || stream.incremental.mode !== 'daily') return undefined;
  return new DayGuard({ partner: stream.partner, variant: stream.variant }, days, {
    maxShrink: stream.incremental.max_day_shrink ?? DEFAULT_MAX_DAY_SHRINK,
    allowShrink: plan.allowShrink === true,
    due: plan.kind === 'run' ? { day: dueDay(plan.scheduledFor), recorded: state?.days ?? {} } : undefined,
  });
}

export class DayGuard {
  private readonly wanted: ReadonlySet<string>;
  private readonly received = new Map<string, number>();
  private readonly outside: RawRecord[] = [];
  private readonly span: string;
  private stored: Promise<Map<string, number>> | undefined;

  constructor(
    private readonly scope: { partner: string; variant: Variant },
    readonly days: readonly string[],
    private readonly options: DayGuardOptions,
  ) {
    this.wanted = new Set(days);
    this.span = days.length === 1 ? `day ${days[0]}` : `days ${days[0]}..${days.at(-1)}`;
  }

  private count(trx: Knex.Transaction): Promise<Map<string, number>> {
    return countDayRows(trx, this.scope.partner, this.scope.variant, this.days);
  }

  /** Counts the stored rows of the days; call before the transaction's day replacement is queued. */
  begin(tx: LoadTransaction): void {
    this.stored = tx.run((trx) => this.count(trx));
    this.stored.catch(() => undefined); // the transaction's failure surfaces through its queue
  }

  /** After the window's last batch: counts again and throws DayRefused when the replacement must not commit. */
  async finish(tx: LoadTransaction): Promise<void> {
    if (!this.stored) throw new Error('DayGuard.finish without begin');
    this.check(await this.stored, await tx.run((trx) => this.count(trx)));
  }

  /** The records of a page, those dated outside the requested days turned into rejects; the others counted per day. */
  mark(records: RawRecord[]): RawRecord[] {
    return records.map((record) => {
      if (record.parseError !== undefined || (record.mappingErrors?.length ?? 0) > 0) return record;
      const value = record.value;
      const date = value !== null && typeof value === 'object' ? (value as Record<string, unknown>).date : undefined;
      // A missing or non-string date is the validator's to report (required, type).
      if (typeof date !== 'string') return record;
      if (this.wanted.has(date)) {
        this.received.set(date, (this.received.get(date) ?? 0) + 1);
        return record;
      }
      const violation: Violation = {
        field: 'date',
        rule: 'requestedDays',
        message: `date: ${JSON.stringify(date)} is outside the requested ${this.span} (the source answered for another day; nothing of the window is replaced)`,
      };
      const rejected = { ...record, mappingErrors: [violation] };
      this.outside.push(rejected);
      return rejected;
    });
  }

  /** Throws DayRefused when the window must not replace the stored days; `before`/`after`: rows per day in the store. */
  check(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): void {
    if (this.outside.length > 0) {
      const dates = [...new Set(this.outside.map((r) => String((r.value as Record<string, unknown>).date)))].sort();
      throw new DayRefused(
        `${this.span} not replaced: ${ROW(this.outside.length)} dated outside it (${dates.slice(0, 5).join(', ')}${dates.length > 5 ? ', ...' : ''}); ` +
          'the source did not answer for the day asked; they are kept as rejects (field date, rule requestedDays)',
        this.outside,
      );
    }
    const { maxShrink, allowShrink, due } = this.options;
    if (allowShrink || maxShrink >= 1) return;
    const problems: string[] = [];
    for (const day of this.days) {
      const stored = before.get(day) ?? 0;
      const remaining = after.get(day) ?? 0;
      const received = this.received.get(day) ?? 0;
      if (stored > 0 && remaining === 0) {
        problems.push(`${day}: ${ROW(stored)} stored, ${received} received: the day would become empty`);
      } else if (stored > 0 && stored - remaining > maxShrink * stored) {
        problems.push(`${day}: ${ROW(stored)} stored, ${received} received, ${remaining} would remain: the day would lose ${percent((stored - remaining) / stored)} of its rows (max_day_shrink ${maxShrink})`);
      } else if (due?.day === day && stored === 0 && remaining === 0 && due.recorded[day] === undefined) {
        problems.push(`${day}: no rows stored, ${received} received, none loadable: not recorded as loaded`);
      }
    }
    if (problems.length > 0) {
      throw new DayRefused(
        `day replacement refused, nothing replaced: ${problems.join('; ')}. If the partner's day really shrank or is empty, accept it with --allow-shrink (run, backfill) or max_day_shrink in the definition`,
        [],
      );
    }
  }
}
