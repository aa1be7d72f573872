/**
 * Date-times between a source database and us, at the source's precision. Databases keep
 * microseconds; a JavaScript Date keeps milliseconds, so no value here passes through one: text is
 * split into whole seconds (exact in a double) and the fraction digits, which are carried as
 * written. Zone-less text (MySQL DATETIME, PostgreSQL `timestamp`) is read in the source's zone.
 */
import { DateTime, Info } from 'luxon';

/** An instant at microsecond precision: whole seconds since the epoch, and microseconds past them. */
export interface Instant {
  seconds: number;
  micros: number;
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?\s*([Zz]|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?$/;
const UTC_NAMES = new Set(['utc', 'etc/utc', 'gmt', 'etc/gmt', 'z', 'zulu', 'universal', 'etc/universal', '+00:00', '+00', '-00:00']);

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** Fraction digits as written ('' when none). */
  fraction: string;
  /** Offset east of UTC in seconds, when the text carries one. */
  offset?: number;
}

export function isUtcZone(zone: string): boolean {
  return UTC_NAMES.has(zone.trim().toLowerCase());
}

/** Whether luxon knows the zone (an IANA name such as Europe/Malta, or UTC). */
export function isKnownZone(zone: string): boolean {
  return isUtcZone(zone) || Info.normalizeZone(zone).isValid;
}

function parseParts(text: string): Parts | undefined {
  const m = DATE_TIME.exec(text.trim());
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s, fraction = '', zone] = m;
  const parts: Parts = { year: Number(y), month: Number(mo), day: Number(d), hour: Number(h), minute: Number(mi), second: Number(s), fraction };
  if (parts.month < 1 || parts.month > 12 || parts.day < 1 || parts.hour > 23 || parts.minute > 59 || parts.second > 60) return undefined;
  if (parts.day > new Date(Date.UTC(parts.year, parts.month, 0)).getUTCDate()) return undefined;
  if (zone !== undefined) {
    if (zone === 'Z' || zone === 'z') parts.offset = 0;
    else {
      const sign = zone.startsWith('-') ? -1 : 1;
      const [hh = '0', mm = '0', ss = '0'] = zone.slice(1).includes(':') ? zone.slice(1).split(':') : [zone.slice(1, 3), zone.slice(3, 5), zone.slice(5, 7)];
      parts.offset = sign * (Number(hh) * 3600 + Number(mm || '0') * 60 + Number(ss || '0'));
    }
  }
  return parts;
}

/** Whole seconds since the epoch of the parts; zone-less parts are read in `zone`. */
function epochSeconds(parts: Parts, zone: string): number | undefined {
  // A leap second (:60) is kept as :59 with its fraction, as the store does: monotonic enough for cursors.
  const second = Math.min(parts.second, 59);
  if (parts.offset !== undefined || isUtcZone(zone)) {
    const date = new Date(0);
    date.setUTCFullYear(parts.year, parts.month - 1, parts.day);
    date.setUTCHours(parts.hour, parts.minute, second, 0);
    return date.getTime() / 1000 - (parts.offset ?? 0);
  }
  const local = DateTime.fromObject({ year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute, second }, { zone });
  return local.isValid ? local.toSeconds() : undefined;
}

function isoSeconds(seconds: number): string {
  const date = new Date(seconds * 1000);
  const year = date.getUTCFullYear();
  if (year < 0 || year > 9999) return date.toISOString().slice(0, -5);
  return date.toISOString().slice(0, 19);
}

/**
 * A date-time as the source wrote it → ISO 8601 in UTC (`...Z`) with every fraction digit it
 * wrote, padded to six (PostgreSQL drops trailing zeros, MySQL writes as many as the column has):
 * a fixed width whose text order is time order, like the store's. Never rounded, never cut.
 * Undefined when the text is not a date-time (a MySQL zero date, PostgreSQL `infinity`): such a
 * value is passed on unchanged and validation reports it.
 */
export function sourceDateTimeToIso(text: string, zone: string): string | undefined {
  const parts = parseParts(text);
  if (parts === undefined) return undefined;
  const seconds = epochSeconds(parts, zone);
  if (seconds === undefined) return undefined;
  return `${isoSeconds(seconds)}.${parts.fraction.padEnd(6, '0')}Z`;
}

/** A date-time (ISO with an offset, or zone-less text read in `zone`) → an instant; digits past the sixth are cut. */
export function parseInstant(text: string, zone = 'UTC'): Instant | undefined {
  const parts = parseParts(text);
  if (parts === undefined) return undefined;
  const seconds = epochSeconds(parts, zone);
  if (seconds === undefined) return undefined;
  return { seconds, micros: Number((parts.fraction + '000000').slice(0, 6)) };
}

export function addMicros(instant: Instant, delta: number): Instant {
  const total = instant.micros + delta;
  const carry = Math.floor(total / 1_000_000);
  return { seconds: instant.seconds + carry, micros: total - carry * 1_000_000 };
}

export function compareInstants(a: Instant, b: Instant): number {
  return a.seconds !== b.seconds ? a.seconds - b.seconds : a.micros - b.micros;
}

/** `YYYY-MM-DDTHH:MM:SS.ffffffZ`: fixed width, so text order is time order. */
export function instantToIso(instant: Instant): string {
  return `${isoSeconds(instant.seconds)}.${String(instant.micros).padStart(6, '0')}Z`;
}

/**
 * How a bound is written for the source: zone-less `YYYY-MM-DD HH:MM:SS[.ffffff]` in the source's
 * zone (the session runs in that zone, so TIMESTAMP/timestamptz columns read it in the same zone
 * as DATETIME/timestamp ones). Trailing fraction zeros are dropped: MySQL and PostgreSQL parse
 * either way, and SQLite compares date-times as text, where `10:00:00` must not sort after a
 * stored `10:00:00` or before a stored `10:00:00.5`.
 */
export function instantToSourceText(instant: Instant, zone: string): string {
  const whole = isUtcZone(zone)
    ? isoSeconds(instant.seconds).replace('T', ' ')
    : DateTime.fromSeconds(instant.seconds, { zone }).toFormat('yyyy-MM-dd HH:mm:ss');
  const fraction = String(instant.micros).padStart(6, '0').replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}
