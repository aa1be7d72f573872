/**
 * Recompute: rebuild every commission of a partner from its whole history and compare with the
 * incremental ledger, key by key, to the cent. It re-derives customer-days from the raw activity
 * (not from commission_customer_days), sums months itself (not from
 * commission_affiliate_months) and evaluates every customer and every affiliate month, so a
 * scope the incremental job missed, or derived state that drifted, shows as a difference.
 * `repair` rewrites the derived state and appends the lines that make the ledger agree.
 */
import type { Knex } from 'knex';
import type { Store } from '../store/store.js';
import { fromStoreTimestamp } from '../store/values.js';
import type { Variant } from '../types.js';
import { deriveDay, sameDay, toActivityRow, toCachedDay, writeCachedDays, type ActivityRow, type AffiliateMonth, type CachedDay } from './customer-days.js';
import { monthKey } from './month-deltas.js';
import { addDays, lastDayOf, monthOf, nextMonth } from '../kernel/dates.js';
import { lockPartner, plansFor } from './engine.js';
import { book } from './booking.js';
import { completeTargets, customerTargets, transactionTypes, type TargetSource } from './customer-targets.js';
import { CUSTOMER_COLUMNS, ratePairs, readTransactions, TX_COLUMNS, toCustomerFact, toTxFact, type CustomerFact } from './facts.js';
import { RateBook } from '../kernel/fx.js';
import { totalsByAffiliate } from './ledger.js';
import { type FlagRef, type LineState, type Target } from './target.js';
import { money, ZERO } from '../kernel/money.js';
import { dropPending, lockPartnerLoads, readPending } from './recompute-pending.js';
import type { CpaFtdPlan, Plan, RevsharePlan } from './plans.js';
import { applyReview, flaggedDaysByAffiliate, readReviews, reviewedRevshareTargets } from './review-holds.js';
import { dialectOf } from '../store/dialect/index.js';
import { append } from '../kernel/collections.js';

export interface Difference {
  key: string;
  plan_id: string;
  plan_kind: string;
  partner: string;
  affiliate: string;
  customer: string | null;
  period: string;
  ledger_usd: string;
  recomputed_usd: string;
  difference_usd: string;
  reason: string;
}

export interface HeldKey {
  key: string;
  affiliate: string;
  ledger_usd: string;
  /** FX rates the key waits for (empty when it is held for review only). */
  missing: string[];
  /** The open fraud flags holding it for review, if any. */
  review_flags?: FlagRef[];
}

export interface PartnerRecompute {
  partner: string;
  variant: Variant;
  keys: number;
  differences: Difference[];
  held: HeldKey[];
  /** Derived state found different from a rebuild (customer-days, affiliate months). */
  derived: { customer_days: number; affiliate_months: number; attributions: number };
  repaired?: { lines: number; net_usd: string };
}

export interface RecomputeOptions {
  partner?: string;
  month?: string;
  /** Only the keys of this affiliate (a key is its affiliate's when a target or a ledger line of it names the affiliate). */
  affiliate?: string;
  repair?: boolean;
  runId: string;
}

const PAGE = 1000;

async function partnersOf(knex: Knex, only?: string): Promise<{ partner: string; variant: Variant }[]> {
  const q = knex('partners').select('partner_id', 'variant').orderBy('partner_id');
  if (only) q.where('partner_id', only);
  const rows: { partner_id: string; variant: Variant }[] = await q;
  return rows.map((r) => ({ partner: r.partner_id, variant: r.variant }));
}

async function allCustomers(knex: Knex, partner: string): Promise<Map<string, CustomerFact>> {
  const out = new Map<string, CustomerFact>();
  let after = '';
  for (;;) {
    const rows: Record<string, unknown>[] = await knex('customers').where('partner_id', partner).where('customer_id', '>', after).orderBy('customer_id').limit(PAGE).select(CUSTOMER_COLUMNS);
    for (const r of rows) out.set(String(r.customer_id), toCustomerFact(r));
    if (rows.length < PAGE) return out;
    after = String(rows[rows.length - 1]?.customer_id);
  }
}

interface Rebuilt {
  months: Map<string, AffiliateMonth[]>;
  /** Customer → the affiliate of their rebuilt days. */
  attributed: Map<string, string>;
  missing: Map<string, string[]>;
  wagering: Map<string, CachedDay[]>;
  /** The rebuilt days of flagged customers (RevShare leaves them out or holds them apart). */
  flagged: CachedDay[];
  dayDiffs: number;
}

/** Customer-days rebuilt month by month from raw activity and bonus transactions. */
async function rebuildDays(trx: Knex.Transaction, partner: string, customers: ReadonlyMap<string, CustomerFact>, wageringDays: number, repair: boolean, now: string, flagged: ReadonlySet<string>): Promise<Rebuilt> {
  const out: Rebuilt = { months: new Map(), attributed: new Map(), missing: new Map(), wagering: new Map(), flagged: [], dayDiffs: 0 };
  const bounds = (await trx('gaming_activity').where('partner_id', partner).min('date as lo').max('date as hi').first()) as { lo: unknown; hi: unknown } | undefined;
  const cachedBounds = (await trx('commission_customer_days').where('partner_id', partner).min('date as lo').max('date as hi').first()) as { lo: unknown; hi: unknown } | undefined;
  const los = [bounds?.lo, cachedBounds?.lo].filter((v) => v !== null && v !== undefined).map((v) => String(v).slice(0, 10)).sort();
  const his = [bounds?.hi, cachedBounds?.hi].filter((v) => v !== null && v !== undefined).map((v) => String(v).slice(0, 10)).sort();
  if (los.length === 0) return out;
  const sums = new Map<string, AffiliateMonth>();
  for (let month = monthOf(los[0] as string); month <= monthOf(his[his.length - 1] as string); month = nextMonth(month)) {
    const from = `${month}-01`;
    const to = lastDayOf(month);
    const rows: Record<string, unknown>[] = await trx('gaming_activity').where('partner_id', partner).whereBetween('date', [from, to])
      .select('customer_id', 'date', 'game_type', 'currency', 'total_bets', 'wins', 'ggr', 'ngr');
    const byPair = new Map<string, ActivityRow[]>();
    for (const r of rows.map(toActivityRow)) {
      const k = `${r.customerId}\u0000${r.date}`;
      append(byPair, k, r);
    }
    const bonusRows: Record<string, unknown>[] = await trx('transactions').where('partner_id', partner).where('transaction_type', 'bonus')
      .where('transaction_date', '>=', `${from}T00:00:00.000000Z`).where('transaction_date', '<', `${addDays(to, 1)}T00:00:00.000000Z`).select(TX_COLUMNS);
    const bonuses = new Map<string, ReturnType<typeof toTxFact>[]>();
    for (const b of bonusRows.map(toTxFact)) {
      if (b.status !== 'approved') continue;
      const k = `${b.customerId}\u0000${b.day}`;
      append(bonuses, k, b);
    }
    const fx = await RateBook.load(trx, [...rows.map((r) => [String(r.currency), String(r.date).slice(0, 10)] as [string, string]), ...ratePairs([...bonuses.values()].flat())]);
    const rebuilt = new Map<string, CachedDay>();
    for (const [k, list] of byPair) {
      const [customerId, date] = k.split('\u0000') as [string, string];
      const customer = customers.get(customerId);
      const values = customer ? deriveDay(list, bonuses.get(k) ?? [], fx) : null;
      if (!values || !customer) continue;
      rebuilt.set(k, { ...values, customerId, date, affiliateId: customer.affiliateId });
    }
    const cachedRows: Record<string, unknown>[] = await trx('commission_customer_days').where('partner_id', partner).whereBetween('date', [from, to]).select('*');
    const cached = new Map(cachedRows.map(toCachedDay).map((d) => [`${d.customerId}\u0000${d.date}`, d]));
    const upserts: CachedDay[] = [];
    const deletes: CachedDay[] = [];
    for (const [k, d] of rebuilt) {
      const c = cached.get(k);
      const same = c !== undefined && sameDay(c, d);
      if (!same) {
        out.dayDiffs += 1;
        upserts.push(d);
      }
      out.attributed.set(d.customerId, d.affiliateId);
      if (flagged.has(d.customerId)) out.flagged.push(d);
      const sk = monthKey(d.affiliateId, month);
      const s = sums.get(sk) ?? { affiliateId: d.affiliateId, month, ggr: ZERO, ngr: ZERO, days: 0, missingDays: 0 };
      s.days += 1;
      if (d.missing.length > 0) {
        s.missingDays += 1;
        out.missing.set(sk, [...new Set([...(out.missing.get(sk) ?? []), ...d.missing])].sort());
      } else {
        s.ggr = s.ggr.plus(d.ggr as typeof s.ggr);
        s.ngr = s.ngr.plus(d.ngr as typeof s.ngr);
      }
      sums.set(sk, s);
      const customer = customers.get(d.customerId) as CustomerFact;
      if (wageringDays > 0 && d.date >= customer.signupDay && d.date < addDays(customer.signupDay, wageringDays)) append(out.wagering, d.customerId, d);
    }
    for (const [k, c] of cached) if (!rebuilt.has(k)) {
      out.dayDiffs += 1;
      deletes.push(c);
    }
    if (repair) await writeCachedDays(trx, partner, upserts, deletes, now);
  }
  for (const m of sums.values()) append(out.months, m.affiliateId, m);
  for (const list of out.wagering.values()) list.sort((a, b) => (a.date < b.date ? -1 : 1));
  return out;
}

async function compareMonths(trx: Knex.Transaction, partner: string, months: Map<string, AffiliateMonth[]>, repair: boolean, now: string): Promise<number> {
  const rows: Record<string, unknown>[] = await trx('commission_affiliate_months').where('partner_id', partner).select('*');
  const stored = new Map(rows.map((r) => [monthKey(String(r.affiliate_id), String(r.month)), r]));
  const rebuilt = new Map([...months.values()].flat().map((m) => [monthKey(m.affiliateId, m.month), m]));
  let diffs = 0;
  for (const [k, m] of rebuilt) {
    const r = stored.get(k);
    if (!r || !money(r.ggr_usd).equals(m.ggr) || !money(r.ngr_usd).equals(m.ngr) || Number(r.days) !== m.days || Number(r.missing_days) !== m.missingDays) diffs += 1;
  }
  for (const k of stored.keys()) if (!rebuilt.has(k)) diffs += 1;
  if (repair && diffs > 0) {
    await trx('commission_affiliate_months').where('partner_id', partner).delete();
    const all = [...rebuilt.values()].map((m) => ({ partner_id: partner, affiliate_id: m.affiliateId, month: m.month, ggr_usd: m.ggr.toFixed(), ngr_usd: m.ngr.toFixed(), days: m.days, missing_days: m.missingDays, updated_at: now }));
    for (const part of dialectOf(trx).insertChunks(all)) await trx('commission_affiliate_months').insert(part);
  }
  return diffs;
}

async function compareAttributions(trx: Knex.Transaction, partner: string, attributed: Map<string, string>, repair: boolean, now: string): Promise<number> {
  const rows: { customer_id: string; affiliate_id: string }[] = await trx('commission_customers').where('partner_id', partner).select('customer_id', 'affiliate_id');
  const stored = new Map(rows.map((r) => [r.customer_id, r.affiliate_id]));
  let diffs = 0;
  for (const [c, a] of attributed) if (stored.get(c) !== a) diffs += 1;
  // A customer with no customer-day left may keep a row: it moves nothing.
  if (repair && diffs > 0) {
    await trx('commission_customers').where('partner_id', partner).delete();
    const all = [...attributed].map(([c, a]) => ({ partner_id: partner, customer_id: c, affiliate_id: a, updated_at: now }));
    for (const part of dialectOf(trx).insertChunks(all)) await trx('commission_customers').insert(part);
  }
  return diffs;
}

async function partnerLines(trx: Knex.Transaction, partner: string): Promise<{ lines: Map<string, LineState[]>; meta: Map<string, { plan: string; customer: string | null; periods: Set<string> }> }> {
  const lines = new Map<string, LineState[]>();
  const meta = new Map<string, { plan: string; customer: string | null; periods: Set<string> }>();
  let after = 0;
  for (;;) {
    const rows: Record<string, unknown>[] = await trx('commission_ledger').where('partner_id', partner).where('id', '>', after).orderBy('id').limit(5000)
      .select('id', 'line_key', 'plan_id', 'customer_id', 'affiliate_id', 'amount_usd', 'reason', 'ref_id', 'period', 'created_at');
    for (const r of rows) {
      const key = String(r.line_key);
      const line: LineState = { id: Number(r.id), affiliate: String(r.affiliate_id), amount: money(r.amount_usd), reason: String(r.reason), refId: r.ref_id === null ? null : String(r.ref_id), period: String(r.period), createdAt: fromStoreTimestamp(r.created_at) ?? '' };
      append(lines, key, line);
      const m = meta.get(key) ?? { plan: String(r.plan_id), customer: r.customer_id === null ? null : String(r.customer_id), periods: new Set<string>() };
      m.periods.add(line.period);
      meta.set(key, m);
    }
    if (rows.length < 5000) break;
    after = Number(rows[rows.length - 1]?.id);
  }
  return { lines, meta };
}

async function recomputePartner(store: Store, trx: Knex.Transaction, allPlans: readonly Plan[], partner: string, variant: Variant, options: RecomputeOptions): Promise<PartnerRecompute> {
  const now = store.now();
  const plans = plansFor(allPlans, partner, variant);
  const report: PartnerRecompute = { partner, variant, keys: 0, differences: [], held: [], derived: { customer_days: 0, affiliate_months: 0, attributions: 0 } };
  const customers = await allCustomers(trx, partner);
  const cpaPlans = plans.filter((p): p is CpaFtdPlan => p.kind === 'cpa_ftd');
  const revsharePlans = plans.filter((p): p is RevsharePlan => p.kind === 'revshare');
  const wageringDays = Math.max(0, ...cpaPlans.map((p) => p.wagering?.days ?? 0));
  const needDays = variant === 'igaming' && (revsharePlans.length > 0 || wageringDays > 0);
  const repair = options.repair === true;
  // A whole-partner repair evaluates everything a pending scope names; a month's repair does not, so it leaves them.
  const taken = repair && options.month === undefined && options.affiliate === undefined ? await readPending(trx, partner) : undefined;

  const reviews = await readReviews(trx, partner);
  let rebuilt: Rebuilt = { months: new Map(), attributed: new Map(), missing: new Map(), wagering: new Map(), flagged: [], dayDiffs: 0 };
  if (needDays) {
    rebuilt = await rebuildDays(trx, partner, customers, wageringDays, repair, now, new Set(reviews.keys()));
    report.derived.customer_days = rebuilt.dayDiffs;
    report.derived.affiliate_months = await compareMonths(trx, partner, rebuilt.months, repair, now);
    report.derived.attributions = await compareAttributions(trx, partner, rebuilt.attributed, repair, now);
  }
  const { lines, meta } = await partnerLines(trx, partner);
  const targets: Target[] = [];
  const currentMonth = monthOf(now.slice(0, 10));

  const perCustomerPlans = plans.filter((p) => p.kind !== 'revshare');
  if (perCustomerPlans.length > 0) {
    const src: TargetSource = { plans: perCustomerPlans, customers, lines, now };
    const ids = [...customers.keys()];
    for (const part of dialectOf(trx).chunks(ids, 500)) {
      const txs = await readTransactions(trx, partner, part, transactionTypes(perCustomerPlans));
      const fx = await RateBook.load(trx, ratePairs([...txs.values()].flat()));
      const own: Target[] = [];
      for (const id of part) own.push(...customerTargets(src, customers.get(id) as CustomerFact, txs.get(id) ?? [], rebuilt.wagering.get(id) ?? [], fx));
      targets.push(...applyReview(own, reviews, lines, currentMonth));
    }
  }
  const flaggedDays = flaggedDaysByAffiliate(rebuilt.flagged);
  for (const plan of revsharePlans) {
    const affiliates = new Map<string, Set<string>>();
    for (const [affiliate, months] of rebuilt.months) affiliates.set(affiliate, new Set(months.map((m) => m.month)));
    for (const [key, m] of meta) {
      if (m.plan !== plan.id || !key.startsWith('revshare|')) continue;
      const parts = key.split('|');
      const affiliate = parts[3] as string;
      const month = parts[4] as string;
      affiliates.set(affiliate, (affiliates.get(affiliate) ?? new Set()).add(month));
    }
    for (const [affiliate, evaluate] of affiliates) {
      const missing = new Map<string, string[]>();
      for (const m of evaluate) missing.set(m, rebuilt.missing.get(monthKey(affiliate, m)) ?? []);
      targets.push(...reviewedRevshareTargets({ plan, affiliate, months: rebuilt.months.get(affiliate) ?? [], evaluate, missing, sources: new Map([...evaluate].map((m) => [m, ['recompute']])), now }, flaggedDays.get(affiliate) ?? [], reviews));
    }
  }

  // Keys the ledger knows that no rule produced any more: recomputed as zero.
  const produced = new Set(targets.map((t) => t.key));
  for (const [key, m] of meta) {
    if (produced.has(key)) continue;
    const plan = allPlans.find((p) => p.id === m.plan);
    const affiliate = [...totalsByAffiliate(lines.get(key)).keys()][0] ?? '';
    if (!plan) {
      for (const [aff, total] of totalsByAffiliate(lines.get(key))) {
        if (total.isZero() || (options.affiliate !== undefined && aff !== options.affiliate)) continue;
        report.differences.push({ key, plan_id: m.plan, plan_kind: key.split('|')[0] ?? '', partner, affiliate: aff, customer: m.customer, period: [...m.periods].sort().pop() ?? '', ledger_usd: total.toFixed(2), recomputed_usd: '0.00', difference_usd: total.negated().toFixed(2), reason: `plan ${m.plan} is no longer in the plans file` });
      }
      continue;
    }
    targets.push({ key, plan, affiliate, customer: m.customer, amount: ZERO, missing: [], reason: 'correction', period: monthOf(now.slice(0, 10)), refId: null, sources: ['recompute'], basis: { why: 'no record produces this key any more' } });
  }

  const byKey = new Map<string, Target[]>();
  for (const t of targets) append(byKey, t.key, t);
  const inMonth = (key: string, list: readonly Target[]): boolean =>
    options.month === undefined || list.some((t) => t.period === options.month) || (meta.get(key)?.periods.has(options.month) ?? false);
  const ofAffiliate = (key: string, list: readonly Target[]): boolean =>
    options.affiliate === undefined || list.some((t) => t.affiliate === options.affiliate) || totalsByAffiliate(lines.get(key)).has(options.affiliate);
  const repairTargets: Target[] = [];
  for (const [key, list] of byKey) {
    if (!inMonth(key, list) || !ofAffiliate(key, list)) continue;
    report.keys += 1;
    const totals = totalsByAffiliate(lines.get(key));
    let differs = false;
    for (const t of completeTargets(list, lines.get(key), currentMonth)) {
      const total = totals.get(t.affiliate) ?? ZERO;
      if (t.amount === null) {
        report.held.push({ key, affiliate: t.affiliate, ledger_usd: total.toFixed(2), missing: t.missing, ...(t.review ? { review_flags: t.review.flags } : {}) });
        continue;
      }
      if (t.amount.equals(total)) continue;
      differs = true;
      report.differences.push({
        key, plan_id: t.plan.id, plan_kind: t.plan.kind, partner, affiliate: t.affiliate, customer: t.customer, period: t.period,
        ledger_usd: total.toFixed(2), recomputed_usd: t.amount.toFixed(2), difference_usd: t.amount.minus(total).toFixed(2), reason: t.reason,
      });
    }
    if (repair && differs) repairTargets.push(...list);
  }
  if (repair) {
    const booked = await book(trx, repairTargets, lines, currentMonth, options.runId, now);
    report.repaired = { lines: booked.lines, net_usd: booked.net.toFixed(2) };
    if (taken) await dropPending(trx, partner, taken);
  }
  return report;
}

/** Recomputes every partner with plans (or one), each in one transaction under its commission lock. */
export async function recompute(store: Store, plans: readonly Plan[], options: RecomputeOptions): Promise<PartnerRecompute[]> {
  const out: PartnerRecompute[] = [];
  for (const { partner, variant } of await partnersOf(store.knex, options.partner)) {
    if (plansFor(plans, partner, variant).length === 0 && !(await store.knex('commission_ledger').where('partner_id', partner).first('id'))) continue;
    out.push(await store.transaction(async (trx) => {
      // The loads' lock first (a load never waits for the commission lock while holding it): no
      // batch commits data or pending scope between the reads of the rebuild.
      await lockPartnerLoads(store, trx, partner);
      await lockPartner(store, trx, partner);
      return recomputePartner(store, trx, plans, partner, variant, options);
    }));
  }
  return out;
}
