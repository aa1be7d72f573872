/**
 * The facts a load batch brings: registrations, deposits (and their reversals), FTDs, challenge
 * purchases and phase changes. A fact is new only against what the store held BEFORE the batch
 * wrote (the stored versions its change set carries, src/pipeline/jobs.ts): a customer stored before is no registration, a deposit
 * approved before is no deposit, however often it is re-sent, replayed or backfilled. The fact key
 * (../postbacks/outbox.ts) catches what this misses (a crash after the commit, two paths).
 */
import type { Knex } from 'knex';
import type { SpecRecord } from '../types.js';
import { dialectOf } from '../store/dialect/index.js';
import { fromStoreTimestamp } from '../store/values.js';
import type { EventValues, Fact } from './events.js';

/** What the store held for a batch's keys before it wrote them. */
export interface PriorState {
  /** Customer ids already stored. */
  customers: Set<string>;
  /** Transaction id → its stored status (absent: not stored). */
  statuses: Map<string, string>;
}

export const emptyPrior = (): PriorState => ({ customers: new Set(), statuses: new Map() });

const CHUNK = 500;
const FEE_TYPES = new Set(['challenge_fee', 'reset_fee']);
/** Deposits that were the FTD and were undone still count as the customer's first (the CPA trigger's rule). */
const FTD_STATUSES = ['approved', 'reversed'];

/** What the store held for a batch's keys, from the stored versions its change set carries. */
export function priorState(stored: { customers: ReadonlyMap<string, unknown>; transactions: ReadonlyMap<string, Record<string, unknown>> }): PriorState {
  const prior = emptyPrior();
  for (const id of stored.customers.keys()) prior.customers.add(id);
  for (const [id, row] of stored.transactions) prior.statuses.set(id, String(row.status));
  return prior;
}

const text = (v: unknown): string | null => (v === null || v === undefined || v === '' ? null : String(v));

/** A customer's values as events carry them. */
export function customerValues(partner: string, c: Record<string, unknown>): EventValues {
  return {
    partner_id: partner, customer_id: String(c.customer_id), affiliate_id: String(c.affiliate_id), campaign_id: text(c.campaign_id), click_id: text(c.click_id),
    country_code: text(c.country_code), first_name: text(c.first_name), last_name: text(c.last_name), email: text(c.email),
  };
}

/** The stored customers of these ids (the transactions' owners). */
export async function readCustomerValues(db: Knex, partner: string, ids: Iterable<string>): Promise<Map<string, EventValues>> {
  const list = [...new Set(ids)];
  const out = new Map<string, EventValues>();
  for (const part of dialectOf(db).chunks(list, CHUNK)) {
    const rows = (await db('customers').where('partner_id', partner).whereIn('customer_id', part)
      .select('customer_id', 'affiliate_id', 'campaign_id', 'click_id', 'country_code', 'first_name', 'last_name', 'email')) as Record<string, unknown>[];
    for (const r of rows) out.set(String(r.customer_id), customerValues(partner, r));
  }
  return out;
}

const orderKey = (partner: string, customer: string): string => `${partner}|${customer}`;

/** Registrations: the written customers not stored before. */
export function registrations(partner: string, written: readonly SpecRecord[], prior: PriorState): Fact[] {
  return written.filter((r) => !prior.customers.has(String(r.customer_id))).map((r) => ({
    kind: 'registration', key: `registration|${partner}|${String(r.customer_id)}`, orderKey: orderKey(partner, String(r.customer_id)),
    values: { ...customerValues(partner, r), fact_at: text(r.signup_date) },
  }));
}

/** Deposits approved by this batch, deposits it undid, challenge purchases, and the FTDs among the deposits. */
export async function transactionFacts(db: Knex, partner: string, written: readonly SpecRecord[], prior: PriorState): Promise<Fact[]> {
  const approved: SpecRecord[] = [];
  const undone: SpecRecord[] = [];
  const purchases: SpecRecord[] = [];
  for (const t of written) {
    const type = String(t.transaction_type);
    const before = prior.statuses.get(String(t.transaction_id));
    const nowApproved = t.status === 'approved';
    if (type === 'deposit' && nowApproved && before !== 'approved') approved.push(t);
    else if (type === 'deposit' && !nowApproved && before === 'approved') undone.push(t);
    else if (FEE_TYPES.has(type) && nowApproved && before !== 'approved') purchases.push(t);
  }
  if (approved.length + undone.length + purchases.length === 0) return [];
  const customers = await readCustomerValues(db, partner, [...approved, ...undone, ...purchases].map((t) => String(t.customer_id)));
  const out: Fact[] = [];
  const fact = (kind: Fact['kind'], key: string, t: SpecRecord): void => {
    const c = customers.get(String(t.customer_id));
    if (!c) return;
    out.push({
      kind, key, orderKey: orderKey(partner, String(t.customer_id)),
      values: {
        ...c, transaction_id: String(t.transaction_id), transaction_type: String(t.transaction_type), amount: text(t.amount_currency) ?? undefined,
        currency: text(t.currency) ?? undefined, amount_usd: text(t.amount_usd), fact_at: text(t.transaction_date),
      },
    });
  };
  // The FTD: the earliest deposit newly approved, of a customer with no deposit approved (or approved then undone) stored before.
  const newlyApproved = new Set(approved.map((t) => String(t.transaction_id)));
  const earlier = new Set<string>();
  const owners = [...new Set(approved.map((t) => String(t.customer_id)))];
  for (const part of dialectOf(db).chunks(owners, CHUNK)) {
    const rows = (await db('transactions').where('partner_id', partner).whereIn('customer_id', part)
      .where('transaction_type', 'deposit').whereIn('status', FTD_STATUSES).select('customer_id', 'transaction_id')) as { customer_id: string; transaction_id: string }[];
    for (const r of rows) if (!newlyApproved.has(r.transaction_id) || prior.statuses.get(r.transaction_id) === 'reversed') earlier.add(r.customer_id);
  }
  const firsts = new Map<string, SpecRecord>();
  for (const t of approved) {
    const id = String(t.customer_id);
    if (earlier.has(id)) continue;
    const seen = firsts.get(id);
    const when = (r: SpecRecord): string => `${fromStoreTimestamp(r.transaction_date) ?? String(r.transaction_date)}|${String(r.transaction_id)}`;
    if (!seen || when(t) < when(seen)) firsts.set(id, t);
  }
  // In order per customer: the FTD before the deposit event of the same transaction.
  for (const t of firsts.values()) fact('ftd', `ftd|${partner}|${String(t.customer_id)}`, t);
  for (const t of approved) fact('deposit', `deposit|${partner}|${String(t.transaction_id)}`, t);
  for (const t of undone) fact('deposit_reversed', `deposit_reversed|${partner}|${String(t.transaction_id)}`, t);
  for (const t of purchases) fact('challenge_purchase', `challenge_purchase|${partner}|${String(t.transaction_id)}`, t);
  return out;
}

/** Phase changes recorded by this run for these prop-trading customers (observed ones, with a phase before them). */
export async function phaseChanges(db: Knex, partner: string, written: readonly SpecRecord[], runId: string): Promise<Fact[]> {
  const ids = written.map((r) => String(r.customer_id));
  const byId = new Map(written.map((r) => [String(r.customer_id), r]));
  const out: Fact[] = [];
  for (const part of dialectOf(db).chunks(ids, CHUNK)) {
    const rows = (await db('phase_history').where('partner_id', partner).whereIn('customer_id', part)
      .select('customer_id', 'seq', 'phase', 'observed_at', 'time_source', 'run_id').orderBy([{ column: 'customer_id' }, { column: 'seq' }])) as Record<string, unknown>[];
    let previous: Record<string, unknown> | undefined;
    for (const r of rows) {
      const prev = previous && previous.customer_id === r.customer_id ? previous : undefined;
      previous = r;
      if (!prev || r.run_id !== runId || r.time_source === 'inferred') continue;
      const c = byId.get(String(r.customer_id));
      if (!c) continue;
      out.push({
        kind: 'phase_change', key: `phase_change|${partner}|${String(r.customer_id)}|${Number(r.seq)}`, orderKey: orderKey(partner, String(r.customer_id)),
        values: { ...customerValues(partner, c), phase: String(r.phase), previous_phase: String(prev.phase), fact_at: text(r.observed_at) },
      });
    }
  }
  return out;
}

/**
 * Approved deposits deleted at the source (a deleted transaction, or one that went with its
 * customer): a `deposit_reversed` event each, keyed by the tombstone, so a deposit re-created and
 * deleted again is announced again. The customer's values are the deleted customer row's when it
 * went too.
 */
export async function deletedDeposits(db: Knex, partner: string, removed: { customers: readonly Record<string, unknown>[]; transactions: readonly Record<string, unknown>[] },
  tombstoneOf: (transactionId: string) => number | undefined): Promise<Fact[]> {
  const deposits = removed.transactions.filter((t) => t.transaction_type === 'deposit' && t.status === 'approved');
  if (deposits.length === 0) return [];
  const customers = new Map(removed.customers.map((c) => [String(c.customer_id), customerValues(partner, c)]));
  const live = await readCustomerValues(db, partner, deposits.map((t) => String(t.customer_id)).filter((id) => !customers.has(id)));
  const out: Fact[] = [];
  for (const t of deposits) {
    const c = customers.get(String(t.customer_id)) ?? live.get(String(t.customer_id));
    if (!c) continue;
    out.push({
      kind: 'deposit_reversed', key: `deposit_reversed|${partner}|${String(t.transaction_id)}|tombstones:${tombstoneOf(String(t.transaction_id)) ?? ''}`, orderKey: orderKey(partner, String(t.customer_id)),
      values: {
        ...c, transaction_id: String(t.transaction_id), transaction_type: 'deposit', amount: text(t.amount_currency) ?? undefined, currency: text(t.currency) ?? undefined,
        amount_usd: text(t.amount_usd), fact_at: fromStoreTimestamp(t.transaction_date),
      },
    });
  }
  return out;
}
