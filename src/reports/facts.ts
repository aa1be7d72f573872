/**
 * The report facts (docs/reports.md): each customer's first approved deposit, and sums per
 * (partner, affiliate, campaign, UTC day) and month that the affiliate report reads instead of raw rows.
 *
 * The rule they keep: a fact table equals what the raw tables say, at every commit. A load moves
 * them by difference in its transaction (./incremental.ts); a full rebuild computes them from the
 * raw tables (this module: per day on SQLite, set-based SQL on PostgreSQL: ./rebuild-sql.ts) and is
 * the reference the incremental path must equal; an FX import recomputes the days of its rates.
 */
import type { Knex } from 'knex';
import { addDays } from '../kernel/dates.js';
import type { Store } from '../store/store.js';
import type { Variant } from '../types.js';
import { recomputeFtd } from './ftd.js';
import { rebuildFactsSql } from './rebuild-sql.js';
import { recomputeDay, recomputeMonths } from './recompute-day.js';

/**
 * Rebuilds a partner's facts from the raw tables (after a bulk load that bypassed the Loader, or
 * to check the incremental facts): every FTD, then every day that has data. Returns cells written.
 */
export async function rebuildFacts(store: Store, partner: string, variant: Variant, options: { pageSize?: number; onProgress?: (what: string) => void } = {}): Promise<number> {
  // Set-based SQL where the store sums money exactly (PostgreSQL's NUMERIC), else day by day here.
  if (store.dialect.exactDecimals) return rebuildFactsSql(store.knex, partner, variant);
  const knex = store.knex;
  const pageSize = options.pageSize ?? 5000;
  await knex.transaction(async (trx) => {
    for (const table of ['report_ftd', 'report_cells', 'report_month_cells', 'report_purchase_cells', 'report_depositors']) await trx(table).where('partner_id', partner).delete();
  });
  let after = '';
  for (;;) {
    const ids: string[] = (await knex('customers').where('partner_id', partner).where('customer_id', '>', after).orderBy('customer_id').limit(pageSize).pluck('customer_id')).map(String);
    if (ids.length === 0) break;
    await knex.transaction(async (trx) => { await recomputeFtd(trx, partner, ids); });
    after = ids[ids.length - 1] as string;
    options.onProgress?.(`ftd through customer ${after}`);
  }
  const days = new Set<string>();
  const signups: Record<string, unknown>[] = await knex('customers').where('partner_id', partner).min({ lo: 'signup_date' }).max({ hi: 'signup_date' });
  const txs: Record<string, unknown>[] = await knex('transactions').where('partner_id', partner).min({ lo: 'transaction_date' }).max({ hi: 'transaction_date' });
  const acts: Record<string, unknown>[] = variant === 'igaming' ? await knex('gaming_activity').where('partner_id', partner).min({ lo: 'date' }).max({ hi: 'date' }) : [];
  for (const r of [...signups, ...txs, ...acts]) {
    if (r.lo === null || r.lo === undefined) continue;
    // Timestamps read in UTC (SQLite text, PostgreSQL sessions in UTC) and dates both start with their day.
    const lo = String(r.lo).slice(0, 10);
    const hi = String(r.hi).slice(0, 10);
    for (let d = lo; d <= hi; d = addDays(d, 1)) days.add(d);
  }
  let cells = 0;
  for (const day of [...days].sort()) {
    cells += await knex.transaction((trx) => recomputeDay(trx, partner, variant, day));
    options.onProgress?.(`day ${day}`);
  }
  await knex.transaction((trx) => recomputeMonths(trx, partner, [...days].map((d) => d.slice(0, 7))));
  return cells;
}

/**
 * After an FX import: the facts of every day a saved rate covers are recomputed (amounts that
 * waited for the rate convert; a changed rate moves what used it), in the import's transaction.
 */
export async function refreshFactsForRates(trx: Knex.Transaction, rates: readonly { currency: string; date: string }[]): Promise<void> {
  if (rates.length === 0) return;
  const byDay = new Map<string, Set<string>>();
  for (const r of rates) {
    let s = byDay.get(r.date);
    if (!s) byDay.set(r.date, (s = new Set()));
    s.add(r.currency);
  }
  const partners: { partner_id: string; variant: Variant }[] = await trx('partners').select('partner_id', 'variant');
  for (const { partner_id: partner, variant } of partners) {
    for (const [day, currencies] of byDay) {
      const ftd: string[] = (await trx('report_ftd').where('partner_id', partner).where('day', day).whereIn('currency', [...currencies]).pluck('customer_id')).map(String);
      if (ftd.length > 0) await recomputeFtd(trx, partner, ftd);
      await recomputeDay(trx, partner, variant, day);
    }
    await recomputeMonths(trx, partner, [...byDay.keys()].map((d) => d.slice(0, 7)));
  }
}
