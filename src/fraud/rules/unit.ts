/**
 * What the fraud rules share. The rules (docs/fraud.md defines each with a worked example; one
 * file per kind of unit in this folder) each evaluate one unit (a customer, an identity key, an
 * affiliate-month or -day, a pair of accounts) from the store and return the findings of that
 * unit; the same data always gives the same findings, whether a batch or a rescan asks. Here: the
 * unit's context, a finding's shape, money as evidence shows it, and the per-affiliate day sums
 * the affiliate rules read from the facts (read ahead for many units at once by prefetch).
 */
import type { Knex } from 'knex';
import { Money, money } from '../../kernel/money.js';
import type { Variant } from '../../types.js';
import type { RuleName, RuleSettings } from '../config.js';
import type { Finding, Severity } from '../flags.js';
import { append } from '../../kernel/collections.js';
import { dialectOf } from '../../store/dialect/index.js';

export const usd = (m: Money): string => m.toDecimalPlaces(2).toFixed(2);
export const ratio = (a: Money | number, b: Money | number): string => money(a).dividedBy(money(b)).toDecimalPlaces(4).toFixed(4);
export const key = (...parts: string[]): string => JSON.stringify(parts);

export interface Ctx {
  db: Knex | Knex.Transaction;
  partner: string;
  variant: Variant;
  settings: RuleSettings;
  /** Per-day sums of fraud_customers / fraud_customer_days per affiliate, read ahead for many units at once (prefetch). */
  cache?: Map<string, { from: string; to: string; days: DaySums[] }[]>;
}

export type AffiliateTable = 'fraud_customers' | 'fraud_customer_days';
const DATE_COLUMN: Record<AffiliateTable, string> = { fraud_customers: 'ftd_date', fraud_customer_days: 'date' };
/** What the affiliate rules need of a day, summed in the store: the rows themselves are read only for a finding's evidence. */
const SUMS: Record<AffiliateTable, string> = {
  fraud_customers: 'count(*) AS ftds, count(farmed) AS judged, sum(CASE WHEN farmed = 1 THEN 1 ELSE 0 END) AS farmed',
  fraud_customer_days: 'sum(deposits) AS deposits, sum(reversals) AS reversals, sum(refunds) AS refunds',
};

/**
 * One affiliate's day: its first deposits (all, judged, farmed) from fraud_customers, or its
 * customers' deposits, reversals and refunds from fraud_customer_days.
 */
export interface DaySums { date: string; ftds: number; judged: number; farmed: number; deposits: number; reversals: number; refunds: number }

function daySums(table: AffiliateTable, r: Record<string, unknown>): DaySums {
  const n = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
  const date = String(r.date);
  return table === 'fraud_customers'
    ? { date, ftds: n(r.ftds), judged: n(r.judged), farmed: n(r.farmed), deposits: 0, reversals: 0, refunds: 0 }
    : { date, ftds: 0, judged: 0, farmed: 0, deposits: n(r.deposits), reversals: n(r.reversals), refunds: n(r.refunds) };
}

/** The day sums of up to 300 affiliates over [from, to], grouped in the store: one row per affiliate-day, not per customer. */
async function readDaySums(ctx: Ctx, table: AffiliateTable, affiliates: readonly string[], from: string, to: string): Promise<Map<string, DaySums[]>> {
  const column = DATE_COLUMN[table];
  const rows: Record<string, unknown>[] = await ctx.db(table).where('partner_id', ctx.partner).whereIn('affiliate_id', affiliates).whereBetween(column, [from, to])
    .groupBy('affiliate_id', column).select('affiliate_id', ctx.db.raw(`${column} AS date, ${SUMS[table]}`));
  const per = new Map<string, DaySums[]>(affiliates.map((a) => [a, []]));
  for (const r of rows) per.get(String(r.affiliate_id))?.push(daySums(table, r));
  return per;
}

/**
 * Reads the day sums of many (affiliate, day range) units with one query per distinct range and
 * 300 affiliates, instead of one per unit; the rules then find them in ctx.cache.
 */
export async function prefetch(ctx: Ctx, table: AffiliateTable, units: readonly { affiliate: string; from: string; to: string }[]): Promise<void> {
  ctx.cache ??= new Map();
  const byRange = new Map<string, Set<string>>();
  for (const u of units) {
    const k = `${u.from}|${u.to}`;
    byRange.set(k, (byRange.get(k) ?? new Set()).add(u.affiliate));
  }
  for (const [range, affiliates] of byRange) {
    const [from, to] = range.split('|') as [string, string];
    for (const part of dialectOf(ctx.db).chunks([...affiliates], 300)) {
      for (const [a, days] of await readDaySums(ctx, table, part, from, to)) append(ctx.cache, `${table}\u0000${a}`, { from, to, days });
    }
  }
}

/** One affiliate's day sums over [from, to], from ctx.cache when a prefetch covered them. */
export async function affiliateDays(ctx: Ctx, table: AffiliateTable, affiliate: string, from: string, to: string): Promise<DaySums[]> {
  const span = ctx.cache?.get(`${table}\u0000${affiliate}`)?.find((x) => x.from <= from && x.to >= to);
  if (span) return span.days.filter((d) => d.date >= from && d.date <= to);
  return (await readDaySums(ctx, table, [affiliate], from, to)).get(affiliate) ?? [];
}

/** The rows behind a finding: one affiliate's rows over [from, to] that `where` keeps. */
export function affiliateRows(ctx: Ctx, table: AffiliateTable, affiliate: string, from: string, to: string, columns: string[], where: (q: Knex.QueryBuilder) => Knex.QueryBuilder): Promise<Record<string, unknown>[]> {
  return where(ctx.db(table).where({ partner_id: ctx.partner, affiliate_id: affiliate }).whereBetween(DATE_COLUMN[table], [from, to])).select(columns);
}

export const finding = (ctx: Ctx, rule: RuleName, instance: string, affiliateId: string | null, severity: Severity, customers: string[], evidence: Record<string, unknown>): Finding => ({
  partner: ctx.partner, variant: ctx.variant, rule, instanceKey: instance, affiliateId, severity, evidence, customers,
});
