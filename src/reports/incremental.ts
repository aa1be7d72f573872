/**
 * The report facts kept by difference in the load transaction (docs/reports.md): a batch moves
 * each fact by its new versions' contribution minus its old versions' (read by `beforeWrite`
 * before the write: ./priors.ts). Nothing is recomputed from a day's rows, so a batch costs what
 * it holds, however full its days are.
 *
 * A batch takes the store from S0 to S1, and the facts from F(S0) to F(S1). Every fact is a sum of
 * per-customer contributions at the customer's cell, so the change is applied in two steps:
 * 1. customers: each written customer's record goes from its S0 version to its S1 version, with
 *    its S0 transactions and activity (a new customer: one registration; a customer whose cell or
 *    product moved: its S0 rows taken out of the old cell and put into the new one);
 * 2. transactions and activity: each written record goes from its S0 version to its S1 version, at
 *    its customer's S1 cell; a customer whose approved deposits (or whose cell) changed has its FTD
 *    and depositor days compared with its deposits (./deposit-facts.ts).
 * An activity day replaced whole takes the day's activity sums out of its cells (its rows are gone).
 */
import type { Knex } from 'knex';
import { utcDay } from '../kernel/dates.js';
import { RateBook } from '../kernel/fx.js';
import { money } from '../kernel/money.js';
import type { SpecRecord } from '../types.js';
import type { ChangeSet } from '../pipeline/jobs.js';
import { applyDeltas, FactDeltas, reported, type Sign } from './deltas.js';
import { readCustomers } from './customer-reads.js';
import { moveDepositFacts } from './deposit-facts.js';
import { dialectOf } from '../store/dialect/index.js';
import { CHUNK, type Attribution, campaignKey, decimalKey, pairKey, productKey } from './facts-values.js';
import { activityKey, readCustomerActivity, TX_READ, storedTransaction, writtenTransaction, type ActivityValues, type PriorVersions, type StoredTransaction } from './priors.js';

const ACTIVITY_COLUMNS = ['unconverted_activity', 'bets_usd', 'ggr_usd', 'ngr_usd'] as const;

/** A customer written by the batch whose cell or product moved: its S0 and S1 attribution. */
interface Moved {
  id: string;
  before: Attribution;
  after: Attribution;
}

/** Brings the facts up to date with what a batch wrote, in the batch's transaction. */
export async function updateFacts(trx: Knex.Transaction, change: ChangeSet, priors: PriorVersions): Promise<void> {
  const { partner, variant, records } = change;
  const deltas = new FactDeltas();
  const igaming = variant === 'igaming';
  if (igaming) for (const day of change.replacedDays) await takeOutActivity(trx, partner, day, deltas);

  const writtenTx = new Set(records.transactions.map((t) => String(t.transaction_id)));
  const writtenActivity = new Set(igaming ? records.activity.map((a) => activityKey(a as never)) : []);

  // Step 1: customers.
  const moved = customerMoves(records.customers, priors, deltas);
  const newCustomers = new Set(records.customers.map((c) => String(c.customer_id)).filter((id) => !priors.customers.has(id)));
  const depositCustomers = new Set<string>();
  if (moved.length > 0) {
    await moveHistories(trx, partner, igaming, moved, priors, writtenTx, writtenActivity, deltas);
    for (const m of moved) if (m.before.pair !== m.after.pair) depositCustomers.add(m.id);
  }

  // Step 2: transactions and activity, at the customers' cells now.
  const versions: { t: StoredTransaction; sign: Sign }[] = [];
  if (records.transactions.length > 0) {
    for (const now of records.transactions.map(writtenTransaction)) {
      const was = priors.transactions.get(now.id);
      // Re-sent as stored (same customer, type, status, time and amounts): no fact changes.
      if (was && was.facts === now.facts) continue;
      if (was) versions.push({ t: was, sign: -1 });
      versions.push({ t: now, sign: 1 });
    }
  }
  for (const { t } of versions) if (t.type === 'deposit' && t.status === 'approved') depositCustomers.add(t.customer);
  const activityVersions: { key: string; row: ActivityValues; sign: Sign }[] = [];
  if (igaming) {
    for (const record of records.activity) {
      const key = activityKey(record as never);
      // The written row as the store holds it (decimals as their exact text): the record's values.
      const row: ActivityValues = { currency: record.currency, total_bets: record.total_bets ?? null, wins: record.wins ?? null, ggr: record.ggr ?? null, ngr: record.ngr ?? null };
      const was = priors.activity.get(key);
      // Re-sent as stored: nothing moves.
      if (was && sameActivity(was, row)) continue;
      if (was) activityVersions.push({ key, row: was, sign: -1 });
      activityVersions.push({ key, row, sign: 1 });
    }
  }
  const wanted = new Set<string>([...depositCustomers]);
  for (const { t } of versions) if (reported(t)) wanted.add(t.customer);
  for (const { key } of activityVersions) wanted.add(key.split('\u0000')[0] as string);
  const reads = await readCustomers(trx, partner, wanted, depositCustomers, depositAdditions(versions, moved));
  // Customers read for their additions: the new deposits join the stored FTD's.
  for (const { t, sign } of versions) {
    if (sign < 0 || t.type !== 'deposit' || t.status !== 'approved' || !reads.additions.has(t.customer)) continue;
    let list = reads.deposits.get(t.customer);
    if (!list) reads.deposits.set(t.customer, (list = []));
    if (!list.some((d) => d.id === t.id)) list.push({ id: t.id, at: t.at, amount_currency: t.amount_currency, currency: t.currency, amount_usd: t.amount_usd });
  }
  const now = reads.now;
  const fx = await RateBook.load(trx, [
    ...versions.filter(({ t }) => reported(t) && (t.amount_usd === null || t.amount_usd === undefined)).map(({ t }) => [t.currency, t.day] as const),
    ...activityVersions.map(({ key, row }) => [String(row.currency), key.split('\u0000')[1] as string] as const),
  ]);
  for (const { t, sign } of versions) {
    const a = now.get(t.customer);
    if (a && reported(t)) deltas.addTx(t.day, a.pair, a.product, t, fx, sign);
  }
  for (const { key, row, sign } of activityVersions) {
    const [customer, day] = key.split('\u0000') as [string, string];
    const a = now.get(customer);
    if (a) deltas.addActivity(day, a.pair, row, fx.rate(String(row.currency), day), sign);
  }
  const movedBefore = new Map(moved.map((m) => [m.id, m.before.pair]));
  const pairBefore = (customer: string): string | undefined => (newCustomers.has(customer) ? undefined : movedBefore.get(customer) ?? now.get(customer)?.pair);
  await moveDepositFacts(trx, partner, [...depositCustomers], reads, pairBefore, deltas);

  await applyDeltas(trx, partner, deltas);
}

/**
 * The deposit customers whose approved deposits the batch only added to: none of theirs changed or
 * went (no old approved-deposit version), and their cell or product did not move. Customer → the
 * first day of the earliest month a new one falls in (./customer-reads.ts reads them for that).
 */
function depositAdditions(versions: readonly { t: StoredTransaction; sign: Sign }[], moved: readonly Moved[]): Map<string, string> {
  const out = new Map<string, string>();
  const whole = new Set(moved.map((m) => m.id));
  for (const { t, sign } of versions) {
    if (t.type !== 'deposit' || t.status !== 'approved') continue;
    if (sign < 0) {
      whole.add(t.customer);
      continue;
    }
    const month = `${t.day.slice(0, 7)}-01`;
    const first = out.get(t.customer);
    if (first === undefined || month < first) out.set(t.customer, month);
  }
  for (const c of whole) out.delete(c);
  return out;
}

const sameActivity = (a: ActivityValues, b: ActivityValues): boolean => String(a.currency) === String(b.currency)
  && (['total_bets', 'wins', 'ggr', 'ngr'] as const).every((c) => decimalKey(a[c]) === decimalKey(b[c]));

/** Registrations of the batch's customers, and the customers whose cell or product moved. */
function customerMoves(customers: readonly SpecRecord[], priors: PriorVersions, deltas: FactDeltas): Moved[] {
  const moved: Moved[] = [];
  for (const c of customers) {
    const id = String(c.customer_id);
    const after: Attribution = { pair: pairKey(String(c.affiliate_id), campaignKey(c.campaign_id)), product: productKey(c.challenge_type, c.account_size) };
    const signupDay = utcDay(String(c.signup_date));
    const old = priors.customers.get(id);
    if (!old) {
      deltas.add(signupDay, after.pair, 'registrations', 1);
      continue;
    }
    if (old.signupDay !== signupDay || old.pair !== after.pair) {
      deltas.add(old.signupDay, old.pair, 'registrations', -1);
      deltas.add(signupDay, after.pair, 'registrations', 1);
    }
    if (old.pair !== after.pair || old.product !== after.product) moved.push({ id, before: { pair: old.pair, product: old.product }, after });
  }
  return moved;
}

/**
 * Moves the S0 transactions (and, when the cell moved, activity) of customers whose cell or
 * product moved from their old cell to their new one. S0 rows: the stored rows not written by
 * this batch, and the old versions of those it wrote.
 */
async function moveHistories(trx: Knex.Transaction, partner: string, igaming: boolean, moved: readonly Moved[], priors: PriorVersions,
  writtenTx: ReadonlySet<string>, writtenActivity: ReadonlySet<string>, deltas: FactDeltas): Promise<void> {
  const byId = new Map(moved.map((m) => [m.id, m]));
  const txs: StoredTransaction[] = [];
  const dialect = dialectOf(trx);
  for (const part of dialect.chunks([...byId.keys()], CHUNK)) {
    const rows: Record<string, unknown>[] = await trx('transactions').where('partner_id', partner).modify(dialect.inList('customer_id', part)).where('status', 'approved').select(...TX_READ);
    for (const r of rows) if (!writtenTx.has(String(r.transaction_id))) txs.push(storedTransaction(r));
  }
  for (const t of priors.transactions.values()) if (writtenTx.has(t.id) && byId.has(t.customer)) txs.push(t);
  const cellMoved = moved.filter((m) => m.before.pair !== m.after.pair).map((m) => m.id);
  const acts: { key: string; row: ActivityValues }[] = [];
  if (igaming && cellMoved.length > 0) {
    for (const r of await readCustomerActivity(trx, partner, cellMoved)) {
      const key = activityKey(r as never);
      if (!writtenActivity.has(key)) acts.push({ key, row: r as ActivityValues });
    }
    const movedCell = new Set(cellMoved);
    for (const key of writtenActivity) {
      const was = priors.activity.get(key);
      if (was && movedCell.has(key.split('\u0000')[0] as string)) acts.push({ key, row: was });
    }
  }
  const fx = await RateBook.load(trx, [
    ...txs.filter((t) => reported(t) && (t.amount_usd === null || t.amount_usd === undefined)).map((t) => [t.currency, t.day] as const),
    ...acts.map(({ key, row }) => [String(row.currency), key.split('\u0000')[1] as string] as const),
  ]);
  for (const t of txs) {
    const m = byId.get(t.customer) as Moved;
    deltas.addTx(t.day, m.before.pair, m.before.product, t, fx, -1);
    deltas.addTx(t.day, m.after.pair, m.after.product, t, fx, 1);
  }
  for (const { key, row } of acts) {
    const [customer, day] = key.split('\u0000') as [string, string];
    const m = byId.get(customer) as Moved;
    const rate = fx.rate(String(row.currency), day);
    deltas.addActivity(day, m.before.pair, row, rate, -1);
    deltas.addActivity(day, m.after.pair, row, rate, 1);
  }
}

/** A day whose activity was deleted whole: its cells' activity sums go (what the batch loads for it comes back by difference). */
async function takeOutActivity(trx: Knex.Transaction, partner: string, day: string, deltas: FactDeltas): Promise<void> {
  const rows: Record<string, unknown>[] = await trx('report_cells').where('partner_id', partner).where('day', day).select('affiliate_id', 'campaign_id', ...ACTIVITY_COLUMNS);
  for (const r of rows) {
    const pair = pairKey(String(r.affiliate_id), String(r.campaign_id));
    for (const c of ACTIVITY_COLUMNS) {
      const v = money(r[c] as string);
      if (!v.isZero()) deltas.add(day, pair, c, v.negated());
    }
  }
}
