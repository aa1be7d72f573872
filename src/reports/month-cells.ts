/**
 * Month cells recomputed whole: the day cells of a month summed per (partner, affiliate, campaign),
 * with the month's distinct depositors, for a rebuild or an FX import (a load moves them by the
 * difference of its day cells instead: ./facts.ts). PostgreSQL sums NUMERIC exactly in one
 * statement; SQLite stores decimal text, summed here.
 */
import type { Knex } from 'knex';
import { lastDayOf } from '../kernel/dates.js';
import { money, ZERO, type Money } from '../kernel/money.js';
import { dialectOf } from '../store/dialect/index.js';
import { COUNT_COLUMNS, MONEY_COLUMNS } from './facts-columns.js';
import { pairKey, splitPair } from './facts-values.js';

const SUMMED_COUNTS = COUNT_COLUMNS.filter((c) => c !== 'depositors');

/** Recomputes every month cell of the partner's month. */
export async function recomputeMonth(trx: Knex.Transaction, partner: string, month: string): Promise<void> {
  const from = `${month}-01`;
  const to = lastDayOf(month);
  const dialect = dialectOf(trx);
  await trx('report_month_cells').where('partner_id', partner).where('month', month).delete();
  if (dialect.exactDecimals) {
    const depositors = trx('report_depositors').where('partner_id', partner).whereBetween('day', [from, to])
      .select('affiliate_id', 'campaign_id').countDistinct({ n: 'customer_id' }).groupBy('affiliate_id', 'campaign_id');
    const cells = trx('report_cells as c').where('c.partner_id', partner).whereBetween('c.day', [from, to])
      .leftJoin(depositors.as('d'), (j) => { j.on('d.affiliate_id', 'c.affiliate_id').andOn('d.campaign_id', 'c.campaign_id'); })
      .groupBy('c.affiliate_id', 'c.campaign_id', 'd.n')
      .select(trx.raw('? AS partner_id', [partner]), 'c.affiliate_id', 'c.campaign_id', trx.raw('? AS month', [month]), trx.raw('COALESCE(d.n, 0) AS depositors'),
        ...[...SUMMED_COUNTS, ...MONEY_COLUMNS].map((c) => trx.raw('SUM(??) AS ??', [`c.${c}`, c])));
    await trx.into(trx.raw('?? (??)', ['report_month_cells', ['partner_id', 'affiliate_id', 'campaign_id', 'month', 'depositors', ...SUMMED_COUNTS, ...MONEY_COLUMNS]])).insert(cells);
    return;
  }
  const rows: Record<string, unknown>[] = await trx('report_cells').where('partner_id', partner).whereBetween('day', [from, to])
    .select('affiliate_id', 'campaign_id', ...SUMMED_COUNTS, ...MONEY_COLUMNS);
  const counted: Record<string, unknown>[] = await trx('report_depositors').where('partner_id', partner).whereBetween('day', [from, to])
    .select('affiliate_id', 'campaign_id').countDistinct({ n: 'customer_id' }).groupBy('affiliate_id', 'campaign_id');
  const depositors = new Map(counted.map((r) => [pairKey(String(r.affiliate_id), String(r.campaign_id)), Number(r.n)]));
  const sums = new Map<string, { counts: Record<string, number>; money: Record<string, Money> }>();
  for (const r of rows) {
    const key = pairKey(String(r.affiliate_id), String(r.campaign_id));
    let s = sums.get(key);
    if (!s) sums.set(key, (s = { counts: Object.fromEntries(SUMMED_COUNTS.map((c) => [c, 0])), money: Object.fromEntries(MONEY_COLUMNS.map((c) => [c, ZERO])) }));
    for (const c of SUMMED_COUNTS) s.counts[c] = (s.counts[c] as number) + Number(r[c]);
    for (const c of MONEY_COLUMNS) s.money[c] = (s.money[c] as Money).plus(money(r[c]));
  }
  const inserts = [...sums].map(([key, s]) => {
    const [affiliate, campaign] = splitPair(key);
    return { partner_id: partner, affiliate_id: affiliate, campaign_id: campaign, month, depositors: depositors.get(key) ?? 0, ...s.counts,
      ...Object.fromEntries(MONEY_COLUMNS.map((c) => [c, (s.money[c] as Money).toFixed()])) };
  });
  for (const chunk of dialect.insertChunks(inserts)) await trx('report_month_cells').insert(chunk);
}
