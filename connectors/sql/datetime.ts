/**
 * Date-times between a source database and us, at the source's precision. Databases keep
 * microseconds; a JavaScript Date keeps milliseconds, so no value here passes through one: text is
 * split into whole seconds (exact in a double) and the fraction digits, which are carried as
 * written. Zone-less text (MySQL DATETIME, PostgreSQL `timestamp`) is read in the source's zone
 * here, with luxon's zone data: the database session runs in UTC and is never asked to convert
 * (a replica usually lacks the server's time-zone tables).
 *
 * A local wall time around a DST change is read so that reading stays monotonic in the text
 * (what keyset bounds rely on), the same way on every database:
 * - a wall time that occurs twice (the repeated hour when clocks go back) is the later
 *   occurrence, standard time, the offset after the change (PostgreSQL's own rule);
 * - a wall time that does not exist (the hour skipped when clocks go forward; a correct clock
 *   never writes one) is the instant of the change.
 * A bound sent to the source is the smallest wall time whose reading is at or after the bound's
 * instant (`instantToSourceText`), so that `c >= :from AND c < :to` on the text selects exactly
 * the rows whose reading lies in [from, to).
 */
import { DateTime, Info, type Zone } from 'luxon';

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

/**
 * Whole seconds since the epoch of the parts; zone-less parts are read in `zone`. `skipped`: a
 * wall time the zone skips, read as the instant of the change (its fraction then dropped too).
 */
function epochSeconds(parts: Parts, zone: string): { seconds: number; skipped: boolean } | undefined {
  // A leap second (:60) is kept as :59 with its fraction, as the store does: monotonic enough for cursors.
  const second = Math.min(parts.second, 59);
  // Years below 100 too: setUTCFullYear does not map them to 19xx as Date.UTC does.
  const date = new Date(0);
  date.setUTCFullYear(parts.year, parts.month - 1, parts.day);
  date.setUTCHours(parts.hour, parts.minute, second, 0);
  const wall = date.getTime() / 1000;
  if (parts.offset !== undefined || isUtcZone(zone)) return { seconds: wall - (parts.offset ?? 0), skipped: false };
  return localWallToSeconds(wall, zone);
}

const zones = new Map<string, Zone>();

function zoneOf(name: string): Zone {
  let zone = zones.get(name);
  if (zone === undefined) {
    zone = Info.normalizeZone(name);
    zones.set(name, zone);
  }
  return zone;
}

/** The zone's offset east of UTC at an instant, in seconds. */
function offsetAt(zone: Zone, seconds: number): number {
  return zone.offset(seconds * 1000) * 60;
}

/** The first whole second in (lo, hi] whose offset differs from the offset at lo (one change in between). */
function changeAfter(zone: Zone, lo: number, hi: number): number {
  const before = offsetAt(zone, lo);
  let a = lo;
  let b = hi;
  while (b - a > 1) {
    const mid = Math.floor((a + b) / 2);
    if (offsetAt(zone, mid) === before) a = mid;
    else b = mid;
  }
  return b;
}

/**
 * A wall time (whole seconds of the wall clock counted as if it were UTC) in `zone` → whole
 * seconds since the epoch: the later occurrence of a repeated wall time, the instant of the
 * change for a skipped one.
 */
function localWallToSeconds(wall: number, name: string): { seconds: number; skipped: boolean } | undefined {
  const zone = zoneOf(name);
  if (!zone.isValid || !Number.isFinite(wall)) return undefined;
  // Offsets span at most a day: the ones in force a day either side are the candidates.
  const candidates = new Set([offsetAt(zone, wall - 86_400), offsetAt(zone, wall), offsetAt(zone, wall + 86_400)]);
  let best: number | undefined;
  for (const offset of candidates) {
    const instant = wall - offset;
    if (offsetAt(zone, instant) === offset && (best === undefined || instant > best)) best = instant;
  }
  if (best !== undefined) return { seconds: best, skipped: false };
  // Skipped: between the readings with the offset before and after the change lies the change.
  const readings = [...candidates].map((offset) => wall - offset).sort((x, y) => x - y);
  return { seconds: changeAfter(zone, readings[0] as number, readings.at(-1) as number), skipped: true };
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
  const read = epochSeconds(parts, zone);
  if (read === undefined) return undefined;
  return `${isoSeconds(read.seconds)}.${read.skipped ? '000000' : parts.fraction.padEnd(6, '0')}Z`;
}

/** A date-time (ISO with an offset, or zone-less text read in `zone`) → an instant; digits past the sixth are cut. */
export function parseInstant(text: string, zone = 'UTC'): Instant | undefined {
  const parts = parseParts(text);
  if (parts === undefined) return undefined;
  const read = epochSeconds(parts, zone);
  if (read === undefined) return undefined;
  return { seconds: read.seconds, micros: read.skipped ? 0 : Number((parts.fraction + '000000').slice(0, 6)) };
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
  if (isUtcZone(zone)) return withFraction(isoSeconds(instant.seconds).replace('T', ' '), instant.micros);
  const wallText = (seconds: number) => DateTime.fromSeconds(seconds, { zone }).toFormat('yyyy-MM-dd HH:mm:ss');
  const whole = wallText(instant.seconds);
  const read = parseInstant(whole, zone);
  // The wall time of an instant in the first pass of a repeated hour reads as the second pass:
  // the smallest wall time reading at or after the instant is then the start of the repeated hour.
  if (read !== undefined && read.seconds > instant.seconds) return wallText(changeAfter(zoneOf(zone), instant.seconds, read.seconds));
  // At the instant clocks go forward, the skipped wall times (read as this instant) come first.
  const before = offsetAt(zoneOf(zone), instant.seconds - 1);
  if (instant.micros === 0 && offsetAt(zoneOf(zone), instant.seconds) > before) return isoSeconds(instant.seconds + before).replace('T', ' ');
  return withFraction(whole, instant.micros);
}

function withFraction(whole: string, micros: number): string {
  const fraction = String(micros).padStart(6, '0').replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

/** The zone's offset east of UTC at an instant (epoch seconds), in seconds. */
export function zoneOffset(zone: string, seconds: number): number {
  return isUtcZone(zone) ? 0 : offsetAt(zoneOf(zone), seconds);
}

export function formatOffset(offset: number): string {
  const abs = Math.abs(offset);
  return `${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 3600)).padStart(2, '0')}:${String(Math.floor((abs % 3600) / 60)).padStart(2, '0')}`;
}
