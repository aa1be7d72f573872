/**
 * Fraud flags: one per pattern instance (partner, rule, instance key), updated as more data
 * arrives, and decided by a person (confirmed or dismissed, with who, when and why). Every change
 * of a flag's customers or status tells the commission side which customers to re-evaluate, in
 * the same transaction (./review.ts).
 *
 * - A new finding opens a flag with its customers.
 * - A finding for an existing instance replaces its evidence and severity; an open flag's
 *   customers become the finding's, a decided flag's only grow (what was decided stays covered).
 *   An unchanged finding changes nothing (a rescan of unchanged data is a no-op).
 * - An instance no longer found in the data: an open flag is withdrawn (deleted, its customers
 *   released); a decided one keeps its decision, and `unsupported_since` notes when the data
 *   stopped showing it (docs/fraud.md).
 */
import type { Knex } from 'knex';
import { lockPartnerLoads } from '../commission/recompute-pending.js';
import type { Store } from '../store/store.js';
import type { Variant } from '../types.js';
import { reviewCustomers } from './review.js';
import { dialectOf } from '../store/dialect/index.js';
import { ts } from './facts.js';

export type FlagStatus = 'open' | 'confirmed' | 'dismissed';
export type Decision = 'confirmed' | 'dismissed';
export type Severity = 'low' | 'medium' | 'high';

/** What a rule found: one pattern instance. */
export interface Finding {
  partner: string;
  variant: Variant;
  rule: string;
  instanceKey: string;
  affiliateId: string | null;
  severity: Severity;
  /** The rows and the computed numbers; stored as JSON text, so keep it deterministic (sorted). */
  evidence: Record<string, unknown>;
  customers: readonly string[];
}

export interface FlagRow {
  id: number;
  partner_id: string;
  variant: Variant;
  rule: string;
  instance_key: string;
  affiliate_id: string | null;
  severity: Severity;
  status: FlagStatus;
  evidence: string;
  first_seen: string;
  last_seen: string;
  unsupported_since: string | null;
  decided_by: string | null;
  decided_at: string | null;
  decision_reason: string | null;
  /** The commission the flag holds for review (USD, 2 decimals): withheld and waiting, kept by the commission evaluation. */
  held_usd: string;
}

export interface Flag extends Omit<FlagRow, 'evidence'> {
  evidence: Record<string, unknown>;
  customers: string[];
}

export interface UpsertResult {
  id: number;
  created: boolean;
  /** Evidence, severity, affiliate or customers changed. */
  changed: boolean;
  added: string[];
  removed: string[];
}

/** The cents of held_cents as USD text (0.00 before any evaluation named the flag). */
const heldUsd = (cents: unknown): string => {
  const n = cents == null ? 0 : Number(cents);
  return `${n < 0 ? '-' : ''}${Math.floor(Math.abs(n) / 100)}.${String(Math.abs(n) % 100).padStart(2, '0')}`;
};

function rowOf(r: Record<string, unknown>): FlagRow {
  const { held_cents: cents, ...rest } = r;
  return {
    ...(rest as unknown as FlagRow),
    held_usd: heldUsd(cents),
    id: Number(r.id),
    first_seen: ts(r.first_seen),
    last_seen: ts(r.last_seen),
    unsupported_since: r.unsupported_since == null ? null : ts(r.unsupported_since),
    decided_at: r.decided_at == null ? null : ts(r.decided_at),
  };
}

async function customersOf(db: Knex | Knex.Transaction, flagId: number): Promise<string[]> {
  const rows: { customer_id: string }[] = await db('fraud_flag_customers').where('flag_id', flagId).select('customer_id');
  return rows.map((r) => r.customer_id).sort();
}

async function addCustomers(trx: Knex.Transaction, flagId: number, partner: string, ids: readonly string[]): Promise<void> {
  for (const part of dialectOf(trx).insertChunks(ids.map((customer_id) => ({ flag_id: flagId, partner_id: partner, customer_id })))) await trx('fraud_flag_customers').insert(part);
}

/** A stored flag's row (undefined: none) and sorted customers, when the caller read them already. */
export interface KnownFlag {
  row: Record<string, unknown> | undefined;
  customers: string[];
}

/** Opens or updates the flag of a finding's pattern instance, in the caller's transaction. */
export async function upsertFlag(trx: Knex.Transaction, store: Store, finding: Finding, known?: KnownFlag): Promise<UpsertResult> {
  const customers = [...new Set(finding.customers)].sort();
  const evidence = JSON.stringify(finding.evidence);
  const now = store.now();
  const existing = known ? known.row : await trx('fraud_flags').where({ partner_id: finding.partner, rule: finding.rule, instance_key: finding.instanceKey }).first();
  if (!existing) {
    const [inserted] = await trx('fraud_flags')
      .insert({
        partner_id: finding.partner, variant: finding.variant, rule: finding.rule, instance_key: finding.instanceKey,
        affiliate_id: finding.affiliateId, severity: finding.severity, status: 'open', evidence,
        first_seen: now, last_seen: now, unsupported_since: null,
      })
      .returning('id');
    const id = Number(typeof inserted === 'object' ? (inserted as { id: unknown }).id : inserted);
    await addCustomers(trx, id, finding.partner, customers);
    await reviewCustomers(trx, store, finding.partner, finding.variant, customers);
    return { id, created: true, changed: true, added: customers, removed: [] };
  }
  const row = rowOf(existing as Record<string, unknown>);
  const stored = known ? known.customers : await customersOf(trx, row.id);
  const storedSet = new Set(stored);
  const wanted = new Set(customers);
  const added = customers.filter((c) => !storedSet.has(c));
  // An open flag follows its finding; a decided one keeps what was decided.
  const removed = row.status === 'open' ? stored.filter((c) => !wanted.has(c)) : [];
  const changed = added.length > 0 || removed.length > 0 || row.evidence !== evidence || row.severity !== finding.severity
    || row.affiliate_id !== finding.affiliateId || row.unsupported_since !== null;
  if (!changed) return { id: row.id, created: false, changed: false, added, removed };
  await trx('fraud_flags').where('id', row.id).update({
    evidence, severity: finding.severity, affiliate_id: finding.affiliateId, last_seen: now, unsupported_since: null,
  });
  if (added.length > 0) await addCustomers(trx, row.id, finding.partner, added);
  for (const part of dialectOf(trx).chunks(removed, 300)) await trx('fraud_flag_customers').where('flag_id', row.id).whereIn('customer_id', part).delete();
  await reviewCustomers(trx, store, finding.partner, finding.variant, [...added, ...removed]);
  return { id: row.id, created: false, changed: true, added, removed };
}

/**
 * The data no longer shows this flag's pattern instance. An open flag is withdrawn (deleted; its
 * customers go back to the commission side, which releases what the flag held): nobody decided on
 * it, and detection often sees a pattern before the rows that clear it (the day's activity comes
 * after the day's transactions). A decided flag stays with its decision and customers;
 * `unsupported_since` notes when the data stopped showing it.
 */
export async function markUnsupported(trx: Knex.Transaction, store: Store, flagId: number): Promise<'withdrawn' | 'noted' | 'unchanged'> {
  const flag = await getFlag(trx, flagId);
  if (!flag) return 'unchanged';
  if (flag.status === 'open') {
    await trx('fraud_flag_customers').where('flag_id', flagId).delete();
    await trx('fraud_flags').where('id', flagId).delete();
    await reviewCustomers(trx, store, flag.partner_id, flag.variant, flag.customers);
    return 'withdrawn';
  }
  const n = await trx('fraud_flags').where('id', flagId).whereNull('unsupported_since').update({ unsupported_since: store.now() });
  return Number(n) > 0 ? 'noted' : 'unchanged';
}

export async function getFlag(db: Knex | Knex.Transaction, id: number): Promise<Flag | undefined> {
  const r = await db('fraud_flags').where('id', id).first();
  if (!r) return undefined;
  const row = rowOf(r as Record<string, unknown>);
  return { ...row, evidence: JSON.parse(row.evidence) as Record<string, unknown>, customers: await customersOf(db, id) };
}

export interface FlagFilter {
  partner?: string;
  status?: FlagStatus;
  rule?: string;
  /**
   * 'exposure': the review queue's order, the largest commission held first, then the higher
   * severity, then the older flag; default: by id.
   */
  order?: 'id' | 'exposure';
}

/** The review queue's order in SQL: held commission, severity, id. */
export function byExposure(q: Knex.QueryBuilder): Knex.QueryBuilder {
  return q.orderBy('held_cents', 'desc').orderByRaw("CASE severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 ELSE 1 END DESC").orderBy('id');
}

export async function listFlags(db: Knex, filter: FlagFilter = {}): Promise<Flag[]> {
  let q = db('fraud_flags').select('*');
  q = filter.order === 'exposure' ? byExposure(q) : q.orderBy('id');
  if (filter.partner) q = q.where('partner_id', filter.partner);
  if (filter.status) q = q.where('status', filter.status);
  if (filter.rule) q = q.where('rule', filter.rule);
  const rows = (await q) as Record<string, unknown>[];
  const out: Flag[] = [];
  const customers = new Map<number, string[]>();
  const ids = rows.map((r) => Number(r.id));
  for (const part of dialectOf(db).chunks(ids, 500)) {
    const cs: { flag_id: unknown; customer_id: string }[] = await db('fraud_flag_customers').whereIn('flag_id', part).select('flag_id', 'customer_id');
    for (const c of cs) {
      const list = customers.get(Number(c.flag_id));
      if (list) list.push(c.customer_id);
      else customers.set(Number(c.flag_id), [c.customer_id]);
    }
  }
  for (const r of rows) {
    const row = rowOf(r);
    out.push({ ...row, evidence: JSON.parse(row.evidence) as Record<string, unknown>, customers: (customers.get(row.id) ?? []).sort() });
  }
  return out;
}

export interface DecisionRecord {
  flag_id: number;
  decision: Decision;
  by: string;
  at: string;
  reason: string;
}

export async function decisionsOf(db: Knex, flagId: number): Promise<DecisionRecord[]> {
  const rows: Record<string, unknown>[] = await db('fraud_decisions').where('flag_id', flagId).orderBy('id').select('flag_id', 'decision', 'by', 'at', 'reason');
  return rows.map((r) => ({ flag_id: Number(r.flag_id), decision: r.decision as Decision, by: String(r.by), at: ts(r.at), reason: String(r.reason) }));
}

export class DecisionError extends Error {}

/**
 * Confirms or dismisses an open flag: the decision is recorded append-only (who, when, why and
 * the evidence decided upon) and the flag's customers go to the commission side for
 * re-evaluation, in one transaction under the partner's load lock. A decided flag is not decided
 * again (DecisionError).
 */
export async function decideFlag(store: Store, id: number, decision: Decision, by: string, reason: string): Promise<Flag> {
  if (reason.trim() === '') throw new DecisionError('a decision needs a reason');
  if (by.trim() === '') throw new DecisionError('a decision needs a name (--by)');
  return store.transaction(async (trx) => {
    const first = await trx('fraud_flags').where('id', id).first('partner_id');
    if (!first) throw new DecisionError(`no fraud flag ${id}`);
    await lockPartnerLoads(store, trx, String((first as { partner_id: string }).partner_id));
    await lockFraud(store, trx, String((first as { partner_id: string }).partner_id));
    const flag = await getFlag(trx, id);
    if (!flag) throw new DecisionError(`no fraud flag ${id}`);
    if (flag.status !== 'open') throw new DecisionError(`fraud flag ${id} is already ${flag.status} (by ${flag.decided_by} at ${flag.decided_at})`);
    const at = store.now();
    await trx('fraud_flags').where('id', id).update({ status: decision, decided_by: by, decided_at: at, decision_reason: reason });
    await trx('fraud_decisions').insert({ flag_id: id, decision, by, at, reason, evidence: JSON.stringify(flag.evidence) });
    await reviewCustomers(trx, store, flag.partner_id, flag.variant, flag.customers);
    return { ...flag, status: decision, decided_by: by, decided_at: at, decision_reason: reason };
  });
}

/**
 * Serialises whatever judges a partner's customers and writes their flags (detection in a load
 * transaction, a bulk run's or a push's evaluation behind the commits, a scan, a decision), without
 * holding up loads that only record what waits for it: taken after the load lock by whoever holds
 * both, never before it. SQLite has one writer already.
 */
export async function lockFraud(store: Store, trx: Knex.Transaction, partner: string): Promise<void> {
  await store.dialect.transactionLock(trx, `partner-sync fraud ${partner}`);
}
