/**
 * Customer-days re-derived set-based, on PostgreSQL: what refreshDays (./customer-days.ts) does
 * for a bulk group's take, in one statement. The activity rows, their rates, the approved bonuses
 * of the days whose rows lack `ngr`, and the cached days are joined in the store; only the days that
 * changed are written, and the month deltas come back summed per affiliate and month, with their
 * first sources. No activity row, bonus or cached day crosses to the process: a take of 20,000
 * customer-days read and parsed some 30,000 activity rows, their cached days and bonuses, and
 * wrote back the days in arrays (about a third of the month's commission settle).
 *
 * The arithmetic is deriveDay's, exact: NUMERIC products and sums, as decimal.js with its 60
 * digits. `commissions recompute` derives the days in the process and checks them against these.
 */
import type { Knex } from 'knex';
import type { MonthDeltas } from './month-deltas.js';
import type { CustomerFact } from './facts.js';
import { money } from '../kernel/money.js';
import { arrayLiteral } from '../store/json-insert.js';

/** Sources listed per month by this statement; the evaluation lists at most this many (MonthDeltas `listed`). */
const SOURCES = 100;

const SQL = `
WITH p AS (
  SELECT * FROM unnest(?::text[], ?::date[], ?::text[]) AS p(customer_id, date, affiliate_id)
),
-- The pairs' bounds, in the store's own order: the joins below also scan only this range of
-- customers of their (partner, customer, ...) index (a take's customers are a range of the key);
-- without them the planner, whose statistics lag the group being written, merged or hashed whole
-- tables once per pass. The cached days get no day bound: with one, it read whole days by date.
b AS (SELECT min(customer_id) AS lo, max(customer_id) AS hi, min(date) AS since, max(date) AS until FROM p),
r AS (
  SELECT a.customer_id, a.date, a.currency,
    CASE WHEN a.currency = 'USD' THEN 1::numeric ELSE x.rate END AS rate,
    COALESCE(a.ggr, a.total_bets - a.wins, 0) AS ggr, a.total_bets, a.ngr
  FROM p
  JOIN gaming_activity a ON a.partner_id = ? AND a.customer_id = p.customer_id AND a.date = p.date
    AND a.customer_id BETWEEN (SELECT lo FROM b) AND (SELECT hi FROM b) AND a.date BETWEEN (SELECT since FROM b) AND (SELECT until FROM b)
  LEFT JOIN fx_rates x ON x.currency = a.currency AND x.date = a.date
  WHERE p.affiliate_id IS NOT NULL
),
-- A day's missing rates are listed as they come (a DISTINCT aggregate sorts per day, most with
-- nothing to sort); nv lists each once.
act AS (
  SELECT customer_id, date,
    sum(ggr * rate) AS ggr,
    sum(COALESCE(total_bets, 0) * rate) AS bets,
    bool_and(ngr IS NOT NULL) AS all_ngr,
    sum(ngr * rate) AS ngr,
    array_agg(currency || ' ' || to_char(date, 'YYYY-MM-DD')) FILTER (WHERE rate IS NULL) AS missing
  FROM r GROUP BY customer_id, date
),
bon AS (
  SELECT a.customer_id, a.date,
    sum(abs(COALESCE(t.amount_usd, t.amount_currency * CASE WHEN t.currency = 'USD' THEN 1::numeric ELSE x.rate END))) AS bonus,
    array_agg(t.currency || ' ' || to_char(a.date, 'YYYY-MM-DD')) FILTER (WHERE t.amount_usd IS NULL AND t.currency <> 'USD' AND x.rate IS NULL) AS missing
  FROM act a
  JOIN transactions t ON t.partner_id = ? AND t.customer_id = a.customer_id AND t.transaction_type = 'bonus' AND t.status = 'approved'
    AND t.customer_id BETWEEN (SELECT lo FROM b) AND (SELECT hi FROM b)
    AND t.transaction_date >= a.date::timestamp AT TIME ZONE 'UTC' AND t.transaction_date < (a.date + 1)::timestamp AT TIME ZONE 'UTC'
  LEFT JOIN fx_rates x ON x.currency = t.currency AND x.date = a.date
  WHERE NOT a.all_ngr
  GROUP BY a.customer_id, a.date
),
nv AS (
  SELECT a.customer_id, a.date, a.ggr, a.bets,
    CASE WHEN a.all_ngr THEN a.ngr ELSE a.ggr - COALESCE(b.bonus, 0) END AS ngr,
    -- The missing rates, each once, sorted; none (most days) without the per-day subquery.
    CASE WHEN a.missing IS NULL AND (a.all_ngr OR b.missing IS NULL) THEN NULL ELSE
      (SELECT string_agg(DISTINCT m COLLATE "C", ',' ORDER BY m COLLATE "C")
         FROM unnest(COALESCE(a.missing, '{}') || CASE WHEN a.all_ngr THEN '{}' ELSE COALESCE(b.missing, '{}') END) AS m) END AS missing
  FROM act a LEFT JOIN bon b ON b.customer_id = a.customer_id AND b.date = a.date
),
cmp AS (
  SELECT p.customer_id, p.date,
    n.customer_id IS NOT NULL AS has_new, p.affiliate_id AS n_aff,
    CASE WHEN n.missing IS NULL THEN n.ggr END AS n_ggr, CASE WHEN n.missing IS NULL THEN n.ngr END AS n_ngr,
    CASE WHEN n.missing IS NULL THEN n.bets END AS n_bets, n.missing AS n_missing,
    o.customer_id IS NOT NULL AS has_old, o.affiliate_id AS o_aff, o.ggr_usd AS o_ggr, o.ngr_usd AS o_ngr, o.bets_usd AS o_bets, o.missing AS o_missing
  FROM p
  LEFT JOIN nv n ON n.customer_id = p.customer_id AND n.date = p.date
  LEFT JOIN commission_customer_days o ON o.partner_id = ? AND o.customer_id = p.customer_id AND o.date = p.date
    AND o.customer_id BETWEEN (SELECT lo FROM b) AND (SELECT hi FROM b)
),
changed AS (
  SELECT * FROM cmp
  WHERE (has_new OR has_old) AND NOT (has_new AND has_old AND n_aff = o_aff AND n_missing IS NOT DISTINCT FROM o_missing
    AND n_ggr IS NOT DISTINCT FROM o_ggr AND n_ngr IS NOT DISTINCT FROM o_ngr
    AND n_bets IS NOT DISTINCT FROM o_bets)
),
-- New days inserted, stored ones updated: the comparison above read every stored day of the pairs,
-- and the partner's evaluation lock keeps other writers out, so no insert can conflict. (ON
-- CONFLICT cost twice a plain insert: 110,475 days in 1.49 s against 0.81 s.)
ins AS (
  INSERT INTO commission_customer_days (partner_id, customer_id, date, affiliate_id, ggr_usd, ngr_usd, bets_usd, missing, updated_at)
  SELECT ?, customer_id, date, n_aff, n_ggr, n_ngr, n_bets, n_missing, ?::timestamptz FROM changed WHERE has_new AND NOT has_old
  RETURNING customer_id
),
upd AS (
  UPDATE commission_customer_days d SET affiliate_id = c.n_aff, ggr_usd = c.n_ggr, ngr_usd = c.n_ngr, bets_usd = c.n_bets,
    missing = c.n_missing, updated_at = ?::timestamptz
  FROM changed c WHERE d.partner_id = ? AND d.customer_id = c.customer_id AND d.date = c.date AND c.has_new AND c.has_old
    AND d.customer_id BETWEEN (SELECT lo FROM b) AND (SELECT hi FROM b)
  RETURNING d.customer_id
),
up AS (SELECT customer_id FROM ins UNION ALL SELECT customer_id FROM upd),
del AS (
  DELETE FROM commission_customer_days d USING changed c
  WHERE d.partner_id = ? AND d.customer_id = c.customer_id AND d.date = c.date AND NOT c.has_new
  RETURNING d.customer_id
),
side AS (
  SELECT n_aff AS affiliate_id, customer_id, date, 1 AS sign, n_ggr AS ggr, n_ngr AS ngr, n_missing IS NOT NULL AS miss FROM changed WHERE has_new
  UNION ALL
  SELECT o_aff, customer_id, date, -1, o_ggr, o_ngr, o_missing IS NOT NULL FROM changed WHERE has_old
),
src AS (
  SELECT affiliate_id, to_char(date, 'YYYY-MM') AS month, customer_id, date,
    row_number() OVER (PARTITION BY affiliate_id, to_char(date, 'YYYY-MM') ORDER BY customer_id COLLATE "C", date) AS n
  FROM (SELECT DISTINCT affiliate_id, customer_id, date FROM side) s
)
SELECT 'month' AS kind, m.affiliate_id, m.month, m.ggr::text AS ggr, m.ngr::text AS ngr, m.days, m.missing_days,
  s.listed, s.unlisted, NULL::bigint AS written, NULL::bigint AS removed, NULL::text[] AS customers
FROM (
  SELECT affiliate_id, to_char(date, 'YYYY-MM') AS month,
    COALESCE(sum(sign * ggr) FILTER (WHERE NOT miss), 0) AS ggr, COALESCE(sum(sign * ngr) FILTER (WHERE NOT miss), 0) AS ngr,
    sum(sign) AS days, COALESCE(sum(sign) FILTER (WHERE miss), 0) AS missing_days
  FROM side GROUP BY 1, 2
) m
JOIN (
  SELECT affiliate_id, month, array_agg('activity:' || customer_id || '@' || to_char(date, 'YYYY-MM-DD') ORDER BY n) FILTER (WHERE n <= ${SOURCES}) AS listed,
    count(*) FILTER (WHERE n > ${SOURCES}) AS unlisted
  FROM src GROUP BY 1, 2
) s ON s.affiliate_id = m.affiliate_id AND s.month = m.month
UNION ALL
SELECT 'written', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  (SELECT count(*) FROM up), (SELECT count(*) FROM del), (SELECT array_agg(DISTINCT customer_id) FROM up)
`;

interface Row {
  kind: 'month' | 'written';
  affiliate_id: string;
  month: string;
  ggr: string;
  ngr: string;
  days: string | number;
  missing_days: string | number;
  listed: string[] | null;
  unlisted: string | number;
  written: string | number;
  removed: string | number;
  customers: string[] | null;
}

/**
 * refreshDays set-based (PostgreSQL): re-derives these customer-days, writes what changed and adds
 * the month deltas, with at most SOURCES sources a month listed and the rest counted. Customers
 * missing from `customers` get no row (their old rows go).
 */
export async function refreshDaysSql(
  trx: Knex.Transaction,
  partner: string,
  pairs: ReadonlyMap<string, ReadonlySet<string>>,
  customers: ReadonlyMap<string, CustomerFact>,
  deltas: MonthDeltas,
  now: string,
): Promise<{ written: number; removed: number; customers: string[] }> {
  const ids: string[] = [];
  const dates: string[] = [];
  const affiliates: (string | null)[] = [];
  for (const [customerId, days] of pairs) {
    const affiliate = customers.get(customerId)?.affiliateId ?? null;
    for (const date of days) {
      ids.push(customerId);
      dates.push(date);
      affiliates.push(affiliate);
    }
  }
  if (ids.length === 0) return { written: 0, removed: 0, customers: [] };
  const result = await trx.raw(SQL, [arrayLiteral(ids), arrayLiteral(dates), arrayLiteral(affiliates), partner, partner, partner, partner, now, now, partner, partner] as unknown as Knex.RawBinding[]);
  const out = { written: 0, removed: 0, customers: [] as string[] };
  for (const r of (result as { rows: Row[] }).rows) {
    if (r.kind === 'written') {
      out.written = Number(r.written);
      out.removed = Number(r.removed);
      out.customers = r.customers ?? [];
      continue;
    }
    deltas.addMonth(r.affiliate_id, r.month, { ggr: money(r.ggr), ngr: money(r.ngr), days: Number(r.days), missingDays: Number(r.missing_days) }, r.listed ?? [], Number(r.unlisted));
  }
  return out;
}
