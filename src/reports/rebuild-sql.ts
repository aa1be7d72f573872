/**
 * The report facts computed in a few set-based statements, on PostgreSQL, whose NUMERIC sums are
 * exact: a whole partner (`rebuildFactsSql`: a store filled without the Loader, the benchmark) or
 * the days a bulk run's group touched (`recomputeDaysSql`, ./deferred.ts). They compute the same
 * figures as the per-day recomputation of ./recompute-day.ts (the agreement tests compare them);
 * SQLite, whose SQL sums decimal text as floating point, uses that one.
 */
import type { Knex } from 'knex';
import { addDays, lastDayOf } from '../kernel/dates.js';
import { COUNT_COLUMNS, MONEY_COLUMNS, REPORT_TX_TYPES } from './facts-columns.js';

const USD = "COALESCE(t.amount_usd, t.amount_currency * (CASE WHEN t.currency = 'USD' THEN 1 ELSE r.rate END))";
const TX_DAY = "(t.transaction_date AT TIME ZONE 'UTC')::date";
const TX_FROM = `FROM transactions t JOIN customers c ON c.partner_id = t.partner_id AND c.customer_id = t.customer_id
  LEFT JOIN fx_rates r ON r.currency = t.currency AND r.date = ${TX_DAY}`;
const FACT_TABLES = ['report_ftd', 'report_cells', 'report_month_cells', 'report_purchase_cells', 'report_depositors'] as const;
const DAY_TABLES = ['report_cells', 'report_purchase_cells', 'report_depositors'] as const;

/** One source's columns as a SELECT list: the given expressions, 0 for every other column. */
function columns(given: Record<string, string>): string {
  return [...COUNT_COLUMNS, ...MONEY_COLUMNS].map((c) => `${given[c] ?? '0'} AS ${c}`).join(', ');
}

const sumOf = (type: string) => `COALESCE(SUM(CASE WHEN t.transaction_type = '${type}' THEN ${USD} END), 0)`;

/** A SQL condition and its bindings. */
interface Condition {
  sql: string;
  bindings: Knex.RawBinding[];
}

/**
 * The days a statement reads: all (no scope), or these UTC days. A timestamp column is bounded by
 * the first and last day's instants (so an index on it narrows the read) and its UTC day must be
 * one of them; a date column the same with dates.
 */
class DayScope {
  private constructor(readonly days: string[] | null) {}

  static all(): DayScope {
    return new DayScope(null);
  }

  static of(days: Iterable<string>): DayScope {
    return new DayScope([...new Set(days)].sort());
  }

  get months(): string[] | null {
    return this.days === null ? null : [...new Set(this.days.map((d) => d.slice(0, 7)))];
  }

  /** `column` a timestamptz whose UTC day is `dayExpression`. */
  instants(column: string, dayExpression: string): Condition {
    if (this.days === null) return { sql: '', bindings: [] };
    const first = this.days[0] as string;
    const last = this.days[this.days.length - 1] as string;
    return {
      sql: ` AND ${column} >= ?::timestamptz AND ${column} < ?::timestamptz AND ${dayExpression} = ANY(?::date[])`,
      bindings: [`${first}T00:00:00Z`, `${addDays(last, 1)}T00:00:00Z`, this.days],
    };
  }

  /** `column` a date. */
  dates(column: string): Condition {
    if (this.days === null) return { sql: '', bindings: [] };
    return {
      sql: ` AND ${column} >= ?::date AND ${column} <= ?::date AND ${column} = ANY(?::date[])`,
      bindings: [this.days[0] as string, this.days[this.days.length - 1] as string, this.days],
    };
  }

  /** `column` a date whose month is one of the scope's. */
  monthsOf(column: string): Condition {
    const months = this.months;
    if (months === null) return { sql: '', bindings: [] };
    const sorted = [...months].sort();
    return {
      sql: ` AND ${column} >= ?::date AND ${column} <= ?::date AND to_char(${column}, 'YYYY-MM') = ANY(?::text[])`,
      bindings: [`${sorted[0] as string}-01`, lastDayOf(sorted[sorted.length - 1] as string), sorted],
    };
  }
}

/** Memory for the statements' sorts and hashes, for the rest of the transaction (writeDays resets it). */
const ROOM = "SET LOCAL work_mem = '64MB'";

/** Rebuilds a partner's facts from the raw tables. Returns the day cells written. */
export async function rebuildFactsSql(knex: Knex, partner: string, variant: string): Promise<number> {
  return knex.transaction(async (trx) => {
    for (const table of FACT_TABLES) await trx(table).where('partner_id', partner).delete();
    await trx.raw(ROOM);
    await insertFtd(trx, partner, null);
    return writeDays(trx, partner, variant, DayScope.all());
  });
}

/**
 * Recomputes, in the caller's transaction, the FTD of these customers and then every cell of these
 * UTC days (and of the days their FTD moved from or to) and the month cells of their months.
 * Returns the day cells written.
 */
export async function recomputeDaysSql(trx: Knex.Transaction, partner: string, variant: string, days: ReadonlySet<string>, ftdCustomers: readonly string[]): Promise<number> {
  const all = new Set(days);
  // Room for a month's sorts and hashes in memory: at the default work_mem a month's first
  // deposits, transactions and activity rows were sorted on disk to be grouped into cells
  // (bench/README.md, the whole pipeline). Reset at the end of writeDays.
  await trx.raw(ROOM);
  if (ftdCustomers.length > 0) {
    const before = await trx.raw('DELETE FROM report_ftd WHERE partner_id = ? AND customer_id = ANY(?::text[]) RETURNING day::text AS day', [partner, [...ftdCustomers]]);
    for (const r of (before as { rows: { day: string }[] }).rows) all.add(r.day.slice(0, 10));
    for (const day of await insertFtd(trx, partner, ftdCustomers)) all.add(day);
  }
  if (all.size === 0) {
    await trx.raw('SET LOCAL work_mem = DEFAULT');
    return 0;
  }
  const scope = DayScope.of(all);
  for (const table of DAY_TABLES) await trx.raw(`DELETE FROM ${table} WHERE partner_id = ? AND day = ANY(?::date[])`, [partner, scope.days]);
  await trx.raw('DELETE FROM report_month_cells WHERE partner_id = ? AND month = ANY(?::text[])', [partner, scope.months]);
  return writeDays(trx, partner, variant, scope);
}

/** Each customer's first approved deposit (of these customers, or all); returns the UTC days written. */
async function insertFtd(trx: Knex.Transaction, partner: string, customers: readonly string[] | null): Promise<string[]> {
  const result = await trx.raw(`INSERT INTO report_ftd (partner_id, customer_id, transaction_id, transaction_date, day, amount_currency, currency, amount_usd)
    SELECT DISTINCT ON (t.customer_id) t.partner_id, t.customer_id, t.transaction_id, t.transaction_date, ${TX_DAY}, t.amount_currency, t.currency, ${USD}
    FROM transactions t LEFT JOIN fx_rates r ON r.currency = t.currency AND r.date = ${TX_DAY}
    WHERE t.partner_id = ? AND t.transaction_type = 'deposit' AND t.status = 'approved'${customers === null ? '' : ' AND t.customer_id = ANY(?::text[])'}
    ORDER BY t.customer_id, t.transaction_date, t.transaction_id COLLATE "C"${customers === null ? '' : ' RETURNING day::text AS day'}`,
  customers === null ? [partner] : [partner, [...customers]]);
  return customers === null ? [] : [...new Set((result as { rows: { day: string }[] }).rows.map((r) => r.day.slice(0, 10)))];
}

/** Writes the day cells, purchase cells and depositor days of the scope's days, then the month cells of its months (all deleted before). */
async function writeDays(trx: Knex.Transaction, partner: string, variant: string, scope: DayScope): Promise<number> {
  const TYPES = REPORT_TX_TYPES.map((t) => `'${t}'`).join(', ');
  const signups = scope.instants('signup_date', "(signup_date AT TIME ZONE 'UTC')::date");
  const txs = scope.instants('t.transaction_date', TX_DAY);
  const ftds = scope.dates('f.day');
  const sources: Condition[] = [
    { sql: `SELECT affiliate_id AS aff, COALESCE(campaign_id, '') AS camp, (signup_date AT TIME ZONE 'UTC')::date AS day, ${columns({ registrations: 'COUNT(*)' })}
        FROM customers WHERE partner_id = ?${signups.sql} GROUP BY 1, 2, 3`, bindings: [partner, ...signups.bindings] },
    { sql: `SELECT c.affiliate_id, COALESCE(c.campaign_id, ''), ${TX_DAY}, ${columns({
      depositors: "COUNT(DISTINCT CASE WHEN t.transaction_type = 'deposit' THEN t.customer_id END)",
      deposit_count: "COUNT(CASE WHEN t.transaction_type = 'deposit' THEN 1 END)",
      challenge_purchases: "COUNT(CASE WHEN t.transaction_type = 'challenge_fee' THEN 1 END)",
      unconverted_tx: `SUM(CASE WHEN ${USD} IS NULL THEN 1 ELSE 0 END)`,
      deposits_usd: sumOf('deposit'), withdrawals_usd: sumOf('withdrawal'), bonuses_usd: sumOf('bonus'), challenge_fees_usd: sumOf('challenge_fee'),
      reset_fees_usd: sumOf('reset_fee'), refunds_usd: sumOf('refund'), payouts_usd: sumOf('payout'),
    })} ${TX_FROM} WHERE t.partner_id = ? AND t.status = 'approved' AND t.transaction_type IN (${TYPES})${txs.sql} GROUP BY 1, 2, 3`, bindings: [partner, ...txs.bindings] },
    { sql: `SELECT c.affiliate_id, COALESCE(c.campaign_id, ''), f.day, ${columns({
      ftd_count: 'COUNT(*)', unconverted_ftd: 'SUM(CASE WHEN f.amount_usd IS NULL THEN 1 ELSE 0 END)', ftd_usd: 'COALESCE(SUM(f.amount_usd), 0)',
    })} FROM report_ftd f JOIN customers c ON c.partner_id = f.partner_id AND c.customer_id = f.customer_id WHERE f.partner_id = ?${ftds.sql} GROUP BY 1, 2, 3`, bindings: [partner, ...ftds.bindings] },
  ];
  if (variant === 'igaming') {
    const rate = "(CASE WHEN a.currency = 'USD' THEN 1 ELSE r.rate END)";
    const acts = scope.dates('a.date');
    sources.push({ sql: `SELECT c.affiliate_id, COALESCE(c.campaign_id, ''), a.date, ${columns({
      unconverted_activity: `SUM(CASE WHEN ${rate} IS NULL THEN 1 ELSE 0 END)`,
      bets_usd: `COALESCE(SUM(COALESCE(a.total_bets, 0) * ${rate}), 0)`,
      ggr_usd: `COALESCE(SUM(COALESCE(a.ggr, a.total_bets - a.wins, 0) * ${rate}), 0)`,
      ngr_usd: `COALESCE(SUM(COALESCE(a.ngr, 0) * ${rate}), 0)`,
    })} FROM gaming_activity a JOIN customers c ON c.partner_id = a.partner_id AND c.customer_id = a.customer_id
        LEFT JOIN fx_rates r ON r.currency = a.currency AND r.date = a.date WHERE a.partner_id = ?${acts.sql} GROUP BY 1, 2, 3`, bindings: [partner, ...acts.bindings] });
  }
  const all = [...COUNT_COLUMNS, ...MONEY_COLUMNS];
  // A cell whose every figure is zero is not kept (as in the per-day recomputation).
  const nonZero = all.map((c) => `SUM(${c}) <> 0`).join(' OR ');
  const result = await trx.raw(`INSERT INTO report_cells (partner_id, affiliate_id, campaign_id, day, ${all.join(', ')})
      SELECT ?, aff, camp, day, ${all.map((c) => `SUM(${c})`).join(', ')} FROM (${sources.map((s) => s.sql).join(' UNION ALL ')}) s
      GROUP BY aff, camp, day HAVING ${nonZero}`, [partner, ...sources.flatMap((s) => s.bindings)]);
  await trx.raw(`INSERT INTO report_purchase_cells (partner_id, affiliate_id, campaign_id, day, challenge_type, account_size, purchases, fees_usd, unconverted)
      SELECT t.partner_id, c.affiliate_id, COALESCE(c.campaign_id, ''), ${TX_DAY}, COALESCE(c.challenge_type, ''), COALESCE(trim_scale(c.account_size)::text, ''),
        COUNT(*), COALESCE(SUM(${USD}), 0), SUM(CASE WHEN ${USD} IS NULL THEN 1 ELSE 0 END)
      ${TX_FROM} WHERE t.partner_id = ? AND t.status = 'approved' AND t.transaction_type = 'challenge_fee'${txs.sql} GROUP BY 1, 2, 3, 4, 5, 6`, [partner, ...txs.bindings]);
  await trx.raw(`INSERT INTO report_depositors (partner_id, day, customer_id, affiliate_id, campaign_id)
      SELECT DISTINCT t.partner_id, ${TX_DAY}, t.customer_id, c.affiliate_id, COALESCE(c.campaign_id, '')
      ${TX_FROM} WHERE t.partner_id = ? AND t.status = 'approved' AND t.transaction_type = 'deposit'${txs.sql}`, [partner, ...txs.bindings]);
  const summed = [...COUNT_COLUMNS, ...MONEY_COLUMNS].filter((c) => c !== 'depositors');
  // Both sides of the month join are aggregates whose row counts the planner cannot estimate; it
  // guesses a few hundred and picks a nested loop, which at a million day cells runs for hours.
  // Hash joins only, for the rest of this transaction.
  await trx.raw('SET LOCAL enable_nestloop = off');
  const cellMonths = scope.monthsOf('c.day');
  const depositorMonths = scope.monthsOf('day');
  await trx.raw(`INSERT INTO report_month_cells (partner_id, affiliate_id, campaign_id, month, depositors, ${summed.join(', ')})
      SELECT c.partner_id, c.affiliate_id, c.campaign_id, to_char(c.day, 'YYYY-MM'), COALESCE(d.n, 0), ${summed.map((x) => `SUM(c.${x})`).join(', ')}
      FROM report_cells c LEFT JOIN (SELECT affiliate_id, campaign_id, to_char(day, 'YYYY-MM') AS month, COUNT(DISTINCT customer_id) AS n FROM report_depositors
        WHERE partner_id = ?${depositorMonths.sql} GROUP BY 1, 2, 3) d ON d.affiliate_id = c.affiliate_id AND d.campaign_id = c.campaign_id AND d.month = to_char(c.day, 'YYYY-MM')
      WHERE c.partner_id = ?${cellMonths.sql} GROUP BY c.partner_id, c.affiliate_id, c.campaign_id, to_char(c.day, 'YYYY-MM'), d.n`,
  [partner, ...depositorMonths.bindings, partner, ...cellMonths.bindings]);
  await trx.raw('SET LOCAL enable_nestloop = DEFAULT');
  await trx.raw('SET LOCAL work_mem = DEFAULT');
  return Number((result as { rowCount?: number }).rowCount ?? 0);
}
