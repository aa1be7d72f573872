/**
 * Date-times on the wire and in the store: any ISO 8601 / RFC 3339 date-time with an offset becomes
 * one fixed-width UTC text, so text order is time order in both stores and every module that
 * compares or buckets times (days, months, windows) agrees on the instant.
 */

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?\s*([Zz]|[+-]\d{2}(?::?\d{2})?)$/;

/**
 * ISO 8601 / RFC 3339 date-time with offset → `YYYY-MM-DDTHH:MM:SS.ffffffZ` in UTC.
 *
 * A leap second (`23:59:60`, RFC 3339 allows it) becomes `23:59:59.999999` of the same UTC day in
 * both stores: PostgreSQL would read `:60` as the next day's 00:00:00 and SQLite would keep the
 * text, so the stores would disagree on the day; the last microsecond of the day keeps the record
 * in the day it was sent for and after every other second of it. Years outside 0001–9999 in UTC
 * cannot be stored (the validator refuses them first) and throw.
 */
export function toUtcTimestamp(value: string): string {
  // UTC values (what the store keeps and returns, what most partners send) without the
  // expression's match: a month's import and settle matched some 500 MB of garbage.
  const utc = plainUtc(value);
  if (utc !== undefined) return utc;
  const m = DATE_TIME.exec(value);
  if (!m) throw new Error(`not an ISO 8601 date-time with time zone: ${JSON.stringify(value)}`);
  const [, y, mo, d, h, mi, s, frac = '', zone = 'Z'] = m;
  const leap = s === '60';
  const fraction = leap ? '999999' : (frac + '000000').slice(0, 6);
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    offsetMinutes = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0'));
  }
  if (offsetMinutes === 0 && y !== '0000') {
    return `${y}-${mo}-${d}T${h}:${mi}:${leap ? '59' : s}.${fraction}Z`;
  }
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0–99 as 1900–1999.
  const at = new Date(0);
  at.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  at.setUTCHours(Number(h), Number(mi) - offsetMinutes, leap ? 59 : Number(s), 0);
  const year = at.getUTCFullYear();
  if (!(year >= 1 && year <= 9999)) {
    throw new Error(`date-time outside the years 0001–9999 in UTC (year ${year}): ${JSON.stringify(value)}`);
  }
  return `${at.toISOString().slice(0, 19)}.${fraction}Z`;
}

/**
 * `YYYY-MM-DD(T| )HH:MM:SS[.f...](Z|+00|+00:00)`, a year other than 0000 and no leap second: the
 * UTC text, its fraction cut or padded to six digits (the value itself when it is that already);
 * undefined for anything else (the expression decides).
 */
function plainUtc(value: string): string | undefined {
  const n = value.length;
  if (n < 20) return undefined;
  for (let i = 0; i < 19; i += 1) {
    const c = value.charCodeAt(i);
    if (i === 4 || i === 7) { if (c !== 45) return undefined; }
    else if (i === 13 || i === 16) { if (c !== 58) return undefined; }
    else if (i === 10) { if (c !== 84 && c !== 116 && c !== 32) return undefined; }
    else if (c < 48 || c > 57) return undefined;
  }
  if (value.startsWith('0000') || (value.charCodeAt(17) === 54 && value.charCodeAt(18) === 48)) return undefined;
  let zone: number;
  if (value.charCodeAt(n - 1) === 90 || value.charCodeAt(n - 1) === 122) zone = n - 1;
  else if (value.endsWith('+00')) zone = n - 3;
  else if (value.endsWith('+00:00')) zone = n - 6;
  else return undefined;
  let fraction = '';
  if (zone > 19) {
    const sep = value.charCodeAt(19);
    if ((sep !== 46 && sep !== 44) || zone === 20) return undefined;
    for (let i = 20; i < zone; i += 1) {
      const c = value.charCodeAt(i);
      if (c < 48 || c > 57) return undefined;
    }
    if (n === 27 && zone === 26 && sep === 46 && value.charCodeAt(10) === 84 && value.charCodeAt(26) === 90) return value;
    fraction = value.slice(20, Math.min(zone, 26));
  } else if (zone !== 19) return undefined;
  return `${value.slice(0, 10)}T${value.slice(11, 19)}.${fraction.padEnd(6, '0')}Z`;
}
