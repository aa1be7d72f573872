/**
 * The report facts of a bulk run (Loader.deferJobs with `facts`; docs/loading.md, Bulk runs). A
 * batch does not move the facts by difference: it records, in its own transaction, what it
 * touched (report_pending): the UTC days whose cells its new and old versions count in, the
 * customers whose first deposit may have changed, and the customers whose cell or product moved
 * (their whole history moves with them). When the run settles a group, those days are recomputed
 * from the stored rows: set-based on PostgreSQL (./rebuild-sql.ts), day by day on SQLite
 * (./recompute-day.ts). The facts then equal a rebuild, whatever order the group's batches came in.
 */
import type { Knex } from 'knex';
import { utcDay } from '../kernel/dates.js';
import { loadLockKey } from '../pipeline/load-transaction.js';
import type { ChangeSet } from '../pipeline/jobs.js';
import { append } from '../kernel/collections.js';
import { marksByRunDay, runCustomers } from '../store/run-days.js';
import { dialectOf } from '../store/dialect/index.js';
import type { Store } from '../store/store.js';
import { fromStoreDate, fromStoreTimestamp } from '../store/values.js';
import type { Variant } from '../types.js';
import { campaignKey, pairKey, productKey } from './facts-values.js';
import { recomputeFtd } from './ftd.js';
import type { PriorVersions } from './priors.js';
import { recomputeDaysSql } from './rebuild-sql.js';
import { recomputeDay, recomputeMonths } from './recompute-day.js';

/** What a batch of a bulk run leaves for the report facts to recompute. */
export interface FactsScope {
  /** UTC days whose cells are recomputed. */
  days: Set<string>;
  /** Customers whose first approved deposit is looked at again. */
  ftd: Set<string>;
  /** Customers whose cell (affiliate, campaign) or product changed: every day of their rows. */
  moved: Set<string>;
  /**
   * UTC days of deposits the batch wrote, when it marks by run day (marksByRunDay): their
   * customers' first deposits are looked at again, listed at the settle from the rows the run
   * wrote on those days (src/store/run-days.ts) instead of one entry per customer.
   */
  ftdDays: Set<string>;
}

const KINDS = { days: 'day', ftd: 'ftd', moved: 'moved' } as const;
/** A run's deposit day: [run id, day] (FactsScope.ftdDays). */
const FTD_RUN_DAY = 'ftd_run_day';

/** The scope of a written batch, from its records and the stored versions they replaced (read before the write). */
export function factsScopeOf(change: Pick<ChangeSet, 'variant' | 'records' | 'replacedDays' | 'policy'>, priors: PriorVersions): FactsScope {
  const scope: FactsScope = { days: new Set(change.replacedDays), ftd: new Set(), moved: new Set(), ftdDays: new Set() };
  const byRunDay = marksByRunDay(change);
  for (const c of change.records.customers) {
    const id = String(c.customer_id);
    scope.days.add(utcDay(String(c.signup_date)));
    const was = priors.customers.get(id);
    if (!was) continue;
    scope.days.add(was.signupDay);
    if (was.pair !== pairKey(String(c.affiliate_id), campaignKey(c.campaign_id)) || was.product !== productKey(c.challenge_type, c.account_size)) scope.moved.add(id);
  }
  for (const record of change.records.transactions) {
    // Only its key, customer, type and UTC day: the whole written version (writtenTransaction, its
    // facts text) was a share of a month's load transactions (bench/README.md, the whole pipeline).
    const now = { id: String(record.transaction_id), customer: String(record.customer_id), type: String(record.transaction_type), day: utcDay(String(record.transaction_date)) };
    scope.days.add(now.day);
    const was = priors.transactions.get(now.id);
    if (was) scope.days.add(was.day);
    if (now.type === 'deposit') {
      if (byRunDay) scope.ftdDays.add(now.day);
      else scope.ftd.add(now.customer);
    }
    // A deposit that was one and stays one of the same customer is listed by its new run day.
    if (was?.type === 'deposit' && !(byRunDay && now.type === 'deposit' && was.customer === now.customer)) scope.ftd.add(was.customer);
  }
  // An activity row's key holds its customer and day: its old version counted in the same day. Only
  // iGaming activity counts in the cells.
  if (change.variant === 'igaming') for (const a of change.records.activity) scope.days.add(String(a.date).slice(0, 10));
  return scope;
}

/** Records the scope in report_pending, in the batch's transaction. */
export async function writeFactsPending(trx: Knex.Transaction, partner: string, variant: Variant, scope: FactsScope, runId: string, now: string): Promise<void> {
  const kinds: string[] = [];
  const values: string[] = [];
  for (const [field, kind] of Object.entries(KINDS) as [Exclude<keyof FactsScope, 'ftdDays'>, string][]) {
    for (const value of scope[field]) {
      kinds.push(kind);
      values.push(value);
    }
  }
  for (const day of scope.ftdDays) {
    kinds.push(FTD_RUN_DAY);
    values.push(JSON.stringify([runId, day]));
  }
  if (values.length === 0) return;
  await dialectOf(trx).insertColumns(trx, 'report_pending', { partner_id: ['text', partner], variant: ['text', variant], created_at: ['timestamptz', now] },
    { kind: ['text', kinds], value: ['text', values] }, { on: ['partner_id', 'kind', 'value'] });
}

/**
 * Recomputes what bulk runs left pending for the partner's report facts, in one transaction under
 * the partner's load lock (no batch moves the same cells meanwhile), taking the pending rows in
 * it: a crash leaves them all for the next settle. Returns the days recomputed.
 */
export async function settleFacts(store: Store, partner: string): Promise<number> {
  if (!(await store.knex('report_pending').where('partner_id', partner).first('partner_id'))) return 0;
  return store.transaction(async (trx) => {
    await store.dialect.transactionLock(trx, loadLockKey(partner));
    const rows: { kind: string; value: string; variant: Variant }[] = await trx('report_pending').where('partner_id', partner).select('kind', 'value', 'variant');
    if (rows.length === 0) return 0;
    await trx('report_pending').where('partner_id', partner).delete();
    const variant = (rows[0] as { variant: Variant }).variant;
    const days = new Set(rows.filter((r) => r.kind === KINDS.days).map((r) => r.value));
    const ftd = new Set(rows.filter((r) => r.kind === KINDS.ftd).map((r) => r.value));
    const moved = rows.filter((r) => r.kind === KINDS.moved).map((r) => r.value);
    await depositCustomersOfRunDays(trx, partner, variant, rows.filter((r) => r.kind === FTD_RUN_DAY).map((r) => JSON.parse(r.value) as [string, string]), ftd);
    for (const day of await daysOfCustomers(trx, partner, variant, moved)) days.add(day);
    for (const id of moved) ftd.add(id);
    return recomputeFacts(trx, partner, variant, days, ftd);
  });
}

/** Recomputes these days' cells and these customers' FTDs from the stored rows, in the caller's transaction. Returns the days. */
export async function recomputeFacts(trx: Knex.Transaction, partner: string, variant: Variant, days: Set<string>, ftd: ReadonlySet<string>): Promise<number> {
  if (dialectOf(trx).exactDecimals) {
    await recomputeDaysSql(trx, partner, variant, days, [...ftd]);
    return days.size;
  }
  for (const changed of (await recomputeFtd(trx, partner, [...ftd])).values()) for (const day of changed) days.add(day);
  for (const day of [...days].sort()) await recomputeDay(trx, partner, variant, day);
  await recomputeMonths(trx, partner, [...days].map((d) => d.slice(0, 7)));
  return days.size;
}

/**
 * The scope of rows deleted at the source (ChangeSet.deleted): the days their cells counted in and
 * the customers whose FTD may have been among them. The rows are gone, so a recompute of those
 * days from the stored rows subtracts them.
 */
export function factsScopeOfRemoved(change: Pick<ChangeSet, 'variant' | 'removed'>): FactsScope {
  const scope: FactsScope = { days: new Set(), ftd: new Set(), moved: new Set(), ftdDays: new Set() };
  for (const c of change.removed.customers) {
    scope.days.add((fromStoreTimestamp(c.signup_date) as string).slice(0, 10));
    scope.ftd.add(String(c.customer_id));
  }
  for (const t of change.removed.transactions) {
    scope.days.add((fromStoreTimestamp(t.transaction_date) as string).slice(0, 10));
    if (t.transaction_type === 'deposit') scope.ftd.add(String(t.customer_id));
  }
  if (change.variant === 'igaming') for (const a of change.removed.activity) scope.days.add(fromStoreDate(a.date) as string);
  return scope;
}

/** Adds the customers of the deposits the runs wrote on these days ([run id, day]) to `into`. */
async function depositCustomersOfRunDays(trx: Knex.Transaction, partner: string, variant: Variant, runDays: readonly [string, string][], into: Set<string>): Promise<void> {
  const byRun = new Map<string, string[]>();
  for (const [runId, day] of runDays) append(byRun, runId, day);
  for (const [runId, list] of byRun) await runCustomers(trx, partner, variant, 'transactions', runId, list, into, 'deposit');
}

/** Every UTC day these customers' signups, transactions and activity count in. */
async function daysOfCustomers(trx: Knex.Transaction, partner: string, variant: Variant, customers: readonly string[]): Promise<Set<string>> {
  const days = new Set<string>();
  for (const part of dialectOf(trx).chunks(customers, { otherValues: 1 })) {
    const signups: { signup_date: unknown }[] = await trx('customers').where('partner_id', partner).whereIn('customer_id', part).select('signup_date');
    const txs: { transaction_date: unknown }[] = await trx('transactions').where('partner_id', partner).whereIn('customer_id', part).select('transaction_date');
    for (const r of signups) days.add((fromStoreTimestamp(r.signup_date) as string).slice(0, 10));
    for (const r of txs) days.add((fromStoreTimestamp(r.transaction_date) as string).slice(0, 10));
    if (variant !== 'igaming') continue;
    const acts: { date: unknown }[] = await trx('gaming_activity').where('partner_id', partner).whereIn('customer_id', part).distinct('date');
    for (const r of acts) days.add(fromStoreDate(r.date) as string);
  }
  return days;
}

/** Partners with report facts a bulk run left to recompute (a crash, or a run that did not settle). */
export async function pendingFactsPartners(knex: Knex): Promise<{ partner: string; variant: Variant }[]> {
  const rows = (await knex('report_pending').distinct('partner_id', 'variant').orderBy('partner_id')) as { partner_id: string; variant: Variant }[];
  return rows.map((r) => ({ partner: r.partner_id, variant: r.variant }));
}
