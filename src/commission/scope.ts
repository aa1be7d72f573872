/**
 * What a committed load touched, as the engine's scope: the customers of its customer records
 * and transactions, the customer-days of its activity and bonus transactions, the activity days
 * it replaced. Only these are re-evaluated, so a batch's cost follows the batch, not the history.
 * A scope is also kept on disk (commission_pending) until an evaluation takes it: the load path
 * and the review holds write it in their transactions, the engine takes it in its own. Below the
 * engine and the review holds, so that neither imports the other for it.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { ChangeSet } from '../pipeline/jobs.js';
import { utcDay } from '../kernel/dates.js';
import { rawRows } from '../store/dialects.js';
import { dialectOf } from '../store/dialect/index.js';
import type { Store } from '../store/store.js';
import { entityTable } from '../store/tables.js';
import { marksByRunDay, runCustomers } from '../store/run-days.js';
import type { Variant } from '../types.js';

export function scopeOfChange(change: ChangeSet): Scope {
  const scope = emptyScope(change.partner, change.variant, change.runId);
  const byDay = marksByRunDay(change);
  for (const c of change.records.customers) {
    const id = String(c.customer_id);
    scope.customers.add(id);
    scope.customerRecords.add(id);
  }
  for (const t of change.records.transactions) {
    const id = String(t.customer_id);
    const day = utcDay(String(t.transaction_date));
    // A bulk run's batch: its customers are those of its run's transactions of these days, listed when the run settles.
    if (byDay) addRunDay(scope.runTransactionDays, change.runId, day);
    else scope.customers.add(id);
    // A bonus moves NGR of its customer-day when the activity carries no ngr.
    if (t.transaction_type === 'bonus') addDay(scope, id, day);
  }
  if (byDay) {
    // Its customer-days: those of its run's activity rows of these days.
    for (const a of change.records.activity) addRunDay(scope.runDays, change.runId, String(a.date));
  } else {
    for (const a of change.records.activity) addDay(scope, String(a.customer_id), String(a.date));
  }
  for (const d of change.replacedDays) scope.replacedDays.add(d);
  return scope;
}

/** What one evaluation looks at. */
export interface Scope {
  partner: string;
  variant: Variant;
  runId: string;
  /** Customers whose record or transactions changed: every per-customer plan re-evaluates them. */
  customers: Set<string>;
  /** Customers whose customer record was loaded (their affiliate may have changed). */
  customerRecords: Set<string>;
  /** Customer-days to re-derive (activity, bonus transactions, rates): customer → days. */
  days: Map<string, Set<string>>;
  /** Activity days replaced whole (rows may be gone). */
  replacedDays: Set<string>;
  /**
   * A bulk run's activity days: run id -> days. The customer-days are those of the activity rows
   * the run wrote on these days (their run_id), listed when the evaluation takes them: a batch
   * writes a few entries instead of one per customer-day (keyed inserts that were a large share of
   * a month's load transactions: bench/README.md, the whole pipeline). A row a later run rewrote carries that run's id, and that
   * run's entries list it; a row no run rewrote kept the values its own run's entries were for.
   */
  runDays: Map<string, Set<string>>;
  /** A bulk run's transaction days (UTC): run id -> days. The customers are those of the transactions the run wrote on these days. */
  runTransactionDays: Map<string, Set<string>>;
  /** Transactions that were fees in their stored version (transaction id → its customer then): their keys are evaluated even if no fee produces them now. */
  formerFees: Map<string, string>;
  /** Customers whose fraud flags changed (src/commission/review-holds.ts): the RevShare months of their activity are evaluated too. */
  reviewed: Set<string>;
  /** Customers with records deleted at the source (./deletes.ts): the tombstone of the customer itself, if it went, and of its rows. */
  deleted: Map<string, { customer: number | null; rows: Set<number> }>;
}

export function emptyScope(partner: string, variant: Variant, runId: string): Scope {
  return { partner, variant, runId, customers: new Set(), customerRecords: new Set(), days: new Map(), replacedDays: new Set(), runDays: new Map(), runTransactionDays: new Map(), formerFees: new Map(), reviewed: new Set(), deleted: new Map() };
}

export function addRunDay(into: Map<string, Set<string>>, runId: string, day: string): void {
  let days = into.get(runId);
  if (!days) into.set(runId, (days = new Set()));
  days.add(day);
}

export function addDay(scope: Scope, customer: string, day: string): void {
  let days = scope.days.get(customer);
  if (!days) scope.days.set(customer, (days = new Set()));
  days.add(day);
}

export function scopeSize(scope: Scope): number {
  let days = 0;
  for (const d of scope.days.values()) days += d.size;
  for (const d of scope.runDays.values()) days += d.size;
  for (const d of scope.runTransactionDays.values()) days += d.size;
  return scope.customers.size + scope.customerRecords.size + days + scope.replacedDays.size + scope.formerFees.size + scope.reviewed.size + scope.deleted.size;
}

export type PendingKind = 'customer' | 'record' | 'day' | 'run_day' | 'run_transaction_day' | 'replaced' | 'former_fee' | 'review' | 'deleted';

/**
 * The entries that name customers whose keys are evaluated: the fraud rules write these (and only
 * these) when a flag changes (markForReview), so an evaluation that derives the customer-days while
 * the rules are judged takes them after (evaluateScope `after`): its taken rows are then none that
 * the rules' transaction writes, and neither waits for the other.
 */
export const KEY_KINDS: readonly PendingKind[] = ['customer', 'review'];

type PendingRow = { kind: string; value: string };

/**
 * Writes a scope into the partner's pending scope, in the caller's transaction. The load path
 * calls it inside each load transaction, so what a committed batch touched is on disk before its
 * evaluation runs: a crash between the commit and the evaluation loses nothing, the partner's next
 * evaluation (or `resumeJobs`) takes it.
 */
export async function writePending(trx: Knex.Transaction, scope: Scope, now: string): Promise<void> {
  const kinds: PendingKind[] = [];
  const values: string[] = [];
  const add = (kind: PendingKind, value: string) => { kinds.push(kind); values.push(value); };
  // A customer record's entry stands for the customer too (one row where a customers batch wrote two).
  for (const c of scope.customers) if (!scope.customerRecords.has(c)) add('customer', c);
  for (const c of scope.customerRecords) add('record', c);
  for (const [c, days] of scope.days) for (const d of days) add('day', JSON.stringify([c, d]));
  // A run day's entry is the writer's own (its third element): with a key shared by the run's
  // batches, a batch committing while an evaluation took the entry would find it there, add
  // nothing, and its rows (not visible to that evaluation yet) would wait for no entry.
  const writer = scope.runDays.size + scope.runTransactionDays.size > 0 ? randomUUID() : '';
  for (const [runId, days] of scope.runDays) for (const d of days) add('run_day', JSON.stringify([runId, d, writer]));
  for (const [runId, days] of scope.runTransactionDays) for (const d of days) add('run_transaction_day', JSON.stringify([runId, d, writer]));
  for (const d of scope.replacedDays) add('replaced', d);
  for (const [id, customer] of scope.formerFees) add('former_fee', JSON.stringify([id, customer]));
  for (const c of scope.reviewed) add('review', c);
  for (const [c, d] of scope.deleted) {
    if (d.customer !== null) add('deleted', JSON.stringify([c, d.customer, 1]));
    for (const id of d.rows) add('deleted', JSON.stringify([c, id, 0]));
  }
  // PostgreSQL: one statement for a batch's scope, not inserts of 200 rows a statement (bench/README.md, the whole pipeline).
  await dialectOf(trx).insertColumns(trx, 'commission_pending', { partner_id: ['text', scope.partner], variant: ['text', scope.variant], created_at: ['timestamptz', now] },
    { kind: ['text', kinds], value: ['text', values] }, { on: ['partner_id', 'kind', 'value'] });
}

/** Saves a scope whose evaluation failed; the partner's next evaluation takes it first. */
export async function savePending(store: Store, scope: Scope): Promise<void> {
  await store.transaction((trx) => writePending(trx, scope, store.now()));
}

/** Partners with a pending scope: evaluations that a crash or a failure left undone. */
export async function pendingPartners(knex: Knex): Promise<{ partner: string; variant: Variant; entries: number }[]> {
  const rows = (await knex('commission_pending')
    .select('partner_id', 'variant').count({ n: '*' }).groupBy('partner_id', 'variant').orderBy('partner_id')) as { partner_id: string; variant: string; n: unknown }[];
  return rows.map((r) => ({ partner: r.partner_id, variant: r.variant as Variant, entries: Number(r.n) }));
}

/**
 * Takes the partner's pending scope into `scope`. One DELETE ... RETURNING: it takes exactly the
 * rows it removes, so a scope a parallel load transaction commits meanwhile is either taken here
 * or left for the next evaluation, never deleted unseen. `days: false` leaves the customer-days
 * (one entry per activity row of a batch, a few per day of a bulk run's) for openDayTakes;
 * `keys: false` leaves KEY_KINDS; `only` takes only these kinds.
 */
export async function takePending(trx: Knex.Transaction, scope: Scope, options: { days?: boolean; keys?: boolean; only?: readonly PendingKind[] } = {}): Promise<number> {
  const where: string[] = [];
  if (options.days === false) where.push("kind <> 'day'");
  if (options.keys === false) where.push(`kind NOT IN (${KEY_KINDS.map((k) => `'${k}'`).join(', ')})`);
  if (options.only) where.push(`kind IN (${options.only.map((k) => `'${k}'`).join(', ')})`);
  // Raw, since knex's builder returns only a count from a DELETE on SQLite; both backends return the rows of a raw RETURNING.
  const rows = rawRows<PendingRow>(await trx.raw(`DELETE FROM commission_pending WHERE ${['partner_id = ?', ...where].join(' AND ')} RETURNING kind, value`, [scope.partner]));
  for (const r of rows) {
    if (r.kind === 'customer') scope.customers.add(r.value);
    else if (r.kind === 'record') {
      scope.customerRecords.add(r.value);
      scope.customers.add(r.value);
    }
    else if (r.kind === 'replaced') scope.replacedDays.add(r.value);
    else if (r.kind === 'review') scope.reviewed.add(r.value);
    else if (r.kind === 'run_day' || r.kind === 'run_transaction_day') {
      const [runId, day] = JSON.parse(r.value) as [string, string];
      addRunDay(r.kind === 'run_day' ? scope.runDays : scope.runTransactionDays, runId, day);
    } else if (r.kind === 'deleted') {
      const [customer, id, own] = JSON.parse(r.value) as [string, number, number];
      let d = scope.deleted.get(customer);
      if (!d) scope.deleted.set(customer, (d = { customer: null, rows: new Set() }));
      if (own === 1) d.customer = id;
      else d.rows.add(id);
    } else if (r.kind === 'former_fee') {
      const [id, customer] = JSON.parse(r.value) as [string, string];
      scope.formerFees.set(id, customer);
    }
    else addDayEntry(scope.days, r.value);
  }
  await listRunTransactions(trx, scope);
  return rows.length;
}

/** Adds the customers of the scope's run transaction days to its customers (and empties them). */
async function listRunTransactions(trx: Knex.Transaction, scope: Scope): Promise<void> {
  for (const [runId, days] of scope.runTransactionDays) await runCustomers(trx, scope.partner, scope.variant, 'transactions', runId, days, scope.customers);
  scope.runTransactionDays.clear();
}

/**
 * The partner's pending customer-days, taken for one evaluation in takes of at most `limit`, in
 * the order of (customer, day), into maps of customer -> days: a bulk group's evaluation reads its
 * days this way, so that its memory follows `limit`, not the group. A customer's days come
 * together, so a customer rarely straddles two takes; when it does, it is evaluated with each.
 *
 * Opening the takes moves, in the caller's transaction, every pending 'day' entry into a
 * temporary table of the transaction. PostgreSQL reads them and the customer-days of the scope's
 * run days (scope.runDays, emptied) through one cursor, distinct and sorted when first read;
 * SQLite copies the run days' customer-days into the table too and indexes it once filled. A day a
 * parallel load adds after that waits for the next evaluation. Listing and indexing a month's run
 * customer-days at its settle costs less than keying them in its load transactions did
 * (bench/README.md, the whole pipeline).
 */
export async function openDayTakes(trx: Knex.Transaction, scope: Scope): Promise<(limit: number) => Promise<{ days: Map<string, Set<string>>; entries: number }>> {
  // A cursor over array parameters where the store takes them (PostgreSQL), else a keyset over an indexed copy.
  const cursor = dialectOf(trx).batchParameters;
  const partner = scope.partner;
  await trx.raw(`DROP TABLE IF EXISTS ${cursor ? 'pg_temp' : 'temp'}.${TAKES}`);
  await trx.raw(cursor ? `CREATE TEMP TABLE ${TAKES} (customer_id text NOT NULL, date text NOT NULL) ON COMMIT DROP` : `CREATE TEMP TABLE ${TAKES} (customer_id text NOT NULL, date text NOT NULL)`);
  if (cursor) {
    await trx.raw(`WITH d AS (DELETE FROM commission_pending WHERE partner_id = ? AND kind = 'day' RETURNING value)
      INSERT INTO ${TAKES} SELECT value::json->>0, value::json->>1 FROM d`, [partner]);
  } else {
    await trx.raw(`INSERT INTO temp.${TAKES} SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM commission_pending WHERE partner_id = ? AND kind = 'day'`, [partner]);
    await trx.raw("DELETE FROM commission_pending WHERE partner_id = ? AND kind = 'day'", [partner]);
  }
  const runs: string[] = [];
  const dates: string[] = [];
  for (const [runId, days] of scope.runDays) for (const d of days) { runs.push(runId); dates.push(d); }
  scope.runDays.clear();
  const activity = entityTable(scope.variant, 'activity').name;
  const group = (list: readonly { customer_id: string; date: string }[]) => {
    const days = new Map<string, Set<string>>();
    for (const r of list) {
      let set = days.get(r.customer_id);
      if (!set) days.set(r.customer_id, (set = new Set()));
      set.add(r.date);
    }
    return { days, entries: list.length };
  };
  if (cursor) {
    // A cursor over the entries and the run days' customer-days, read take by take: no copy of the
    // run days' customer-days, no index on it (each a share of a month's settle). Each (run, day) is a
    // range scan of the day on the activity key (partner, date, customer, ...); the rows are made
    // distinct and sorted in one sort, by their bytes ("C": the order of JavaScript's comparison of
    // the keys too), without the database collation's cost (bench/README.md, the whole pipeline).
    const runDays = runs.length > 0 ? ` UNION SELECT a.customer_id COLLATE "C", to_char(a.date, 'YYYY-MM-DD') COLLATE "C"
      FROM unnest(?::text[], ?::date[]) AS r(run_id, date) JOIN ${activity} a ON a.partner_id = ? AND a.date = r.date AND a.run_id = r.run_id` : '';
    await trx.raw(`DECLARE ${TAKES}_cursor NO SCROLL CURSOR FOR SELECT customer_id COLLATE "C" AS customer_id, date COLLATE "C" AS date FROM ${TAKES}${runDays} ORDER BY 1, 2`,
      runs.length > 0 ? [runs, dates, partner] : []);
    let open = true;
    return async (limit) => {
      if (!open) return group([]);
      if (!Number.isInteger(limit) || limit <= 0) throw new Error(`a take of customer-days must be a positive integer, not ${limit}`);
      const list = rawRows<{ customer_id: string; date: string }>(await trx.raw(`FETCH FORWARD ${limit} FROM ${TAKES}_cursor`));
      if (list.length < limit) {
        // Read to its end: closed, so that the temporary table it reads can go with the transaction.
        await trx.raw(`CLOSE ${TAKES}_cursor`);
        open = false;
      }
      return group(list);
    };
  }
  for (let i = 0; i < runs.length; i += 1) {
    await trx.raw(`INSERT INTO temp.${TAKES} SELECT DISTINCT customer_id, date FROM ${activity} WHERE partner_id = ? AND date = ? AND run_id = ?`, [partner, dates[i]!, runs[i]!]);
  }
  // Not analyzed: the only statement reading the table is the keyset scan below, on this index
  // whatever the statistics.
  await trx.raw(`CREATE INDEX temp.${TAKES}_key ON ${TAKES} (customer_id, date)`);
  let after: [string, string] | null = null;
  return async (limit) => {
    const list = rawRows<{ customer_id: string; date: string }>(await trx.raw(`SELECT customer_id, date FROM temp.${TAKES}${after ? ' WHERE (customer_id, date) > (?, ?)' : ''} ORDER BY customer_id, date LIMIT ?`,
      [...(after ?? []), limit]));
    const last = list[list.length - 1];
    if (last) after = [last.customer_id, last.date];
    if (list.length < limit) await trx.raw(`DROP TABLE IF EXISTS temp.${TAKES}`);
    return group(list);
  };
}

/** The evaluation's temporary table of customer-days (openDayTakes). */
const TAKES = 'commission_takes';


function addDayEntry(into: Map<string, Set<string>>, value: string): void {
  const [customer, day] = JSON.parse(value) as [string, string];
  let days = into.get(customer);
  if (!days) into.set(customer, (days = new Set()));
  days.add(day);
}
