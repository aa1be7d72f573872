/**
 * The rules (docs/fraud.md defines each with a worked example). Each evaluates one unit (a
 * customer, an identity key, an affiliate-month or -day, a pair of accounts) from the store and
 * returns the findings of that unit; the same data always gives the same findings, whether a
 * batch or a rescan asks.
 */
import type { Knex } from 'knex';
import { addDays, lastDayOf, monthOf, nextMonth } from '../kernel/dates.js';
import { Money, money } from '../kernel/money.js';
import type { Variant } from '../types.js';
import type { RuleName, RuleSettings } from './config.js';
import { approved, chunked, judgeWagering, ts, type CustomerData, type TradeRow, type Tx } from './facts.js';
import type { Finding, Severity } from './flags.js';
import { append } from '../kernel/collections.js';
import { inList, inListSize } from '../store/dialects.js';

const usd = (m: Money): string => m.toDecimalPlaces(2).toFixed(2);
const ratio = (a: Money | number, b: Money | number): string => money(a).dividedBy(money(b)).toDecimalPlaces(4).toFixed(4);
export const key = (...parts: string[]): string => JSON.stringify(parts);

export interface Ctx {
  db: Knex | Knex.Transaction;
  partner: string;
  variant: Variant;
  settings: RuleSettings;
  /** Per-day sums of fraud_customers / fraud_customer_days per affiliate, read ahead for many units at once (prefetch). */
  cache?: Map<string, { from: string; to: string; days: DaySums[] }[]>;
}

type AffiliateTable = 'fraud_customers' | 'fraud_customer_days';
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
    const list = [...affiliates];
    for (let i = 0; i < list.length; i += 300) {
      for (const [a, days] of await readDaySums(ctx, table, list.slice(i, i + 300), from, to)) append(ctx.cache, `${table}\u0000${a}`, { from, to, days });
    }
  }
}

/** One affiliate's day sums over [from, to], from ctx.cache when a prefetch covered them. */
async function affiliateDays(ctx: Ctx, table: AffiliateTable, affiliate: string, from: string, to: string): Promise<DaySums[]> {
  const span = ctx.cache?.get(`${table}\u0000${affiliate}`)?.find((x) => x.from <= from && x.to >= to);
  if (span) return span.days.filter((d) => d.date >= from && d.date <= to);
  return (await readDaySums(ctx, table, [affiliate], from, to)).get(affiliate) ?? [];
}

/** The rows behind a finding: one affiliate's rows over [from, to] that `where` keeps. */
function affiliateRows(ctx: Ctx, table: AffiliateTable, affiliate: string, from: string, to: string, columns: string[], where: (q: Knex.QueryBuilder) => Knex.QueryBuilder): Promise<Record<string, unknown>[]> {
  return where(ctx.db(table).where({ partner_id: ctx.partner, affiliate_id: affiliate }).whereBetween(DATE_COLUMN[table], [from, to])).select(columns);
}

const finding = (ctx: Ctx, rule: RuleName, instance: string, affiliateId: string | null, severity: Severity, customers: string[], evidence: Record<string, unknown>): Finding => ({
  partner: ctx.partner, variant: ctx.variant, rule, instanceKey: instance, affiliateId, severity, evidence, customers,
});

/** Approved deposits minus approved withdrawals before `at` (USD); undefined when one lacks a rate. */
function netDepositsBefore(txs: readonly Tx[], at: string): Money | undefined {
  let net = money(0);
  for (const t of txs) {
    if (t.at >= at) break;
    if (t.type !== 'deposit' && t.type !== 'withdrawal') continue;
    if (t.usd === undefined) return undefined;
    net = t.type === 'deposit' ? net.plus(t.usd) : net.minus(t.usd);
  }
  return net;
}

/**
 * bonus_bust_out: per approved bonus, the first approved withdrawal within N days after it that
 * takes out more than the customer's net deposits before it by at least min_bonus_out × the bonus
 * (the bonus money leaves), with wagering
 * from the bonus's day to the withdrawal's day below multiple × bonus.
 */
export function bonusBustOut(ctx: Ctx, data: CustomerData): Finding[] {
  const s = ctx.settings.bonus_bust_out;
  const out: Finding[] = [];
  const txs = data.txs.filter(approved);
  for (const bonus of txs) {
    if (bonus.type !== 'bonus' || bonus.usd === undefined || !bonus.usd.greaterThan(0)) continue;
    const limitAt = Date.parse(bonus.at) + s.within_days * 86_400_000;
    const withdrawal = txs.find((t) => t.type === 'withdrawal' && t.at > bonus.at && Date.parse(t.at) <= limitAt);
    if (!withdrawal || withdrawal.usd === undefined) continue;
    const net = netDepositsBefore(txs, withdrawal.at);
    if (net === undefined || withdrawal.usd.minus(net).lessThan(bonus.usd.times(s.min_bonus_out)) || !withdrawal.usd.greaterThan(net)) continue;
    const limit = bonus.usd.times(s.wagering_multiple);
    const j = judgeWagering(data, bonus.day, withdrawal.day, limit);
    if (j.verdict !== 'below') continue;
    out.push(finding(ctx, 'bonus_bust_out', key(data.row.customer_id, bonus.transaction_id), data.row.affiliate_id, 'medium', [data.row.customer_id], {
      customer_id: data.row.customer_id,
      bonus: { transaction_id: bonus.transaction_id, at: bonus.at, amount_usd: usd(bonus.usd) },
      withdrawal: { transaction_id: withdrawal.transaction_id, at: withdrawal.at, amount_usd: usd(withdrawal.usd) },
      net_deposits_usd: usd(net), bonus_out_usd: usd(withdrawal.usd.minus(net)), min_bonus_out: s.min_bonus_out, wagering_usd: usd(j.wagered), wagering_limit_usd: usd(limit), within_days: s.within_days,
    }));
  }
  return out;
}

/** deposit_cycling: withdrawals paired with the latest unpaired deposit at most N days before; a cycle returns ≥ ratio of it with wagering below multiple × deposit. */
export function depositCycling(ctx: Ctx, data: CustomerData): Finding[] {
  const s = ctx.settings.deposit_cycling;
  const open: typeof data.txs = [];
  const cycles: Record<string, unknown>[] = [];
  for (const t of data.txs.filter(approved)) {
    if (t.type === 'deposit') { open.push(t); continue; }
    if (t.type !== 'withdrawal') continue;
    const deposit = open[open.length - 1];
    if (!deposit || addDays(deposit.day, s.within_days) < t.day) continue;
    open.pop();
    if (deposit.usd === undefined || t.usd === undefined || !deposit.usd.greaterThan(0)) continue;
    if (t.usd.lessThan(deposit.usd.times(s.min_return_ratio))) continue;
    const j = judgeWagering(data, deposit.day, t.day, deposit.usd.times(s.wagering_multiple));
    if (j.verdict !== 'below') continue;
    cycles.push({ deposit: { transaction_id: deposit.transaction_id, at: deposit.at, amount_usd: usd(deposit.usd) }, withdrawal: { transaction_id: t.transaction_id, at: t.at, amount_usd: usd(t.usd) }, wagering_usd: usd(j.wagered) });
  }
  if (cycles.length < s.min_cycles) return [];
  return [finding(ctx, 'deposit_cycling', key(data.row.customer_id), data.row.affiliate_id, cycles.length >= 2 * s.min_cycles ? 'high' : 'medium', [data.row.customer_id], {
    customer_id: data.row.customer_id, cycles: cycles.length, min_cycles: s.min_cycles, pairs: cycles,
  })];
}

interface Member { customer_id: string; affiliate_id: string; signup_date: string }

/** Members of identity keys (kind, value) → customers, with their affiliates: one indexed query per kind (per 500 values on SQLite). */
export async function identityMembers(db: Knex | Knex.Transaction, partner: string, keys: readonly string[]): Promise<Map<string, Member[]>> {
  const out = new Map<string, Member[]>();
  const byKind = new Map<string, string[]>();
  for (const k of keys) { const [kind, value] = JSON.parse(k) as [string, string]; append(byKind, kind, value); }
  const rows: Record<string, string>[] = [];
  for (const [kind, values] of byKind) {
    rows.push(...(await chunked(values, inListSize(db), (c) => db('fraud_identities').where({ partner_id: partner, kind }).modify(inList('value', c)).select('kind', 'value', 'customer_id') as Promise<Record<string, string>[]>)));
  }
  const customers = [...new Set(rows.map((r) => r.customer_id!))];
  const records = new Map((await chunked(customers, inListSize(db), (c) => db('customers').where('partner_id', partner).modify(inList('customer_id', c)).select('customer_id', 'affiliate_id', 'signup_date') as Promise<Record<string, unknown>[]>))
    .map((m) => [String(m.customer_id), { affiliate_id: String(m.affiliate_id), signup_date: ts(m.signup_date) }]));
  for (const r of rows) {
    const record = records.get(r.customer_id!);
    if (record === undefined) continue;
    const k = key(r.kind!, r.value!);
    const list = out.get(k) ?? [];
    list.push({ customer_id: r.customer_id!, ...record });
    out.set(k, list);
  }
  for (const list of out.values()) list.sort((a, b) => (a.customer_id < b.customer_id ? -1 : 1));
  return out;
}

/**
 * The closest two signups of these customers, in hours (undefined for fewer than two). A shared
 * name + country is a link only when two accounts were opened close together.
 */
function closestSignups(members: readonly Member[]): { hours: number; customers: [string, string] } | undefined {
  const sorted = [...members].sort((a, b) => (a.signup_date < b.signup_date ? -1 : a.signup_date > b.signup_date ? 1 : a.customer_id < b.customer_id ? -1 : 1));
  let best: { hours: number; customers: [string, string] } | undefined;
  for (let i = 1; i < sorted.length; i++) {
    const hours = (Date.parse(sorted[i]!.signup_date) - Date.parse(sorted[i - 1]!.signup_date)) / 3_600_000;
    if (!best || hours < best.hours) best = { hours, customers: [sorted[i - 1]!.customer_id, sorted[i]!.customer_id] };
  }
  return best;
}

/**
 * duplicate_identity: one identity key shared by at least min_accounts customers. An e-mail or a
 * click id is one person (or one click); a first + last name + country is only a weak signal: it
 * flags when the name is rare in the partner's customers (at most name_max_accounts carry it)
 * and two of them signed up within name_within_hours of each other.
 */
export function duplicateIdentity(ctx: Ctx, identity: string, members: readonly Member[]): Finding[] {
  const s = ctx.settings.duplicate_identity;
  if (members.length < s.min_accounts) return [];
  const [kind, value] = JSON.parse(identity) as [string, string];
  let link: Record<string, unknown> = {};
  if (kind === 'name') {
    if (members.length > s.name_max_accounts) return [];
    const closest = closestSignups(members);
    if (!closest || !(closest.hours <= s.name_within_hours)) return [];
    link = { closest_signups_hours: closest.hours.toFixed(2), closest_signups: closest.customers, name_max_accounts: s.name_max_accounts, name_within_hours: s.name_within_hours };
  }
  const affiliates = [...new Set(members.map((m) => m.affiliate_id))].sort();
  return [finding(ctx, 'duplicate_identity', identity, affiliates.length === 1 ? affiliates[0]! : null, affiliates.length > 1 ? 'high' : 'medium', members.map((m) => m.customer_id), {
    key: kind, value, accounts: members.length, affiliates, customers: members.map((m) => ({ customer_id: m.customer_id, affiliate_id: m.affiliate_id })), ...link,
  })];
}

/** fast_funding: funded less than max_days after signup, and linked (an identity key shared) to another account. */
export function fastFunding(ctx: Ctx, data: CustomerData, fundedDays: number | null, linked: readonly { customer_id: string; via: string }[]): Finding[] {
  const s = ctx.settings.fast_funding;
  // An instant-funding challenge is funded when bought: its speed says nothing.
  if ((data.row.challenge_type ?? '').toLowerCase() === 'instant_funding') return [];
  if (fundedDays === null || !(fundedDays < s.max_days) || linked.length === 0) return [];
  return [finding(ctx, 'fast_funding', key(data.row.customer_id), data.row.affiliate_id, 'high', [data.row.customer_id, ...linked.map((l) => l.customer_id)], {
    customer_id: data.row.customer_id, signup_date: data.row.signup_date, funded_record_at: data.row.last_modified_date,
    funded_days: fundedDays.toFixed(2), max_days: s.max_days, linked,
  })];
}

/** cpa_farming for one affiliate-month of first deposits. */
export async function cpaFarming(ctx: Ctx, affiliate: string, month: string): Promise<Finding[]> {
  const s = ctx.settings.cpa_farming;
  const from = `${month}-01`;
  const to = lastDayOf(month);
  const days = await affiliateDays(ctx, 'fraud_customers', affiliate, from, to);
  // FTDs whose 7 days are not all loaded yet are not judged (farmed NULL): neither counted nor farmed.
  const all = days.reduce((n, d) => n + d.ftds, 0);
  const judged = days.reduce((n, d) => n + d.judged, 0);
  const farmedCount = days.reduce((n, d) => n + d.farmed, 0);
  if (judged < s.min_ftds || farmedCount === 0 || money(farmedCount).lessThan(money(judged).times(s.min_share))) return [];
  const farmed = (await affiliateRows(ctx, 'fraud_customers', affiliate, from, to, ['customer_id', 'ftd_date', 'ftd_usd'], (q) => q.where('farmed', 1)) as { customer_id: string; ftd_date: string; ftd_usd: string | null }[])
    .sort((x, y) => (x.customer_id < y.customer_id ? -1 : 1));
  const base = money(s.baseline_usd);
  return [finding(ctx, 'cpa_farming', key(affiliate, month), affiliate, farmed.length * 5 >= judged * 4 ? 'high' : 'medium', farmed.map((r) => r.customer_id), {
    affiliate_id: affiliate, month, ftds: judged, not_yet_judged: all - judged, farmed: farmed.length, share: ratio(farmed.length, judged), min_share: s.min_share,
    deposit_band_usd: [usd(base), usd(base.times(money(1).plus(s.margin)))], wagering_multiple: s.wagering_multiple, within_days: s.within_days,
    customers: farmed.map((r) => ({ customer_id: r.customer_id, ftd_date: r.ftd_date, ftd_usd: r.ftd_usd === null ? null : usd(money(r.ftd_usd)) })),
  })];
}

/** ftd_spike for the days [from, to] of one affiliate: each day against the mean of the history_days before it. */
export async function ftdSpike(ctx: Ctx, affiliate: string, from: string, to: string): Promise<{ evaluated: string[]; findings: Finding[] }> {
  const s = ctx.settings.ftd_spike;
  const byDay = new Map<string, number>();
  for (const d of await affiliateDays(ctx, 'fraud_customers', affiliate, addDays(from, -s.history_days), to)) byDay.set(d.date, d.ftds);
  const evaluated: string[] = [];
  const findings: Finding[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) {
    evaluated.push(key(affiliate, d));
    const today = byDay.get(d) ?? 0;
    if (today < s.min_ftds) continue;
    // The affiliate's own recent history: from its first day with FTDs within the history_days
    // before D up to the day before D. Without one, the day is not judged (a new affiliate's first
    // days are not a spike of anything).
    let history = 0;
    let days = 0;
    for (let h = 1; h <= s.history_days; h++) {
      const n = byDay.get(addDays(d, -h)) ?? 0;
      history += n;
      if (n > 0) days = h;
    }
    if (days < s.min_history_days) continue;
    const mean = money(history).dividedBy(days);
    if (!money(today).greaterThan(mean.times(s.multiple))) continue;
    const customers = (await affiliateRows(ctx, 'fraud_customers', affiliate, d, d, ['customer_id'], (q) => q)).map((r) => String(r.customer_id)).sort();
    findings.push(finding(ctx, 'ftd_spike', key(affiliate, d), affiliate, 'medium', customers, {
      affiliate_id: affiliate, date: d, ftds: today, history_days: days, history_ftds: history,
      daily_mean: mean.toDecimalPlaces(4).toFixed(4), multiple: s.multiple, customers,
    }));
  }
  return { evaluated, findings };
}

interface DayCounts { customer_id: string; date: string; deposits: number; reversals: number; refunds: number }

/**
 * The Wilson score interval's lower end for k successes in n trials at z: the rate that k of n
 * shows at least, with the confidence z stands for (1.645: 95% one-sided). 5 of 30 (0.1667) gives
 * 0.0834: a small affiliate's bad month is not yet evidence of a rate above 0.1.
 */
export function wilsonLower(k: number, n: number, z: number): number {
  if (n === 0) return 0;
  const p = k / n;
  const z2 = z * z;
  return (p + z2 / (2 * n) - z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
}

const byCustomerThenDate = (a: DayCounts, b: DayCounts): number => (a.customer_id < b.customer_id ? -1 : a.customer_id > b.customer_id ? 1 : a.date < b.date ? -1 : 1);

/** chargeback_rate for one affiliate and the month its windows end in: the worst window above max_rate. */
export async function chargebackRate(ctx: Ctx, affiliate: string, month: string): Promise<Finding[]> {
  const s = ctx.settings.chargeback_rate;
  const first = `${month}-01`;
  const last = lastDayOf(month);
  // Windows ending on a day with a deposit or reversal of the affiliate: one ending on a quiet day
  // holds the same events, minus deposits that fell out at its start.
  const perDay = new Map<string, { deposits: number; reversals: number }>();
  for (const d of await affiliateDays(ctx, 'fraud_customer_days', affiliate, addDays(first, -(s.window_days - 1)), last)) {
    if (d.deposits > 0 || d.reversals > 0) perDay.set(d.date, { deposits: d.deposits, reversals: d.reversals });
  }
  let worst: { from: string; to: string; deposits: number; reversals: number; lower: number } | undefined;
  const days = [...perDay.keys()].sort();
  const ends = days.filter((d) => d >= first && d <= last);
  for (const e of ends) {
    const from = addDays(e, -(s.window_days - 1));
    let deposits = 0;
    let reversals = 0;
    for (const d of days) if (d >= from && d <= e) { deposits += perDay.get(d)!.deposits; reversals += perDay.get(d)!.reversals; }
    if (deposits < s.min_deposits || !money(reversals).greaterThan(money(deposits).times(s.max_rate))) continue;
    const lower = wilsonLower(reversals, deposits, s.confidence_z);
    if (!(lower > s.max_rate)) continue;
    if (!worst || reversals * worst.deposits > worst.reversals * deposits) worst = { from, to: e, deposits, reversals, lower };
  }
  if (!worst) return [];
  const w = worst;
  const hit = (await affiliateRows(ctx, 'fraud_customer_days', affiliate, w.from, w.to, ['customer_id', 'date', 'reversals'], (q) => q.where('reversals', '>', 0)))
    .map((r): DayCounts => ({ customer_id: String(r.customer_id), date: String(r.date), reversals: Number(r.reversals), deposits: 0, refunds: 0 }));
  const customers = [...new Set(hit.map((r) => r.customer_id))].sort();
  return [finding(ctx, 'chargeback_rate', key(affiliate, month), affiliate, 'high', customers, {
    affiliate_id: affiliate, month, window_from: w.from, window_to: w.to, deposits: w.deposits, reversals: w.reversals,
    rate: ratio(w.reversals, w.deposits), rate_lower_bound: w.lower.toFixed(4), confidence_z: s.confidence_z, max_rate: s.max_rate,
    reversals_by_customer: hit.sort(byCustomerThenDate).map((r) => ({ customer_id: r.customer_id, date: r.date, reversals: r.reversals })),
  })];
}

/**
 * refund_after_fee: refunds after a challenge fee among one affiliate's customers in one calendar
 * month, at least min_refunds of them and above max_rate × the challenge fees its customers paid
 * that month (fraud_customer_days.deposits counts a prop-trading customer's approved fees).
 */
export async function refundAfterFee(ctx: Ctx, affiliate: string, month: string): Promise<Finding[]> {
  const s = ctx.settings.refund_after_fee;
  const from = `${month}-01`;
  const to = lastDayOf(month);
  const days = await affiliateDays(ctx, 'fraud_customer_days', affiliate, from, to);
  const fees = days.reduce((n, d) => n + d.deposits, 0);
  const refunds = days.reduce((n, d) => n + d.refunds, 0);
  if (refunds < s.min_refunds || !money(refunds).greaterThan(money(fees).times(s.max_rate))) return [];
  const rows = (await affiliateRows(ctx, 'fraud_customer_days', affiliate, from, to, ['customer_id', 'date', 'refunds'], (q) => q.where('refunds', '>', 0)))
    .map((r): DayCounts => ({ customer_id: String(r.customer_id), date: String(r.date), refunds: Number(r.refunds), deposits: 0, reversals: 0 }))
    .sort(byCustomerThenDate);
  return [finding(ctx, 'refund_after_fee', key(affiliate, month), affiliate, 'medium', [...new Set(rows.map((r) => r.customer_id))].sort(), {
    affiliate_id: affiliate, month, refunds, fees, rate: fees === 0 ? null : ratio(refunds, fees), min_refunds: s.min_refunds, max_rate: s.max_rate,
    refunds_by_customer: rows.map((r) => ({ customer_id: r.customer_id, date: r.date, refunds: r.refunds })),
  })];
}

async function tradeRows(ctx: Ctx, customers: readonly string[]): Promise<TradeRow[]> {
  const rows = await chunked(customers, 300, (c) => ctx.db('trading_activity').where('partner_id', ctx.partner).whereIn('customer_id', c)
    .select('customer_id', 'date', 'instrument', 'currency', 'lots_traded', 'pnl') as Promise<Record<string, unknown>[]>);
  return rows.map(toTrade);
}

const toTrade = (r: Record<string, unknown>): TradeRow => ({
  customer_id: String(r.customer_id), date: String(r.date).slice(0, 10), instrument: String(r.instrument), currency: String(r.currency), lots: money(r.lots_traded), pnl: money(r.pnl),
});

/** Other accounts' rows on the same (instrument, date) as these rows. */
async function sameInstrumentDay(ctx: Ctx, mine: readonly TradeRow[]): Promise<TradeRow[]> {
  const cells = [...new Set(mine.map((r) => key(r.instrument, r.date)))];
  const rows = await chunked(cells, 200, (c) => ctx.db('trading_activity').where('partner_id', ctx.partner)
    .where(function () { for (const cell of c) { const [instrument, date] = JSON.parse(cell) as [string, string]; this.orWhere(function () { this.where('instrument', instrument).where('date', date); }); } })
    .select('customer_id', 'date', 'instrument', 'currency', 'lots_traded', 'pnl') as Promise<Record<string, unknown>[]>);
  return rows.map(toTrade);
}

const near = (a: Money, b: Money, tolerance: number): boolean => a.minus(b).abs().lessThanOrEqualTo(Money.max(a.abs(), b.abs()).times(tolerance));
const pair = (a: string, b: string): [string, string] => (a < b ? [a, b] : [b, a]);

/** mirrored_pnl and copy_trading for pairs of accounts that include one of these customers. */
export async function tradingPairs(ctx: Ctx, customers: readonly string[]): Promise<Finding[]> {
  const runMirror = ctx.settings.mirrored_pnl.enabled;
  const runCopy = ctx.settings.copy_trading.enabled;
  if (!runMirror && !runCopy) return [];
  const own = await tradeRows(ctx, customers);
  if (own.length === 0) return [];
  const others = await sameInstrumentDay(ctx, own);
  const mine = new Set(customers);
  const cell = (r: TradeRow) => `${r.customer_id}\u0000${r.date}\u0000${r.instrument}\u0000${r.currency}`;
  const all = new Map<string, TradeRow>();
  for (const r of [...own, ...others]) all.set(cell(r), r);
  const byCell = new Map<string, TradeRow[]>();
  for (const r of all.values()) {
    const k = `${r.date}\u0000${r.instrument}\u0000${r.currency}`;
    append(byCell, k, r);
  }
  const m = ctx.settings.mirrored_pnl;
  const c = ctx.settings.copy_trading;
  const mirrored = new Map<string, { date: string; instrument: string; currency: string; a: TradeRow; b: TradeRow }[]>();
  const copyCandidates = new Set<string>();
  const judgePair = (x: TradeRow, y: TradeRow, done: Set<string>) => {
    if (x.customer_id === y.customer_id) return;
    const [a, b] = x.customer_id < y.customer_id ? [x, y] : [y, x];
    const id = key(a.customer_id, b.customer_id);
    if (done.has(id)) return;
    done.add(id);
    if (runMirror && a.pnl.isPositive() !== b.pnl.isPositive() && !a.pnl.isZero() && !b.pnl.isZero()
      && a.pnl.abs().greaterThanOrEqualTo(m.min_abs_pnl) && b.pnl.abs().greaterThanOrEqualTo(m.min_abs_pnl)
      && a.pnl.plus(b.pnl).abs().lessThanOrEqualTo(Money.max(a.pnl.abs(), b.pnl.abs()).times(m.pnl_tolerance))
      && near(a.lots, b.lots, m.lots_tolerance)) {
      append(mirrored, id, { date: a.date, instrument: a.instrument, currency: a.currency, a, b });
    }
    if (runCopy && near(a.lots, b.lots, c.lots_tolerance) && near(a.pnl, b.pnl, c.pnl_tolerance) && (a.pnl.isZero() === b.pnl.isZero())) copyCandidates.add(id);
  };
  // Per cell, the rows sorted by P&L: a touched row is compared only with the rows whose P&L can
  // mirror or copy it (a band around −pnl and +pnl, widened a little; the exact test is judgePair),
  // so a busy instrument-day costs n log n, not n².
  const band = (v: number, t: number): [number, number] => {
    if (t >= 1) return v >= 0 ? [0, Infinity] : [-Infinity, 0];
    const lo = Math.abs(v) * (1 - t);
    const hi = Math.abs(v) / (1 - t);
    return v >= 0 ? [lo * (1 - 1e-9) - 1e-6, hi * (1 + 1e-9) + 1e-6] : [-hi * (1 + 1e-9) - 1e-6, -lo * (1 - 1e-9) + 1e-6];
  };
  for (const rows of byCell.values()) {
    const sorted = rows.map((r) => ({ r, v: r.pnl.toNumber() })).sort((p, q) => p.v - q.v);
    const done = new Set<string>();
    const from = (x: number): number => {
      let lo = 0;
      let hi = sorted.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (sorted[mid]!.v < x) lo = mid + 1; else hi = mid; }
      return lo;
    };
    const visit = ([lo, hi]: [number, number], x: TradeRow) => {
      for (let k = from(lo); k < sorted.length && sorted[k]!.v <= hi; k++) judgePair(x, sorted[k]!.r, done);
    };
    for (const { r: x, v } of sorted) {
      if (!mine.has(x.customer_id)) continue;
      if (runMirror && v !== 0) visit(band(-v, m.pnl_tolerance), x);
      if (runCopy) visit(v === 0 ? [0, 0] : band(v, c.pnl_tolerance), x);
    }
  }
  const out: Finding[] = [];
  const involved = [...new Set([...mirrored.keys(), ...copyCandidates].flatMap((p) => JSON.parse(p) as string[]))];
  const affRows = await chunked(involved, 300, (x) => ctx.db('fraud_customers').where('partner_id', ctx.partner).whereIn('customer_id', x).select('customer_id', 'affiliate_id') as Promise<{ customer_id: string; affiliate_id: string }[]>);
  const affiliates = new Map(affRows.map((r) => [r.customer_id, r.affiliate_id]));
  const aff = (a: string, b: string): string | null => (affiliates.get(a) !== undefined && affiliates.get(a) === affiliates.get(b) ? affiliates.get(a)! : null);
  // A hedge is the pair's habit, not a coincidence: the mirrored days are at least min_share of the
  // days both accounts traded one same instrument (two busy traders of EURUSD meet by chance).
  const mirrorPairs = [...mirrored].filter(([, hits]) => new Set(hits.map((h) => h.date)).size >= m.min_days);
  const partners = [...new Set(mirrorPairs.flatMap(([id]) => JSON.parse(id) as string[]))].filter((x) => !mine.has(x));
  const cellsOf = new Map<string, Map<string, Set<string>>>();
  for (const r of [...own, ...(await tradeRows(ctx, partners))]) {
    const perDay = cellsOf.get(r.customer_id) ?? new Map<string, Set<string>>();
    perDay.set(r.date, (perDay.get(r.date) ?? new Set()).add(`${r.instrument}\u0000${r.currency}`));
    cellsOf.set(r.customer_id, perDay);
  }
  for (const [id, hits] of mirrorPairs) {
    const days = new Set(hits.map((h) => h.date));
    const [a, b] = JSON.parse(id) as [string, string];
    let common = 0;
    const db = cellsOf.get(b);
    for (const [d, cells] of cellsOf.get(a) ?? []) if ([...cells].some((c) => db?.get(d)?.has(c))) common += 1;
    if (money(days.size).lessThan(money(common).times(m.min_share))) continue;
    hits.sort((p, q) => (p.date < q.date ? -1 : p.date > q.date ? 1 : p.instrument < q.instrument ? -1 : 1));
    out.push(finding(ctx, 'mirrored_pnl', id, aff(a, b), 'high', [a, b], {
      accounts: [a, b], days: days.size, min_days: m.min_days, common_days: common, share: ratio(days.size, common), min_share: m.min_share,
      rows: hits.map((h) => ({ date: h.date, instrument: h.instrument, currency: h.currency, pnl: [h.a.pnl.toFixed(), h.b.pnl.toFixed()], lots: [h.a.lots.toFixed(), h.b.lots.toFixed()] })),
    }));
  }
  if (copyCandidates.size > 0) {
    const ids = [...new Set([...copyCandidates].flatMap((p) => JSON.parse(p) as string[]))];
    const rows = await tradeRows(ctx, ids.filter((x) => !mine.has(x)));
    const days = new Map<string, Map<string, TradeRow[]>>();
    for (const r of [...own, ...rows]) {
      const perDay = days.get(r.customer_id) ?? new Map<string, TradeRow[]>();
      append(perDay, r.date, r);
      days.set(r.customer_id, perDay);
    }
    for (const id of [...copyCandidates].sort()) {
      const [a, b] = JSON.parse(id) as [string, string];
      const da = days.get(a);
      const db = days.get(b);
      if (!da || !db) continue;
      const same: { date: string; instruments: string[] }[] = [];
      for (const [d, ra] of [...da].sort((p, q) => (p[0] < q[0] ? -1 : 1))) {
        const rb = db.get(d);
        if (!rb || rb.length !== ra.length) continue;
        const match = ra.every((x) => rb.some((y) => y.instrument === x.instrument && y.currency === x.currency && near(x.lots, y.lots, c.lots_tolerance) && near(x.pnl, y.pnl, c.pnl_tolerance) && x.pnl.isZero() === y.pnl.isZero()));
        if (match) same.push({ date: d, instruments: ra.map((x) => x.instrument).sort() });
      }
      if (same.length < c.min_days) continue;
      const [p, q] = pair(a, b);
      out.push(finding(ctx, 'copy_trading', key(p, q), aff(p, q), 'high', [p, q], { accounts: [p, q], identical_days: same.length, min_days: c.min_days, days: same }));
    }
  }
  return out;
}

export const monthsOfWindow = (d: string, windowDays: number): string[] => {
  // Month by month, not day by day: this runs for every deposit day of every scope.
  const last = monthOf(addDays(d, windowDays - 1));
  const months: string[] = [];
  for (let m = monthOf(d); m <= last; m = nextMonth(m)) months.push(m);
  return months;
};
