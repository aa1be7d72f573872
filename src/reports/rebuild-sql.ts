/**
 * The report facts of a whole partner rebuilt in a few set-based statements, on PostgreSQL, whose
 * NUMERIC sums are exact: what a store filled without the Loader (a bulk import, the benchmark)
 * needs once. It computes the same figures as the per-day rebuild of ./facts.ts (the agreement
 * test compares the two); SQLite, whose SQL sums decimal text as floating point, uses that one.
 */
import type { Knex } from 'knex';
import { COUNT_COLUMNS, MONEY_COLUMNS, REPORT_TX_TYPES } from './facts-columns.js';

const USD = "COALESCE(t.amount_usd, t.amount_currency * (CASE WHEN t.currency = 'USD' THEN 1 ELSE r.rate END))";
const TX_DAY = "(t.transaction_date AT TIME ZONE 'UTC')::date";
const TX_FROM = `FROM transactions t JOIN customers c ON c.partner_id = t.partner_id AND c.customer_id = t.customer_id
  LEFT JOIN fx_rates r ON r.currency = t.currency AND r.date = ${TX_DAY}`;

/** One source's columns as a SELECT list: the given expressions, 0 for every other column. */
function columns(given: Record<string, string>): string {
  return [...COUNT_COLUMNS, ...MONEY_COLUMNS].map((c) => `${given[c] ?? '0'} AS ${c}`).join(', ');
}

const sumOf = (type: string) => `COALESCE(SUM(CASE WHEN t.transaction_type = '${type}' THEN ${USD} END), 0)`;

export async function rebuildFactsSql(knex: Knex, partner: string, variant: string): Promise<number> {
  const TYPES = REPORT_TX_TYPES.map((t) => `'${t}'`).join(', ');
  return knex.transaction(async (trx) => {
    for (const table of ['report_ftd', 'report_cells', 'report_month_cells', 'report_purchase_cells', 'report_depositors']) await trx(table).where('partner_id', partner).delete();
    await trx.raw(`INSERT INTO report_ftd (partner_id, customer_id, transaction_id, transaction_date, day, amount_currency, currency, amount_usd)
      SELECT DISTINCT ON (t.customer_id) t.partner_id, t.customer_id, t.transaction_id, t.transaction_date, ${TX_DAY}, t.amount_currency, t.currency, ${USD}
      FROM transactions t LEFT JOIN fx_rates r ON r.currency = t.currency AND r.date = ${TX_DAY}
      WHERE t.partner_id = ? AND t.transaction_type = 'deposit' AND t.status = 'approved'
      ORDER BY t.customer_id, t.transaction_date, t.transaction_id COLLATE "C"`, [partner]);
    const sources = [
      `SELECT affiliate_id AS aff, COALESCE(campaign_id, '') AS camp, (signup_date AT TIME ZONE 'UTC')::date AS day, ${columns({ registrations: 'COUNT(*)' })}
        FROM customers WHERE partner_id = :partner GROUP BY 1, 2, 3`,
      `SELECT c.affiliate_id, COALESCE(c.campaign_id, ''), ${TX_DAY}, ${columns({
        depositors: "COUNT(DISTINCT CASE WHEN t.transaction_type = 'deposit' THEN t.customer_id END)",
        deposit_count: "COUNT(CASE WHEN t.transaction_type = 'deposit' THEN 1 END)",
        challenge_purchases: "COUNT(CASE WHEN t.transaction_type = 'challenge_fee' THEN 1 END)",
        unconverted_tx: `SUM(CASE WHEN ${USD} IS NULL THEN 1 ELSE 0 END)`,
        deposits_usd: sumOf('deposit'), withdrawals_usd: sumOf('withdrawal'), bonuses_usd: sumOf('bonus'), challenge_fees_usd: sumOf('challenge_fee'),
        reset_fees_usd: sumOf('reset_fee'), refunds_usd: sumOf('refund'), payouts_usd: sumOf('payout'),
      })} ${TX_FROM} WHERE t.partner_id = :partner AND t.status = 'approved' AND t.transaction_type IN (${TYPES}) GROUP BY 1, 2, 3`,
      `SELECT c.affiliate_id, COALESCE(c.campaign_id, ''), f.day, ${columns({
        ftd_count: 'COUNT(*)', unconverted_ftd: 'SUM(CASE WHEN f.amount_usd IS NULL THEN 1 ELSE 0 END)', ftd_usd: 'COALESCE(SUM(f.amount_usd), 0)',
      })} FROM report_ftd f JOIN customers c ON c.partner_id = f.partner_id AND c.customer_id = f.customer_id WHERE f.partner_id = :partner GROUP BY 1, 2, 3`,
    ];
    if (variant === 'igaming') {
      const rate = "(CASE WHEN a.currency = 'USD' THEN 1 ELSE r.rate END)";
      sources.push(`SELECT c.affiliate_id, COALESCE(c.campaign_id, ''), a.date, ${columns({
        unconverted_activity: `SUM(CASE WHEN ${rate} IS NULL THEN 1 ELSE 0 END)`,
        bets_usd: `COALESCE(SUM(COALESCE(a.total_bets, 0) * ${rate}), 0)`,
        ggr_usd: `COALESCE(SUM(COALESCE(a.ggr, a.total_bets - a.wins, 0) * ${rate}), 0)`,
        ngr_usd: `COALESCE(SUM(COALESCE(a.ngr, 0) * ${rate}), 0)`,
      })} FROM gaming_activity a JOIN customers c ON c.partner_id = a.partner_id AND c.customer_id = a.customer_id
        LEFT JOIN fx_rates r ON r.currency = a.currency AND r.date = a.date WHERE a.partner_id = :partner GROUP BY 1, 2, 3`);
    }
    const all = [...COUNT_COLUMNS, ...MONEY_COLUMNS];
    // A cell whose every figure is zero is not kept (as in the per-day rebuild).
    const nonZero = all.map((c) => `SUM(${c}) <> 0`).join(' OR ');
    const cellsSql = `INSERT INTO report_cells (partner_id, affiliate_id, campaign_id, day, ${all.join(', ')})
      SELECT :partner, aff, camp, day, ${all.map((c) => `SUM(${c})`).join(', ')} FROM (${sources.join(' UNION ALL ')}) s
      GROUP BY aff, camp, day HAVING ${nonZero}`.replace(/:partner/g, '?');
    const result = await trx.raw(cellsSql, Array.from({ length: cellsSql.split('?').length - 1 }, () => partner));
    await trx.raw(`INSERT INTO report_purchase_cells (partner_id, affiliate_id, campaign_id, day, challenge_type, account_size, purchases, fees_usd, unconverted)
      SELECT t.partner_id, c.affiliate_id, COALESCE(c.campaign_id, ''), ${TX_DAY}, COALESCE(c.challenge_type, ''), COALESCE(trim_scale(c.account_size)::text, ''),
        COUNT(*), COALESCE(SUM(${USD}), 0), SUM(CASE WHEN ${USD} IS NULL THEN 1 ELSE 0 END)
      ${TX_FROM} WHERE t.partner_id = ? AND t.status = 'approved' AND t.transaction_type = 'challenge_fee' GROUP BY 1, 2, 3, 4, 5, 6`, [partner]);
    await trx.raw(`INSERT INTO report_depositors (partner_id, day, customer_id, affiliate_id, campaign_id)
      SELECT DISTINCT t.partner_id, ${TX_DAY}, t.customer_id, c.affiliate_id, COALESCE(c.campaign_id, '')
      ${TX_FROM} WHERE t.partner_id = ? AND t.status = 'approved' AND t.transaction_type = 'deposit'`, [partner]);
    const summed = [...COUNT_COLUMNS, ...MONEY_COLUMNS].filter((c) => c !== 'depositors');
    // Both sides of the month join are aggregates whose row counts the planner cannot estimate; it
    // guesses a few hundred and picks a nested loop, which at a million day cells runs for hours.
    // Hash joins only, for the rest of this transaction.
    await trx.raw('SET LOCAL enable_nestloop = off');
    await trx.raw(`INSERT INTO report_month_cells (partner_id, affiliate_id, campaign_id, month, depositors, ${summed.join(', ')})
      SELECT c.partner_id, c.affiliate_id, c.campaign_id, to_char(c.day, 'YYYY-MM'), COALESCE(d.n, 0), ${summed.map((x) => `SUM(c.${x})`).join(', ')}
      FROM report_cells c LEFT JOIN (SELECT affiliate_id, campaign_id, to_char(day, 'YYYY-MM') AS month, COUNT(DISTINCT customer_id) AS n FROM report_depositors
        WHERE partner_id = ? GROUP BY 1, 2, 3) d ON d.affiliate_id = c.affiliate_id AND d.campaign_id = c.campaign_id AND d.month = to_char(c.day, 'YYYY-MM')
      WHERE c.partner_id = ? GROUP BY c.partner_id, c.affiliate_id, c.campaign_id, to_char(c.day, 'YYYY-MM'), d.n`, [partner, partner]);
    return Number((result as { rowCount?: number }).rowCount ?? 0);
  });
}
