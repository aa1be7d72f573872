/**
 * Cron schedules in UTC: the fire times of a connector definition's `schedule`, computed from the
 * expression and a given instant, never from the wall clock. node-cron parses and validates the
 * expression (the same parser the definition loader checks it with); the walk to the next or
 * previous fire time is ours, so that the scheduler can ask "when after T?" and "when last before
 * T?" with an injected clock (catch-up after downtime, a simulated day in tests).
 *
 * Semantics follow node-cron 4: 5 fields (minute first) or 6 (second first), names, ranges,
 * steps, `L`, `L-n`, `nW`, `LW` in the day of month, `nL` and `n#k` in the day of the week. The
 * day of month and the day of the week must BOTH match (node-cron's rule, not Vixie cron's "either").
 */
import { parse } from 'node-cron';

export interface CronSchedule {
  readonly expression: string;
  /** The first fire time strictly after `after`. */
  next(after: Date): Date;
  /** The last fire time at or before `at`; undefined when there is none within a century. */
  previous(at: Date): Date | undefined;
}

type DayToken = number | string;

const DAY_MS = 86_400_000;
/** How far the walk looks (node-cron looks as far: Feb 29 on a Monday is rare). */
const MAX_DAYS = 366 * 100;

const lastDayOfMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();

function nearestWeekday(year: number, month: number, target: number): number {
  const last = lastDayOfMonth(year, month);
  if (target < 1 || target > last) return -1;
  const weekday = new Date(Date.UTC(year, month - 1, target)).getUTCDay();
  if (weekday === 6) return target === 1 ? target + 2 : target - 1;
  if (weekday === 0) return target === last ? target - 2 : target + 1;
  return target;
}

function matchesDayOfMonth(tokens: readonly DayToken[], year: number, month: number, day: number): boolean {
  for (const token of tokens) {
    if (token === day) return true;
    if (typeof token !== 'string') continue;
    if (token === 'L' && day === lastDayOfMonth(year, month)) return true;
    const weekday = /^(\d{1,2}|L)W$/.exec(token);
    if (weekday) {
      const target = weekday[1] === 'L' ? lastDayOfMonth(year, month) : Number(weekday[1]);
      if (nearestWeekday(year, month, target) === day) return true;
    }
    const offset = /^L-(\d{1,2})$/.exec(token);
    if (offset && lastDayOfMonth(year, month) - Number(offset[1]) === day) return true;
  }
  return false;
}

function matchesDayOfWeek(tokens: readonly DayToken[], year: number, month: number, day: number): boolean {
  const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
  for (const token of tokens) {
    if (token === weekday) return true;
    if (typeof token !== 'string') continue;
    const nth = /^([0-7])#([1-5])$/.exec(token);
    if (nth) {
      if (Number(nth[1]) % 7 === weekday && Math.floor((day - 1) / 7) + 1 === Number(nth[2])) return true;
      continue;
    }
    const last = /^([0-7])L$/i.exec(token);
    if (last && Number(last[1]) % 7 === weekday && day + 7 > lastDayOfMonth(year, month)) return true;
  }
  return false;
}

/** Parses a cron expression (UTC); throws with node-cron's message when it is not valid. */
export function parseCron(expression: string): CronSchedule {
  let fields: ReturnType<typeof parse>;
  try {
    fields = parse(expression);
  } catch (error) {
    throw new Error(`not a valid cron expression ${JSON.stringify(expression)}: ${(error as Error).message}`, { cause: error });
  }
  const ascending = (values: readonly DayToken[]): number[] => [...new Set(values.filter((v): v is number => typeof v === 'number'))].sort((a, b) => a - b);
  const seconds = ascending(fields.second);
  const minutes = ascending(fields.minute);
  const hours = ascending(fields.hour);
  const months = new Set(fields.month);
  const daysOfMonth = fields.dayOfMonth;
  const daysOfWeek = fields.dayOfWeek;
  if (seconds.length === 0 || minutes.length === 0 || hours.length === 0) throw new Error(`cron expression ${JSON.stringify(expression)} never fires`);

  const dayMatches = (y: number, m: number, d: number): boolean =>
    months.has(m) && matchesDayOfMonth(daysOfMonth, y, m, d) && matchesDayOfWeek(daysOfWeek, y, m, d);

  /** Seconds into the day of the first fire time after `bound` (exclusive), or undefined. */
  const firstAfter = (bound: number): number | undefined => {
    for (const h of hours) {
      if ((h + 1) * 3600 <= bound) continue;
      for (const m of minutes) {
        if (h * 3600 + (m + 1) * 60 <= bound) continue;
        for (const s of seconds) {
          const t = h * 3600 + m * 60 + s;
          if (t > bound) return t;
        }
      }
    }
    return undefined;
  };
  /** Seconds into the day of the last fire time at or before `bound` (inclusive), or undefined. */
  const lastAtOrBefore = (bound: number): number | undefined => {
    for (let hi = hours.length - 1; hi >= 0; hi--) {
      const h = hours[hi] as number;
      if (h * 3600 > bound) continue;
      for (let mi = minutes.length - 1; mi >= 0; mi--) {
        const m = minutes[mi] as number;
        if (h * 3600 + m * 60 > bound) continue;
        for (let si = seconds.length - 1; si >= 0; si--) {
          const t = h * 3600 + m * 60 + (seconds[si] as number);
          if (t <= bound) return t;
        }
      }
    }
    return undefined;
  };

  return {
    expression,
    next(after: Date): Date {
      // Fire times fall on whole seconds: a fraction of a second after one is still "after" it.
      const start = Math.floor(after.getTime() / 1000) * 1000;
      const dayStart = Math.floor(start / DAY_MS) * DAY_MS;
      let bound = (start - dayStart) / 1000;
      for (let i = 0; i < MAX_DAYS; i++) {
        const day = new Date(dayStart + i * DAY_MS);
        if (dayMatches(day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate())) {
          const t = firstAfter(bound);
          if (t !== undefined) return new Date(day.getTime() + t * 1000);
        }
        bound = -1;
      }
      throw new Error(`cron expression ${JSON.stringify(expression)} does not fire within a century after ${after.toISOString()}`);
    },
    previous(at: Date): Date | undefined {
      const start = Math.floor(at.getTime() / 1000) * 1000;
      const dayStart = Math.floor(start / DAY_MS) * DAY_MS;
      let bound = (start - dayStart) / 1000;
      for (let i = 0; i < MAX_DAYS; i++) {
        const day = new Date(dayStart - i * DAY_MS);
        if (dayMatches(day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate())) {
          const t = lastAtOrBefore(bound);
          if (t !== undefined) return new Date(day.getTime() + t * 1000);
        }
        bound = 86_399;
      }
      return undefined;
    },
  };
}
