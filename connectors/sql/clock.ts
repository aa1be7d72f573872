/**
 * The source's own clock. A read's upper bound comes from it, not from ours: a replica's rows are
 * stamped by the primary's clock, and ours may run ahead of it (a row stamped "earlier" could then
 * still be committed after we had moved past it).
 *
 * It is also the evidence for a cursor column kept in another zone than `source.timezone`
 * declares: a change stamped by a correct clock is never ahead of the source's clock, so a newest
 * stamp that reads (in the declared zone) an hour or more ahead of it is local time of a zone
 * east of the declared one (`zoneEvidence`). A zone to the west reads in the past, which a quiet
 * table does too: that is not evidence, and is not reported.
 */
import { SourceError } from '../source.js';
import { formatOffset, instantToIso, parseInstant, zoneOffset, type Instant } from './datetime.js';
import type { SqlSession } from './session.js';

/** The source's current UTC time at microseconds (milliseconds on SQLite). */
export async function sourceNow(session: SqlSession, what: string): Promise<Instant> {
  const { rows } = await session.query(session.dialect.clockSql, {}, `${what}: reading the source clock`);
  const text = rows[0]?.now;
  const instant = typeof text === 'string' ? parseInstant(text, 'UTC') : undefined;
  if (instant === undefined) throw new SourceError(`${what}: the source clock returned ${JSON.stringify(text)}, not a date-time`);
  return instant;
}

/** How far ahead of the source's clock a stamp may be without counting as evidence (clock skew, a lag in replication). */
export const AHEAD_TOLERANCE_S = 600;

/** The widest zone offset (UTC+14): a stamp further ahead than it is not a zone. */
export const MAX_OFFSET_S = 14 * 3600;

/**
 * What a newest cursor stamp `newest` (read in `declared`) ahead of the source's clock `now` says
 * about the zone its column is written in; undefined when it is not ahead by more than the tolerance.
 */
export function zoneEvidence(newest: Instant, now: Instant, declared: string): string | undefined {
  const ahead = newest.seconds - now.seconds + (newest.micros - now.micros) / 1e6;
  if (ahead <= AHEAD_TOLERANCE_S) return undefined;
  const minutes = Math.round(ahead / 60);
  const by = `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
  const declaredOffset = zoneOffset(declared, newest.seconds);
  const read = `its newest value reads ${instantToIso(newest)} in ${declared} (UTC${formatOffset(declaredOffset)}), about ${by} ahead of the source's clock`;
  if (ahead > MAX_OFFSET_S + AHEAD_TOLERANCE_S) return `${read}: further ahead than any zone's offset, a stamp in the future rather than a zone`;
  const measured = declaredOffset + Math.round(ahead / 900) * 900;
  return `${read}: the column looks written in UTC${formatOffset(measured)}, not in ${declared}; set source.timezone to the zone it is written in`;
}
