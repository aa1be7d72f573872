/**
 * One pass of an evaluation: a few thousand customers' customer-days re-derived (with the
 * RevShare month sums they move), then their per-customer keys (CPA, challenge fees, phase
 * bonuses) computed and booked. A bulk settle derives its passes first and books them once the
 * fraud rules ended (./engine.ts, evaluateIn); a batch's evaluation does both at once.
 */
import type { Knex } from 'knex';
import { addDays, monthOf } from '../kernel/dates.js';
import { RateBook } from '../kernel/fx.js';
import { append } from '../kernel/collections.js';
import { dialectOf } from '../store/dialect/index.js';
import { book, type Evaluation } from './booking.js';
import { applyMonthDeltas, reattributeDays, reattributedCustomers, recordAttribution, refreshDays, toCachedDay, type CachedDay } from './customer-days.js';
import { refreshDaysSql } from './customer-days-sql.js';
import { customerTargets, transactionTypes, type TargetSource } from './customer-targets.js';
import { readBonusTransactions, readCustomers, readTransactions, ratePairs, type CustomerFact, type TxFact } from './facts.js';
import { readKeyLines } from './ledger.js';
import { MonthDeltas } from './month-deltas.js';
import type { ChallengeCpaPlan, PhaseBonusPlan, Plan } from './plans.js';
import { applyReview, readReviews, type CustomerReview } from './review-holds.js';
import { FEE_TYPES, challengeKey } from './rules/challenge-cpa.js';
import { cpaKey } from './rules/cpa-ftd.js';
import { phaseKey } from './rules/phase-bonus.js';
import type { Scope } from './scope.js';
import { nameTombstones } from './deletes.js';
import type { LineState, Target } from './target.js';

/** What every pass of one evaluation shares. */
export interface Work {
  trx: Knex.Transaction;
  plans: readonly Plan[];
  scope: Scope;
  now: string;
  needDays: boolean;
  wageringDays: number;
  /** The affiliate months the passes moved, with their sources (no sums: each pass applied its own). */
  months: MonthDeltas;
  /** The keys the passes produced a target for. */
  produced: Set<string>;
}

/** One pass: these customers' customer-days (`pairs`: theirs of the scope) and their per-customer keys (CPA, challenge fees, phase bonuses). */
export async function evaluateCustomers(work: Work, ids: readonly string[], pairs: ReadonlyMap<string, ReadonlySet<string>>, setBased: boolean): Promise<Omit<Evaluation, 'partner'>> {
  return bookCustomers(work, await deriveCustomers(work, ids, pairs, setBased));
}

/** A pass whose customer-days are derived, its per-customer keys not evaluated yet. */
export interface DerivedPass {
  ids: readonly string[];
  customers: Map<string, CustomerFact>;
  /** Customers whose derived days fall in a CPA wagering window: their keys are evaluated too. */
  windowed: Set<string>;
  /** Customer-days written or removed. */
  days: number;
}

/** The customer-days of a pass (and the RevShare month sums they move): nothing here reads the fraud flags. */
export async function deriveCustomers(work: Work, ids: readonly string[], pairs: ReadonlyMap<string, ReadonlySet<string>>, setBased: boolean): Promise<DerivedPass> {
  const { trx, scope, now, wageringDays } = work;
  const partner = scope.partner;
  const customers = await readCustomers(trx, partner, ids);
  let days = 0;
  if (work.needDays) {
    const deltas = new MonthDeltas();
    const moved = await reattributedCustomers(trx, partner, customers, scope.customerRecords);
    const written = setBased
      ? await refreshDaysSql(trx, partner, pairs, customers, deltas, now)
      : await refreshDays(trx, partner, pairs, customers, (list, from, to) => readBonusTransactions(trx, partner, list, from, to), deltas, now);
    days = written.written + written.removed;
    days += await reattributeDays(trx, partner, moved, deltas, now);
    await recordAttribution(trx, partner, customers, [...moved, ...written.customers], now);
    await applyMonthDeltas(trx, partner, deltas, now);
    work.months.touchAll(deltas);
  }
  const windowed = new Set<string>();
  if (wageringDays > 0) {
    for (const [id, list] of pairs) {
      const c = customers.get(id);
      if (c && [...list].some((d) => d >= c.signupDay && d < addDays(c.signupDay, wageringDays))) windowed.add(id);
    }
  }
  return { ids, customers, windowed, days };
}

/** A derived pass's per-customer keys: CPA (also for customers whose activity changed inside a wagering window), challenge fees, phase bonuses. */
export async function bookCustomers(work: Work, pass: DerivedPass): Promise<Omit<Evaluation, 'partner'>> {
  return bookRead(work, pass, await readPass(work, pass));
}

/** What booking a pass reads from the store: its customers' transactions, wagering days, rates, the lines of their keys and their reviews. */
export interface PassReads {
  evaluated: CustomerFact[];
  /** The plans with per-customer keys (all but RevShare). */
  perCustomerPlans: Plan[];
  txs: Map<string, TxFact[]>;
  wagering: Map<string, CachedDay[]>;
  fx: RateBook;
  lines: Map<string, LineState[]>;
  reviews: Map<string, CustomerReview>;
}

/**
 * The reads of a pass's booking. Nothing here depends on another pass's booking as long as the
 * passes' customers differ (their keys, lines and reviews are theirs alone), so a pass's reads
 * may run while the previous pass books (evaluateIn); the fraud flags must be final.
 */
export async function readPass(work: Work, pass: DerivedPass): Promise<PassReads> {
  const { trx, plans, scope } = work;
  const { customers } = pass;
  const partner = scope.partner;
  const evaluatedIds = new Set<string>();
  for (const id of pass.ids) if (scope.customers.has(id) && customers.has(id)) evaluatedIds.add(id);
  for (const id of pass.windowed) evaluatedIds.add(id);
  const wageringDays = work.wageringDays;
  const perCustomerPlans = plans.filter((p) => p.kind !== 'revshare');
  const evaluated = [...evaluatedIds].map((id) => customers.get(id) as CustomerFact);
  const txs = perCustomerPlans.length > 0 && evaluated.length > 0 ? await readTransactions(trx, partner, evaluatedIds, transactionTypes(perCustomerPlans)) : new Map<string, TxFact[]>();
  const wagering = wageringDays > 0 && evaluated.length > 0 ? await readWageringDays(trx, partner, evaluated, wageringDays) : new Map<string, CachedDay[]>();
  const fx = await RateBook.load(trx, ratePairs([...txs.values()].flat()));
  const keys = new Set<string>();
  for (const c of evaluated) {
    for (const plan of perCustomerPlans) {
      if (plan.kind === 'cpa_ftd') keys.add(cpaKey(plan, c.customerId));
      if (plan.kind === 'phase_bonus') keys.add(phaseKey(plan as PhaseBonusPlan, c.customerId));
      if (plan.kind === 'challenge_cpa') {
        for (const t of txs.get(c.customerId) ?? []) if ((FEE_TYPES as readonly string[]).includes(t.type)) keys.add(challengeKey(plan as ChallengeCpaPlan, t.id));
      }
    }
  }
  const lines = keys.size > 0 ? await readKeyLines(trx, keys) : new Map<string, LineState[]>();
  const reviews = evaluated.length > 0 ? await readReviews(trx, partner, evaluatedIds) : new Map<string, CustomerReview>();
  return { evaluated, perCustomerPlans, txs, wagering, fx, lines, reviews };
}

/** A pass's targets from its reads, under its customers' reviews, booked. */
export async function bookRead(work: Work, pass: DerivedPass, read: PassReads): Promise<Omit<Evaluation, 'partner'>> {
  const { trx, scope, now } = work;
  const currentMonth = monthOf(now.slice(0, 10));
  const src: TargetSource = { plans: read.perCustomerPlans, customers: pass.customers, lines: read.lines, now };
  const perCustomer: Target[] = [];
  for (const c of read.evaluated) perCustomer.push(...customerTargets(src, c, read.txs.get(c.customerId) ?? [], read.wagering.get(c.customerId) ?? [], read.fx));
  const targets = nameTombstones(applyReview(perCustomer, read.reviews, read.lines, currentMonth), scope, read.lines);
  for (const t of targets) work.produced.add(t.key);
  const booked = await book(trx, targets, read.lines, currentMonth, scope.runId, now);
  return { ...booked, days: pass.days };
}

/**
 * The customer-days of these customers within their wagering windows [signup day, signup day + days):
 * one range scan per customer on the (partner, customer, date) key, so the rows read are the
 * windows' rows whatever the history's length. PostgreSQL: one statement per 1000 customers, the
 * windows as array parameters joined LATERAL to the scans (a fraction of the time of ten statements
 * of 100 UNION ALL'ed scans: bench/README.md, Commission job); SQLite: a UNION ALL per 100
 * customers, in-process.
 */
async function readWageringDays(knex: Knex, partner: string, customers: readonly CustomerFact[], days: number): Promise<Map<string, CachedDay[]>> {
  const out = new Map<string, CachedDay[]>();
  const dialect = dialectOf(knex);
  for (const part of dialect.chunks(customers, dialect.batchParameters ? 1000 : 100)) {
    let rows: Record<string, unknown>[];
    if (dialect.batchParameters) {
      const result = await knex.raw(`SELECT d.* FROM unnest(?::text[], ?::date[], ?::date[]) AS w(customer_id, since, until)
        CROSS JOIN LATERAL (SELECT * FROM commission_customer_days c WHERE c.partner_id = ? AND c.customer_id = w.customer_id AND c.date >= w.since AND c.date < w.until) d`,
      [part.map((c) => c.customerId), part.map((c) => c.signupDay), part.map((c) => addDays(c.signupDay, days)), partner]);
      rows = (result as { rows: Record<string, unknown>[] }).rows;
    } else {
      const [first, ...rest] = part.map((c) => knex('commission_customer_days').select('*')
        .where({ partner_id: partner, customer_id: c.customerId })
        .where('date', '>=', c.signupDay).where('date', '<', addDays(c.signupDay, days)));
      rows = rest.length === 0 ? await (first as Knex.QueryBuilder) : await (first as Knex.QueryBuilder).unionAll(rest, false);
    }
    for (const r of rows) {
      const d = toCachedDay(r);
      append(out, d.customerId, d);
    }
  }
  for (const list of out.values()) list.sort((a, b) => (a.date < b.date ? -1 : 1));
  return out;
}
