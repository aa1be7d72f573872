/**
 * What a committed load touched, as the engine's scope: the customers of its customer records
 * and transactions, the customer-days of its activity and bonus transactions, the activity days
 * it replaced. Only these are re-evaluated, so a batch's cost follows the batch, not the history.
 * A scope is also kept on disk (commission_pending) until an evaluation takes it: the load path
 * and the review holds write it in their transactions, the engine takes it in its own. Below the
 * engine and the review holds, so that neither imports the other for it.
 */
import type { Knex } from 'knex';
import type { LoadedChange } from '../pipeline/load.js';
import { utcDay } from '../kernel/dates.js';
import { insertChunks } from '../store/dialects.js';
import { insertArrays } from '../store/json-insert.js';
import type { Store } from '../store/store.js';
import type { Variant } from '../types.js';

export function scopeOfChange(change: LoadedChange): Scope {
  const scope = emptyScope(change.partner, change.variant, change.runId);
  for (const c of change.records.customers) {
    const id = String(c.customer_id);
    scope.customers.add(id);
    scope.customerRecords.add(id);
  }
  for (const t of change.records.transactions) {
    const id = String(t.customer_id);
    scope.customers.add(id);
    // A bonus moves NGR of its customer-day when the activity carries no ngr.
    if (t.transaction_type === 'bonus') addDay(scope, id, utcDay(String(t.transaction_date)));
  }
  for (const a of change.records.activity) addDay(scope, String(a.customer_id), String(a.date));
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
  /** Transactions that were fees in their stored version (transaction id → its customer then): their keys are evaluated even if no fee produces them now. */
  formerFees: Map<string, string>;
  /** Customers whose fraud flags changed (src/commission/review-holds.ts): the RevShare months of their activity are evaluated too. */
  reviewed: Set<string>;
}

export function emptyScope(partner: string, variant: Variant, runId: string): Scope {
  return { partner, variant, runId, customers: new Set(), customerRecords: new Set(), days: new Map(), replacedDays: new Set(), formerFees: new Map(), reviewed: new Set() };
}

export function addDay(scope: Scope, customer: string, day: string): void {
  let days = scope.days.get(customer);
  if (!days) scope.days.set(customer, (days = new Set()));
  days.add(day);
}

export function scopeSize(scope: Scope): number {
  let days = 0;
  for (const d of scope.days.values()) days += d.size;
  return scope.customers.size + scope.customerRecords.size + days + scope.replacedDays.size + scope.formerFees.size + scope.reviewed.size;
}

type PendingKind = 'customer' | 'record' | 'day' | 'replaced' | 'former_fee' | 'review';

type PendingRow = { kind: string; value: string };

/**
 * Writes a scope into the partner's pending scope, in the caller's transaction. The load path
 * calls it inside each load transaction, so what a committed batch touched is on disk before its
 * evaluation runs: a crash between the commit and the evaluation loses nothing, the partner's next
 * evaluation (or `resumePending`) takes it.
 */
export async function writePending(trx: Knex.Transaction, scope: Scope, now: string): Promise<void> {
  const rows: Record<string, string>[] = [];
  const add = (kind: PendingKind, value: string) => rows.push({ partner_id: scope.partner, variant: scope.variant, kind, value, created_at: now });
  for (const c of scope.customers) add('customer', c);
  for (const c of scope.customerRecords) add('record', c);
  for (const [c, days] of scope.days) for (const d of days) add('day', JSON.stringify([c, d]));
  for (const d of scope.replacedDays) add('replaced', d);
  for (const [id, customer] of scope.formerFees) add('former_fee', JSON.stringify([id, customer]));
  for (const c of scope.reviewed) add('review', c);
  if (trx.client.config.client === 'pg') {
    // One statement for a batch's scope (inserts of 200 rows a statement took 32-46 ms a 1000-record batch), a parameter per column.
    await insertArrays(trx, 'commission_pending', { partner_id: ['text', scope.partner], variant: ['text', scope.variant], created_at: ['timestamptz', now] },
      { kind: ['text', rows.map((r) => r.kind)], value: ['text', rows.map((r) => r.value)] }, ' ON CONFLICT (partner_id, kind, value) DO NOTHING');
    return;
  }
  for (const part of insertChunks(trx, rows)) {
    await trx('commission_pending').insert(part).onConflict(['partner_id', 'kind', 'value']).ignore();
  }
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
 * (one entry per activity row of a bulk group) for takePendingDays.
 */
export async function takePending(trx: Knex.Transaction, scope: Scope, options: { days?: boolean } = {}): Promise<number> {
  // Raw, since knex's builder returns only a count from a DELETE on SQLite; both backends return the rows of a raw RETURNING.
  const rows = returned(await trx.raw(`DELETE FROM commission_pending WHERE partner_id = ?${options.days === false ? " AND kind <> 'day'" : ''} RETURNING kind, value`, [scope.partner]));
  for (const r of rows) {
    if (r.kind === 'customer') scope.customers.add(r.value);
    else if (r.kind === 'record') scope.customerRecords.add(r.value);
    else if (r.kind === 'replaced') scope.replacedDays.add(r.value);
    else if (r.kind === 'review') scope.reviewed.add(r.value);
    else if (r.kind === 'former_fee') {
      const [id, customer] = JSON.parse(r.value) as [string, string];
      scope.formerFees.set(id, customer);
    }
    else addDayEntry(scope.days, r.value);
  }
  return rows.length;
}

/**
 * Takes at most `limit` of the partner's pending customer-days after the key `after`, in the
 * order of the key, into a map of customer -> days. `entries` is how many it took (fewer than
 * `limit`: none were left), `last` the key the next take starts after. A bulk group's evaluation
 * reads its days this way, so that its memory follows `limit`, not the group. Each take starts
 * after the last one's key: the rows it deleted stay in the index until the transaction ends, and
 * a scan from the start would step over all of them each time. The key orders a customer's days
 * together (values are JSON [customer, day]), so a customer's days rarely straddle two takes; when
 * they do, the customer is evaluated with each. A day a parallel load adds before `after` is left
 * for the next evaluation.
 */
export async function takePendingDays(trx: Knex.Transaction, partner: string, limit: number, after: string | null): Promise<{ days: Map<string, Set<string>>; entries: number; last: string | null }> {
  const range = (q: Knex.QueryBuilder) => (after === null ? q : q.where('value', '>', after));
  // The bound in the store's own order of the key (its collation, not JavaScript's).
  const bound = (await range(trx('commission_pending').where({ partner_id: partner, kind: 'day' })).orderBy('value').offset(limit - 1).limit(1).select('value') as { value: string }[])[0]?.value ?? null;
  const where = ['partner_id = ?', "kind = 'day'", ...(after === null ? [] : ['value > ?']), ...(bound === null ? [] : ['value <= ?'])];
  const bindings = [partner, ...(after === null ? [] : [after]), ...(bound === null ? [] : [bound])];
  const rows = returned(await trx.raw(`DELETE FROM commission_pending WHERE ${where.join(' AND ')} RETURNING kind, value`, bindings));
  const days = new Map<string, Set<string>>();
  for (const r of rows) addDayEntry(days, r.value);
  return { days, entries: rows.length, last: bound };
}

const returned = (result: unknown): PendingRow[] => (Array.isArray(result) ? result as PendingRow[] : (result as { rows: PendingRow[] }).rows);

function addDayEntry(into: Map<string, Set<string>>, value: string): void {
  const [customer, day] = JSON.parse(value) as [string, string];
  let days = into.get(customer);
  if (!days) into.set(customer, (days = new Set()));
  days.add(day);
}
