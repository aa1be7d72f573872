/**
 * The source's own clock. A read's upper bound comes from it, not from ours: a replica's rows are
 * stamped by the primary's clock, and ours may run ahead of it (a row stamped "earlier" could then
 * still be committed after we had moved past it).
 */
import { SourceError } from '../source.js';
import { parseInstant, type Instant } from './datetime.js';
import type { SqlSession } from './session.js';

/** The source's current UTC time at microseconds (milliseconds on SQLite). */
export async function sourceNow(session: SqlSession, what: string): Promise<Instant> {
  const { rows } = await session.query(session.dialect.clockSql, {}, `${what}: reading the source clock`);
  const text = rows[0]?.now;
  const instant = typeof text === 'string' ? parseInstant(text, 'UTC') : undefined;
  if (instant === undefined) throw new SourceError(`${what}: the source clock returned ${JSON.stringify(text)}, not a date-time`);
  return instant;
}
