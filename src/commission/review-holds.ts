/**
 * Review holds: commission of a customer under a fraud flag (docs/commissions.md, Review holds).
 *
 * - An OPEN flag holds the customer's keys: a target not yet booked is not booked, what was
 *   booked stays in the ledger but is withheld (a row in commission_review_holds, like the FX
 *   holds in commission_holds). The customer's activity is held apart from RevShare months.
 * - A DISMISSED flag releases them: the targets are booked, the holds removed.
 * - A CONFIRMED flag voids them: per-customer keys go to 0 (a `fraud_void` line reverses what
 *   was booked), and the customer's activity is excluded from RevShare months.
 *
 * The fraud side calls `markForReview` in the same transaction that opens a flag, adds customers
 * to it or records a decision. It writes those customers into the commission job's pending
 * scope, so the evaluation after the commit (or, after a crash, the partner's next evaluation)
 * re-evaluates their keys and the RevShare months their activity counts in, with the flags as
 * they stand then. The engine and `commissions recompute` apply the same functions below, so a
 * rebuild from history agrees with the incremental ledger.
 */
import type { Knex } from 'knex';
import { dialectOf } from '../store/dialect/index.js';
import type { Store } from '../store/store.js';
import { fromStoreTimestamp } from '../store/values.js';
import type { Variant } from '../types.js';
import type { AffiliateMonth, CachedDay } from './customer-days.js';
import { monthOf } from '../kernel/dates.js';
import { emptyScope, writePending } from './scope.js';
import { parseJson, readHeldEntries, totalsByAffiliate, type HeldEntry, type HoldFilter } from './ledger.js';
import { money, moneyOrNull, ZERO, type Money } from '../kernel/money.js';
import { revshareTargets, type RevshareInput } from './rules/revshare.js';
import type { FlagRef, LineState, ReviewMark, Target } from './target.js';
import { append } from '../kernel/collections.js';

/**
 * Adds these customers of the partner to the commission job's pending scope, in the caller's
 * transaction: their per-customer keys (CPA, challenge fees, phase bonuses) and the RevShare
 * months of their activity are evaluated again after the commit.
 */
export async function markForReview(trx: Knex.Transaction, store: Store, partner: string, variant: Variant, customerIds: Iterable<string>): Promise<void> {
  const scope = emptyScope(partner, variant, '');
  for (const id of customerIds) {
    scope.customers.add(id);
    scope.reviewed.add(id);
  }
  if (scope.customers.size === 0) return;
  await writePending(trx, scope, store.now());
}

/** The line reason of a confirmed flag's reversal. */
export const FRAUD_VOID = 'fraud_void';


/** A customer's flags that act on commissions: open ones hold, confirmed ones void (confirmed wins). */
export interface CustomerReview {
  open: FlagRef[];
  confirmed: FlagRef[];
}


const flagText = (flags: readonly FlagRef[]): string => flags.map((f) => `#${f.id} (${f.rule})`).join(', ');

/**
 * The open and confirmed flags of these customers of the partner (all flagged customers when
 * `customers` is omitted). One indexed query per 500 customers; flags are few.
 */
export async function readReviews(knex: Knex, partner: string, customers?: Iterable<string>): Promise<Map<string, CustomerReview>> {
  const out = new Map<string, CustomerReview>();
  const dialect = dialectOf(knex);
  const read = async (ids: string[] | null): Promise<void> => {
    const q = knex('fraud_flag_customers as fc').join('fraud_flags as f', 'f.id', 'fc.flag_id')
      .where('fc.partner_id', partner).where('f.partner_id', partner).whereIn('f.status', ['open', 'confirmed'])
      .select('fc.customer_id', 'f.id', 'f.rule', 'f.status').orderBy('f.id');
    if (ids) q.modify(dialect.inList('fc.customer_id', ids));
    const rows: { customer_id: string; id: unknown; rule: string; status: string }[] = await q;
    for (const r of rows) {
      let review = out.get(r.customer_id);
      if (!review) out.set(r.customer_id, (review = { open: [], confirmed: [] }));
      (r.status === 'confirmed' ? review.confirmed : review.open).push({ id: Number(r.id), rule: r.rule });
    }
  };
  if (customers === undefined) await read(null);
  else for (const part of dialect.chunks([...new Set(customers)], { form: 'inList' })) await read(part);
  return out;
}

/**
 * Per-customer targets (CPA, challenge fees, phase bonuses) under the customers' flags:
 * confirmed → 0 (`fraud_void`, naming the flags); open → held: nothing more is booked (the
 * review mark says what is withheld and what waits), while a target below what was booked (a
 * clawback, a correction) is booked; a target of 0 is never held (nothing is at stake).
 */
export function applyReview(targets: readonly Target[], reviews: ReadonlyMap<string, CustomerReview>, lines: ReadonlyMap<string, LineState[]>, currentMonth: string): Target[] {
  if (reviews.size === 0) return [...targets];
  return targets.map((t) => {
    const review = t.customer === null ? undefined : reviews.get(t.customer);
    if (!review) return t;
    const booked = totalsByAffiliate(lines.get(t.key)).get(t.affiliate) ?? ZERO;
    if (review.confirmed.length > 0) {
      if (t.amount !== null && t.amount.isZero()) return t;
      return {
        ...t, amount: ZERO, missing: [], reason: FRAUD_VOID, period: currentMonth,
        basis: { why: `fraud flag ${flagText(review.confirmed)} confirmed: the commission is void`, flags: review.confirmed, rule_target_usd: t.amount?.toFixed(2) ?? null, rule_reason: t.reason, rule_basis: t.basis },
      };
    }
    if (t.amount !== null && t.amount.isZero()) return t;
    const basis = { ...t.basis, review: `held while fraud flag ${flagText(review.open)} is open`, rule_target_usd: t.amount?.toFixed(2) ?? null };
    // A target at or below what was booked (a clawback, a correction) is booked: it pays nothing more. What stays is withheld.
    if (t.amount !== null && t.amount.lessThanOrEqualTo(booked)) return { ...t, review: { flags: review.open, withheld: t.amount, waiting: ZERO }, basis };
    return {
      ...t, amount: null,
      review: { flags: review.open, withheld: booked, waiting: t.amount === null ? null : t.amount.minus(booked) },
      basis,
    };
  });
}

/** The flagged customers' days, per affiliate: what RevShare months leave out or hold apart. */
export function flaggedDaysByAffiliate(days: readonly CachedDay[]): Map<string, CachedDay[]> {
  const out = new Map<string, CachedDay[]>();
  for (const d of days) append(out, d.affiliateId, d);
  return out;
}

/** The customer-days of these customers (flagged ones: few), from the derived table; only those attributed to `affiliates` when given. */
export async function readFlaggedDays(knex: Knex, partner: string, customers: Iterable<string>, toCachedDay: (r: Record<string, unknown>) => CachedDay, affiliates?: Iterable<string>): Promise<CachedDay[]> {
  const list = [...new Set(customers)];
  const only = affiliates === undefined ? undefined : [...new Set(affiliates)];
  const out: CachedDay[] = [];
  for (const part of dialectOf(knex).chunks(list, 500)) {
    const q = knex('commission_customer_days').where('partner_id', partner).whereIn('customer_id', part).select('*');
    if (only) q.whereIn('affiliate_id', only);
    const rows: Record<string, unknown>[] = await q;
    out.push(...rows.map(toCachedDay));
  }
  return out;
}

function without(months: readonly AffiliateMonth[], days: readonly CachedDay[]): AffiliateMonth[] {
  if (days.length === 0) return [...months];
  const byMonth = new Map(months.map((m) => [m.month, { ...m }]));
  for (const d of days) {
    const m = byMonth.get(monthOf(d.date));
    if (!m) continue;
    m.days -= 1;
    if (d.missing.length > 0) m.missingDays -= 1;
    else {
      m.ggr = m.ggr.minus(d.ggr ?? ZERO);
      m.ngr = m.ngr.minus(d.ngr ?? ZERO);
    }
  }
  return [...byMonth.values()];
}

/**
 * RevShare targets of an affiliate with its flagged customers taken out: a confirmed customer's
 * activity is excluded; an open one's is held apart (the month is booked without it, and a review
 * mark names the share that waits: the month with it minus the month without it).
 */
export function reviewedRevshareTargets(input: RevshareInput, flaggedDays: readonly CachedDay[], reviews: ReadonlyMap<string, CustomerReview>): Target[] {
  if (flaggedDays.length === 0) return revshareTargets(input);
  const confirmedDays = flaggedDays.filter((d) => (reviews.get(d.customerId)?.confirmed.length ?? 0) > 0);
  const openDays = flaggedDays.filter((d) => { const r = reviews.get(d.customerId); return r !== undefined && r.confirmed.length === 0 && r.open.length > 0; });
  const withOpen = without(input.months, confirmedDays);
  const targets = revshareTargets({ ...input, months: without(withOpen, openDays) });
  if (confirmedDays.length === 0 && openDays.length === 0) return targets;
  const withOpenTargets = openDays.length > 0 ? new Map(revshareTargets({ ...input, months: withOpen }).map((t) => [t.key, t])) : new Map<string, Target>();
  const monthCustomers = (days: readonly CachedDay[], month: string): string[] => [...new Set(days.filter((d) => monthOf(d.date) === month).map((d) => d.customerId))].sort();
  return targets.map((t) => {
    const excluded = monthCustomers(confirmedDays, t.period);
    const apart = monthCustomers(openDays, t.period);
    if (excluded.length === 0 && apart.length === 0) return t;
    const basis: Record<string, unknown> = { ...t.basis };
    if (excluded.length > 0) basis.excluded_confirmed = excluded.map((c) => ({ customer: c, flags: reviews.get(c)?.confirmed ?? [] }));
    if (apart.length === 0) return { ...t, basis };
    const flags = [...new Map(apart.flatMap((c) => reviews.get(c)?.open ?? []).map((f) => [f.id, f])).values()].sort((a, b) => a.id - b.id);
    const other = withOpenTargets.get(t.key);
    const waiting = t.amount === null || !other || other.amount === null ? null : other.amount.minus(t.amount);
    basis.held_apart = apart.map((c) => ({ customer: c, flags: reviews.get(c)?.open ?? [] }));
    basis.held_apart_usd = waiting?.toFixed(2) ?? null;
    return { ...t, basis, review: { flags, withheld: ZERO, waiting } };
  });
}

/** Replaces the review holds of the evaluated keys with the marks of these targets; the flags they name get their held commission again. */
export async function replaceReviewHolds(trx: Knex.Transaction, evaluatedKeys: readonly string[], targets: readonly Target[], now: string): Promise<{ held: number; released: number }> {
  const previous = new Map<string, string>();
  // The flags whose holds change, and their partners: their held commission is summed again.
  const touched = new Set<number>();
  const partners = new Set<string>();
  const dialect = dialectOf(trx);
  const parts = dialect.chunks(evaluatedKeys, { form: 'inList' });
  for (const part of parts) {
    const rows: { line_key: string; affiliate_id: string; since: unknown; partner_id: string; flags: unknown }[] = await trx('commission_review_holds')
      .modify(dialect.inList('line_key', part)).select('line_key', 'affiliate_id', 'since', 'partner_id', 'flags');
    for (const r of rows) {
      previous.set(`${r.line_key}\u0000${r.affiliate_id}`, fromStoreTimestamp(r.since) ?? now);
      partners.add(r.partner_id);
      for (const f of parseJson<FlagRef[]>(r.flags)) touched.add(Number(f.id));
    }
  }
  const marked = targets.filter((t) => t.review !== undefined);
  for (const t of marked) {
    partners.add(t.plan.partner);
    for (const f of (t.review as ReviewMark).flags) touched.add(Number(f.id));
  }
  if (previous.size === 0 && marked.length === 0) return { held: 0, released: 0 };
  for (const part of parts) await trx('commission_review_holds').modify(dialect.inList('line_key', part)).delete();
  const rows = marked.map((t) => {
    const r = t.review as ReviewMark;
    return {
      line_key: t.key, affiliate_id: t.affiliate, plan_id: t.plan.id, plan_kind: t.plan.kind, partner_id: t.plan.partner, customer_id: t.customer,
      period: t.period, flags: JSON.stringify(r.flags), withheld_usd: r.withheld.toFixed(2), waiting_usd: r.waiting === null ? null : r.waiting.toFixed(2),
      since: previous.get(`${t.key}\u0000${t.affiliate}`) ?? now, updated_at: now,
    };
  });
  for (const part of dialect.insertChunks(rows)) await trx('commission_review_holds').insert(part);
  await refreshFlagHeld(trx, [...partners], touched);
  const still = new Set(marked.map((t) => `${t.key}\u0000${t.affiliate}`));
  return { held: marked.length, released: [...previous.keys()].filter((k) => !still.has(k)).length };
}

/** USD cents of an amount (the flags' held commission is kept in whole cents, to sort by in the store). */
const cents = (m: Money): number => Number(m.times(100).toDecimalPlaces(0).toFixed(0));

/**
 * fraud_flags.held_cents of these flags: what the review holds naming each of them withhold and
 * keep waiting (a hold naming two flags counts in both: deciding either alone does not release
 * it). Read from the partners' review holds, which are few (they exist only under open flags).
 */
export async function refreshFlagHeld(trx: Knex.Transaction, partners: readonly string[], flags: ReadonlySet<number>): Promise<void> {
  if (flags.size === 0) return;
  const held = new Map<number, Money>([...flags].map((id) => [id, ZERO]));
  const rows: { flags: unknown; withheld_usd: unknown; waiting_usd: unknown }[] = partners.length === 0 ? [] : await trx('commission_review_holds')
    .whereIn('partner_id', partners).select('flags', 'withheld_usd', 'waiting_usd');
  for (const r of rows) {
    const amount = money(r.withheld_usd as string).plus(moneyOrNull(r.waiting_usd as string | null) ?? ZERO);
    for (const f of parseJson<FlagRef[]>(r.flags)) {
      const before = held.get(Number(f.id));
      if (before !== undefined) held.set(Number(f.id), before.plus(amount));
    }
  }
  const byAmount = new Map<number, number[]>();
  for (const [id, m] of held) append(byAmount, cents(m), id);
  for (const [value, ids] of byAmount) {
    for (const part of dialectOf(trx).chunks(ids.sort((a, b) => a - b), 500)) await trx('fraud_flags').whereIn('id', part).update({ held_cents: value });
  }
}

export interface ReviewHold extends HeldEntry {
  flags: FlagRef[];
  withheld_usd: string;
  waiting_usd: string | null;
}

/** Review holds (fraud flags open), optionally of one partner, affiliate or month. */
export async function listReviewHolds(knex: Knex, filter: HoldFilter = {}): Promise<ReviewHold[]> {
  return (await readHeldEntries(knex, 'commission_review_holds', filter)).map(({ entry, row }) => ({
    ...entry,
    flags: parseJson<FlagRef[]>(row.flags),
    withheld_usd: money(row.withheld_usd).toFixed(2),
    waiting_usd: moneyOrNull(row.waiting_usd)?.toFixed(2) ?? null,
  }));
}

/** Review holds per partner, for `status`: how many, since when, withheld and waiting USD, the flags. */
export async function reviewHoldSummary(knex: Knex): Promise<{ partner: string; held: number; oldest: string; withheld_usd: string; waiting_usd: string; flags: number[] }[]> {
  const byPartner = new Map<string, { partner: string; held: number; oldest: string; withheld: Money; waiting: Money; flags: Set<number> }>();
  for (const h of await listReviewHolds(knex)) {
    let s = byPartner.get(h.partner_id);
    if (!s) byPartner.set(h.partner_id, (s = { partner: h.partner_id, held: 0, oldest: h.since, withheld: ZERO, waiting: ZERO, flags: new Set() }));
    s.held += 1;
    if (h.since < s.oldest) s.oldest = h.since;
    s.withheld = s.withheld.plus(money(h.withheld_usd));
    if (h.waiting_usd !== null) s.waiting = s.waiting.plus(money(h.waiting_usd));
    for (const f of h.flags) s.flags.add(f.id);
  }
  return [...byPartner.values()].map((s) => ({ partner: s.partner, held: s.held, oldest: s.oldest, withheld_usd: s.withheld.toFixed(2), waiting_usd: s.waiting.toFixed(2), flags: [...s.flags].sort((a, b) => a - b) }));
}
