/**
 * How many activity rows a partner holds for each of some days: the day's rows in its table plus
 * the records of that day parked for a customer that has not arrived. A day replacement compares
 * these before and after, inside its transaction, to tell a shrinking day (jobs/day-guard.ts).
 */
import type { Knex } from 'knex';
import type { Variant } from '../types.js';
import { entityTable } from './tables.js';
import { fromStoreDate } from './values.js';

export async function countDayRows(trx: Knex.Transaction, partner: string, variant: Variant, days: readonly string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>(days.map((d) => [d, 0]));
  if (days.length === 0) return counts;
  const rows = (await trx(entityTable(variant, 'activity').name)
    .where('partner_id', partner)
    .whereIn('date', [...days])
    .select('date')
    .count({ n: '*' })
    .groupBy('date')) as { date: unknown; n: number | string }[];
  for (const r of rows) {
    const day = fromStoreDate(r.date) as string;
    counts.set(day, (counts.get(day) ?? 0) + Number(r.n));
  }
  for (const day of days) {
    // Activity record keys are JSON arrays that start with the date: ["2026-11-01", ...].
    const [parked] = (await trx('waiting_records')
      .where({ partner_id: partner, entity: 'activity' })
      .where('record_key', 'like', `["${day}",%`)
      .count({ n: '*' })) as { n: number | string }[];
    counts.set(day, (counts.get(day) ?? 0) + Number(parked?.n ?? 0));
  }
  return counts;
}
