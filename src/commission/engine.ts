/**
 * The commission engine: for the scope a batch touched (its customers, customer-days and
 * activity days), re-derive what depends on them, compute every affected key's target from the
 * store, and append one line per key and affiliate whose ledger total differs. One store
 * transaction per partner, serialised per partner across processes, so two runs can never both
 * book the same difference. Rerunning anything that changed nothing adds no line.
 */
import type { Knex } from 'knex';
import { dialectOf } from '../store/dialect/index.js';
import type { Store } from '../store/store.js';
import type { Variant } from '../types.js';
import { readAffiliateMonths, toCachedDay } from './customer-days.js';
import { MonthDeltas, splitMonthKey } from './month-deltas.js';
import { monthOf } from '../kernel/dates.js';
import { readKeyLines, totalsByAffiliate } from './ledger.js';
import { type LineState, type Target } from './target.js';
import { ZERO } from '../kernel/money.js';
import { PLAN_VARIANT, type ChallengeCpaPlan, type CpaFtdPlan, type Plan, type RevsharePlan } from './plans.js';
import { CHALLENGE_REASONS, challengeKey } from './rules/challenge-cpa.js';
import { revshareKey } from './rules/revshare.js';
import { deletedCustomerKeys, deletedCustomerTargets, nameTombstones } from './deletes.js';
import { addDay, KEY_KINDS, openDayTakes, savePending, takePending, type Scope } from './scope.js';
import { flaggedDaysByAffiliate, readFlaggedDays, readReviews, reviewedRevshareTargets } from './review-holds.js';
import { book, type Evaluation } from './booking.js';
import { bookRead, deriveCustomers, evaluateCustomers, readPass, type DerivedPass, type PassReads, type Work } from './customer-pass.js';

/** Cross-process exclusion per partner (the dialect's transaction lock; SQLite's transactions are serial already). */
export async function lockPartner(store: Store, trx: Knex.Transaction, partner: string): Promise<void> {
  await store.dialect.transactionLock(trx, `partner-sync commissions ${partner}`);
}

/** The plans that read a partner's data of this variant. */
export function plansFor(plans: readonly Plan[], partner: string, variant: Variant): Plan[] {
  return plans.filter((p) => p.partner === partner && PLAN_VARIANT[p.kind] === variant);
}

/**
 * Evaluates a scope in its own transaction under the partner's lock. A failure leaves the scope
 * pending. `after`: what must have ended before anything reads the fraud flags (a bulk settle's
 * fraud rules, judged on another connection meanwhile): the customer-days are derived before it
 * resolves, the per-customer keys, RevShare months and holds after, with the pending customers
 * and reviews taken then (the flags' changes add some). A rejection fails the evaluation.
 * `daysDerived` is called once the customer-days are, before the wait for `after`.
 */
export async function evaluateScope(store: Store, plans: readonly Plan[], scope: Scope, options: { after?: Promise<unknown>; daysDerived?: () => void } = {}): Promise<Evaluation> {
  try {
    return await store.transaction(async (trx) => {
      await lockPartner(store, trx, scope.partner);
      // What the customer-days are derived from first; the customers whose keys are evaluated
      // (those the fraud rules' flag changes add too) once `after` has resolved.
      await takePending(trx, scope, { days: false, keys: false });
      return evaluateIn(trx, plans, scope, store.now(), await openDayTakes(trx, scope), async () => {
        options.daysDerived?.();
        await options.after;
        await takePending(trx, scope, { only: KEY_KINDS });
      });
    });
  } catch (error) {
    try {
      await savePending(store, scope);
    } catch {
      // The original failure is what the caller must see; recompute finds what was left.
    }
    throw error;
  }
}


/**
 * The rates each held RevShare month of these affiliates waits for: from their customer-days still
 * missing one, read as distinct (affiliate, day, missing) from the store, not one row per customer:
 * a backfill without rates holds most of its days, and reading them all again at every evaluation
 * grew with the history (1.6 million rows read for 1 million loaded).
 */
async function missingByMonth(knex: Knex, partner: string, affiliates: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, Set<string>>();
  for (const part of dialectOf(knex).chunks(affiliates, 300)) {
    const rows: { affiliate_id: string; date: unknown; missing: string }[] = await knex('commission_customer_days').where('partner_id', partner).whereNotNull('missing')
      .whereIn('affiliate_id', part).distinct('affiliate_id', 'date', 'missing');
    for (const r of rows) {
      const key = `${r.affiliate_id}\u0000${monthOf(String(r.date).slice(0, 10))}`;
      const set = out.get(key) ?? new Set<string>();
      for (const m of r.missing.split(',')) set.add(m);
      out.set(key, set);
    }
  }
  return new Map([...out].map(([k, v]) => [k, [...v].sort()]));
}

/**
 * How many customers one pass of an evaluation holds in memory (their customers, transactions,
 * lines), and how many customer-days (their activity rows): a larger scope, a bulk run's group, is
 * evaluated in passes of at most these, in the same transaction, and its RevShare months once,
 * after the last pass. So a group's size bounds the work left to evaluate, not the memory the
 * evaluation takes. PARTNER_SYNC_EVALUATION_CUSTOMERS changes the customers per pass (the days
 * follow at five a customer).
 */
export function evaluationPass(env: NodeJS.ProcessEnv = process.env): { customers: number; days: number } {
  const given = Number(env.PARTNER_SYNC_EVALUATION_CUSTOMERS);
  const customers = Number.isInteger(given) && given > 0 ? given : 2_000;
  return { customers, days: customers * 5 };
}

/**
 * Evaluates a scope in the caller's transaction. `takeDays`, when given, takes more customer-days
 * of the partner's pending scope, at most `limit` a call (openDayTakes): as long as takes come
 * back full (a bulk group's days), each is evaluated on its own, so that an evaluation's memory
 * follows the take, not the group; the last one joins `scope`'s own days and customers.
 */
export async function evaluateIn(trx: Knex.Transaction, allPlans: readonly Plan[], scope: Scope, now: string,
  takeDays?: (limit: number) => Promise<{ days: Map<string, Set<string>>; entries: number }>, beforeKeys?: () => Promise<void>): Promise<Evaluation> {
  const result: Evaluation = { partner: scope.partner, keys: 0, lines: 0, net: ZERO, held: 0, missingRates: [], released: 0, reviewHeld: 0, reviewReleased: 0, days: 0 };
  const plans = plansFor(allPlans, scope.partner, scope.variant);
  if (plans.length === 0) {
    // Nothing reads the days; they are taken all the same, as the rest of the scope was.
    while (takeDays && (await takeDays(TAKE_DAYS_MAX)).entries > 0);
    await beforeKeys?.();
    return result;
  }
  const partner = scope.partner;
  const revsharePlans = plans.filter((p): p is RevsharePlan => p.kind === 'revshare');
  const wageringDays = Math.max(0, ...plans.filter((p): p is CpaFtdPlan => p.kind === 'cpa_ftd').map((p) => p.wagering?.days ?? 0));
  const needDays = scope.variant === 'igaming' && (revsharePlans.length > 0 || wageringDays > 0);
  const work: Work = { trx, plans, scope, now, needDays, wageringDays, months: new MonthDeltas(SOURCES_LISTED), produced: new Set() };
  const limit = evaluationPass();
  const evaluated = new Set<string>();
  // A bulk group's takes re-derive their customer-days set-based where the store sums money
  // exactly (PostgreSQL: ./customer-days-sql.ts); the rest, a batch's few days, in the process.
  const dialect = dialectOf(trx);
  const setBased = dialect.exactDecimals;
  /** The customers in passes, each with its days of `pairs`; every customer is marked evaluated. */
  const passes = function* (ids: readonly string[], pairs: ReadonlyMap<string, ReadonlySet<string>>) {
    for (const pass of customerPasses(ids, pairs, limit)) {
      const passPairs = new Map<string, ReadonlySet<string>>();
      for (const id of pass) {
        const days = pairs.get(id);
        if (days) passPairs.set(id, days);
        evaluated.add(id);
      }
      yield [pass, passPairs] as const;
    }
  };

  // 1. The customers who had customer-days on the activity days replaced whole, read before any
  // is re-derived here (a take's own writes are exact already).
  const pairs = new Map<string, Set<string>>();
  if (needDays) {
    const replaced = [...scope.replacedDays];
    for (const part of dialect.chunks(replaced, 500)) {
      const rows: { customer_id: string; date: unknown }[] = await trx('commission_customer_days').where('partner_id', partner).whereIn('date', part).select('customer_id', 'date');
      for (const r of rows) {
        const set = pairs.get(r.customer_id) ?? new Set<string>();
        set.add(String(r.date).slice(0, 10));
        pairs.set(r.customer_id, set);
      }
    }
  }

  // 2. A bulk group's customer-days, take by take, derived pass by pass (with the replaced days of
  // 1 of their customers); the passes' per-customer keys after `beforeKeys` (2b).
  const derived: DerivedPass[] = [];
  if (takeDays) {
    const size = limit.days * 2;
    for (;;) {
      const take = await takeDays(size);
      const last = take.entries < size;
      // The last take joins the scope's own days unless it is a bulk group's remainder, large
      // enough to be worth the set-based statement (bench/README.md, the whole pipeline).
      if (last && (!needDays || !setBased || take.entries < limit.days / LAST_TAKE_SHARE)) {
        for (const [c, days] of take.days) for (const d of days) addDay(scope, c, d);
        break;
      }
      if (!needDays) continue;
      for (const [c, days] of take.days) {
        const replaced = pairs.get(c);
        if (!replaced) continue;
        for (const d of replaced) days.add(d);
        pairs.delete(c);
      }
      for (const [pass, passPairs] of passes([...take.days.keys()], take.days)) derived.push(await deriveCustomers(work, pass, passPairs, setBased));
      if (last) break;
    }
  }
  // 2b. What reads the fraud flags comes after `beforeKeys` (a bulk settle's fraud rules end there).
  await beforeKeys?.();
  await bookPipelined(work, derived.splice(0), result);
  if (needDays) {
    for (const [c, days] of scope.days) {
      const set = pairs.get(c) ?? new Set<string>();
      for (const d of days) set.add(d);
      pairs.set(c, set);
    }
  }

  // 3. The customers, in passes: their customer-days and per-customer keys (those a take of 2
  // evaluated only when they have days here). The RevShare months they move are gathered over
  // every pass and evaluated once, after the last (4).
  // In the order of their ids: the lines a pass books come in that order, whichever entries named the customers first.
  const ids = [...new Set([...scope.customers, ...pairs.keys(), ...scope.customerRecords])].filter((id) => pairs.has(id) || !evaluated.has(id)).sort();
  for (const [pass, passPairs] of passes(ids, pairs)) addEvaluation(result, await evaluateCustomers(work, pass, passPairs, false));
  addEvaluation(result, await evaluateMonthsAndFormerFees(work, revsharePlans));
  return result;
}

/**
 * Books derived passes in order, each pass's reads sent while the previous one books: the store
 * reads the next customers' transactions, lines and reviews while the process computes and writes
 * this pass's lines (one after the other, the process and the store each sat idle about half of a
 * month's booking: bench/README.md, the whole pipeline). A pass sharing a customer with an earlier
 * one (a customer whose days straddle two takes) reads after the earlier one booked, as its lines
 * may have changed.
 */
async function bookPipelined(work: Work, passes: readonly DerivedPass[], result: Evaluation): Promise<void> {
  const seen = new Set<string>();
  const shares = (pass: DerivedPass): boolean => pass.ids.some((id) => seen.has(id));
  let next: Promise<PassReads> | undefined;
  for (let i = 0; i < passes.length; i += 1) {
    const pass = passes[i]!;
    const reads = next ? await next : await readPass(work, pass);
    for (const id of pass.ids) seen.add(id);
    const following = passes[i + 1];
    next = following && !shares(following) ? readPass(work, following) : undefined;
    // Handled now (a rejection while this pass books is no unhandled one); thrown when awaited above.
    next?.catch(() => undefined);
    try {
      addEvaluation(result, await bookRead(work, pass, reads));
    } catch (error) {
      // The read ahead ends before the transaction rolls back.
      await next?.catch(() => undefined);
      throw error;
    }
  }
}

/** The sources a RevShare line lists per month; past them, `more:N` (MonthDeltas.sourcesOf). */
const SOURCES_LISTED = 100;

/**
 * A last take of at least a pass's customer-days over this (2,000 by default: what a bulk group
 * leaves after its full takes) is evaluated as a take, set-based on PostgreSQL; a smaller one (a
 * batch's days) joins the scope and is derived in the process.
 */
const LAST_TAKE_SHARE = 5;

/** Customer-days a take reads when no plan reads them (they are only dropped). */
const TAKE_DAYS_MAX = 100_000;

/** The customers cut into passes of at most `limit.customers` customers and about `limit.days` customer-days. */
function customerPasses(ids: readonly string[], pairs: ReadonlyMap<string, ReadonlySet<string>>, limit: { customers: number; days: number }): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let days = 0;
  for (const id of ids) {
    const n = pairs.get(id)?.size ?? 0;
    if (current.length > 0 && (current.length >= limit.customers || days + n > limit.days)) {
      out.push(current);
      current = [];
      days = 0;
    }
    current.push(id);
    days += n;
  }
  if (current.length > 0) out.push(current);
  return out;
}

function addEvaluation(into: Evaluation, r: Omit<Evaluation, 'partner'>): void {
  into.keys += r.keys;
  into.lines += r.lines;
  into.net = into.net.plus(r.net);
  into.held += r.held;
  into.missingRates = [...new Set([...into.missingRates, ...r.missingRates])].sort();
  into.released += r.released;
  into.reviewHeld += r.reviewHeld;
  into.reviewReleased += r.reviewReleased;
  into.days += r.days;
}

/**
 * After the last pass: every RevShare month the passes moved (with carryover every later month of
 * that affiliate) and those of customers whose flags changed; and the keys of transactions that
 * were fees and that no pass produced any more.
 */
async function evaluateMonthsAndFormerFees(work: Work, revsharePlans: readonly RevsharePlan[]): Promise<Omit<Evaluation, 'partner'>> {
  const { trx, plans, scope, now } = work;
  const partner = scope.partner;
  const currentMonth = monthOf(now.slice(0, 10));
  const keys = new Set<string>();
  const formerFeeKeys = new Map<string, { plan: ChallengeCpaPlan; customer: string }>();
  for (const plan of plans) {
    if (plan.kind !== 'challenge_cpa') continue;
    for (const [id, customer] of scope.formerFees) formerFeeKeys.set(challengeKey(plan, id), { plan, customer });
  }
  for (const key of formerFeeKeys.keys()) keys.add(key);
  const deletedKeys = deletedCustomerKeys(plans, scope);
  for (const key of deletedKeys.keys()) keys.add(key);

  const touched = new Map<string, Set<string>>();
  for (const key of work.months.map.keys()) {
    const [affiliate, month] = splitMonthKey(key);
    touched.set(affiliate, (touched.get(affiliate) ?? new Set()).add(month));
  }
  const reviewSources = new Map<string, string[]>();
  if (revsharePlans.length > 0 && scope.reviewed.size > 0) {
    // Customers whose flags changed: every month their activity counts in.
    for (const d of await readFlaggedDays(trx, partner, scope.reviewed, toCachedDay)) {
      touched.set(d.affiliateId, (touched.get(d.affiliateId) ?? new Set()).add(monthOf(d.date)));
      const k = `${d.affiliateId}\u0000${monthOf(d.date)}`;
      const list = reviewSources.get(k) ?? [];
      if (!list.includes(`review:${d.customerId}`)) list.push(`review:${d.customerId}`);
      reviewSources.set(k, list);
    }
  }
  const flagged = revsharePlans.length > 0 && touched.size > 0 ? await readReviews(trx, partner) : new Map();
  const flaggedDays = flaggedDaysByAffiliate(flagged.size > 0 ? await readFlaggedDays(trx, partner, flagged.keys(), toCachedDay, touched.keys()) : []);
  const months = revsharePlans.length > 0 && touched.size > 0 ? await readAffiliateMonths(trx, partner, touched.keys()) : new Map();
  const missing = revsharePlans.length > 0 && touched.size > 0 ? await missingByMonth(trx, partner, [...touched.keys()]) : new Map<string, string[]>();
  const revshareWork: { plan: RevsharePlan; affiliate: string; evaluate: Set<string> }[] = [];
  for (const plan of revsharePlans) {
    for (const [affiliate, changed] of touched) {
      const evaluate = new Set(changed);
      if (plan.carryover) {
        const earliest = [...changed].sort()[0] as string;
        for (const m of months.get(affiliate) ?? []) if (m.month >= earliest) evaluate.add(m.month);
      }
      for (const m of evaluate) keys.add(revshareKey(plan, affiliate, m));
      revshareWork.push({ plan, affiliate, evaluate });
    }
  }
  if (keys.size === 0) return { keys: 0, lines: 0, net: ZERO, held: 0, missingRates: [], released: 0, reviewHeld: 0, reviewReleased: 0, days: 0 };

  const lines = await readKeyLines(trx, keys);
  const targets: Target[] = [];
  for (const w of revshareWork) {
    const sources = new Map<string, string[]>();
    const monthMissing = new Map<string, string[]>();
    for (const m of w.evaluate) {
      sources.set(m, work.months.sourcesOf(w.affiliate, m) ?? reviewSources.get(`${w.affiliate}\u0000${m}`) ?? [`carry:${w.affiliate}`]);
      monthMissing.set(m, missing.get(`${w.affiliate}\u0000${m}`) ?? []);
    }
    for (const [k, v] of missing) {
      const [affiliate, month] = k.split('\u0000') as [string, string];
      if (affiliate === w.affiliate) monthMissing.set(month, v);
    }
    targets.push(...reviewedRevshareTargets({ plan: w.plan, affiliate: w.affiliate, months: months.get(w.affiliate) ?? [], evaluate: w.evaluate, missing: monthMissing, sources, now }, flaggedDays.get(w.affiliate) ?? [], flagged));
  }
  targets.push(...nameTombstones(noLongerFees(formerFeeKeys, work.produced, lines, currentMonth), scope, lines));
  targets.push(...deletedCustomerTargets(deletedKeys, work.produced, scope, lines, currentMonth));
  const booked = await book(trx, targets, lines, currentMonth, scope.runId, now);
  return { ...booked, days: 0 };
}

/**
 * A fee key no rule produces any more (its transaction was re-sent as another type, or to a
 * customer not in the store yet) goes back to zero for every affiliate it paid, as recompute does.
 */
function noLongerFees(formerFeeKeys: ReadonlyMap<string, { plan: ChallengeCpaPlan; customer: string }>, produced: ReadonlySet<string>, lines: ReadonlyMap<string, LineState[]>, currentMonth: string): Target[] {
  const out: Target[] = [];
  for (const [key, { plan, customer }] of formerFeeKeys) {
    if (produced.has(key)) continue;
    for (const [affiliate, total] of totalsByAffiliate(lines.get(key))) {
      if (total.isZero()) continue;
      out.push({ key, plan, affiliate, customer, amount: ZERO, missing: [], reason: CHALLENGE_REASONS.correction, period: currentMonth, refId: key.split('|').pop() ?? null, sources: [`transactions:${key.split('|').pop() ?? ''}`], basis: { why: 'the transaction is no longer a fee of this customer' } });
    }
  }
  return out;
}

