/**
 * The commission ledger: append-only lines, each moving one key's total for one affiliate
 * toward its target. A key is one thing that earns: a customer's CPA under a plan, an
 * affiliate's RevShare month under a plan, a challenge fee, a customer's phase bonus. Nothing
 * here updates or deletes a line (the store's triggers refuse it too).
 */
import type { Knex } from 'knex';
import { fromStoreTimestamp } from '../store/values.js';
import { centsText, money, ZERO, type Money } from '../kernel/money.js';
import type { PlanKind } from './plans.js';
import type { LineState, Target } from './target.js';
import { dialectOf } from '../store/dialect/index.js';



export interface LedgerLine {
  id: number;
  line_key: string;
  plan_id: string;
  plan_kind: PlanKind;
  partner_id: string;
  affiliate_id: string;
  customer_id: string | null;
  period: string;
  reason: string;
  amount_usd: string;
  total_usd: string;
  ref_id: string | null;
  sources: string[];
  basis: Record<string, unknown>;
  run_id: string | null;
  created_at: string;
}

export const parseJson = <T>(value: unknown): T => (typeof value === 'string' ? (JSON.parse(value) as T) : (value as T));

export function toLedgerLine(row: Record<string, unknown>): LedgerLine {
  return {
    id: Number(row.id),
    line_key: String(row.line_key),
    plan_id: String(row.plan_id),
    plan_kind: String(row.plan_kind) as PlanKind,
    partner_id: String(row.partner_id),
    affiliate_id: String(row.affiliate_id),
    customer_id: row.customer_id === null || row.customer_id === undefined ? null : String(row.customer_id),
    period: String(row.period),
    reason: String(row.reason),
    amount_usd: money(row.amount_usd).toFixed(2),
    total_usd: money(row.total_usd).toFixed(2),
    ref_id: row.ref_id === null || row.ref_id === undefined ? null : String(row.ref_id),
    sources: parseJson<string[]>(row.sources),
    basis: parseJson<Record<string, unknown>>(row.basis),
    run_id: row.run_id === null || row.run_id === undefined ? null : String(row.run_id),
    created_at: fromStoreTimestamp(row.created_at) ?? '',
  };
}

/** The lines of these keys, oldest first, per key. */
export async function readKeyLines(knex: Knex, keys: Iterable<string>): Promise<Map<string, LineState[]>> {
  const list = [...new Set(keys)];
  const out = new Map<string, LineState[]>();
  const dialect = dialectOf(knex);
  for (const part of dialect.chunks(list, { form: 'inList' })) {
    const rows: Record<string, unknown>[] = await knex('commission_ledger')
      .modify(dialect.inList('line_key', part))
      .orderBy('id')
      .select('id', 'line_key', 'affiliate_id', 'amount_usd', 'reason', 'ref_id', 'period', 'created_at');
    for (const r of rows) {
      const key = String(r.line_key);
      let lines = out.get(key);
      if (!lines) out.set(key, (lines = []));
      lines.push({
        id: Number(r.id),
        affiliate: String(r.affiliate_id),
        amount: money(r.amount_usd),
        reason: String(r.reason),
        refId: r.ref_id === null ? null : String(r.ref_id),
        period: String(r.period),
        createdAt: fromStoreTimestamp(r.created_at) ?? '',
      });
    }
  }
  return out;
}

/** A key's total per affiliate. */
export function totalsByAffiliate(lines: readonly LineState[] | undefined): Map<string, Money> {
  const totals = new Map<string, Money>();
  for (const l of lines ?? []) totals.set(l.affiliate, (totals.get(l.affiliate) ?? ZERO).plus(l.amount));
  return totals;
}


export interface NewLine {
  target: Target;
  amount: Money;
  total: Money;
}

/** What a key's targets require: one new line per affiliate whose total differs; holds for held targets. */
export function linesFor(targets: readonly Target[], lines: readonly LineState[] | undefined): { add: NewLine[]; held: Target[] } {
  const totals = totalsByAffiliate(lines);
  const add: NewLine[] = [];
  const held: Target[] = [];
  for (const target of targets) {
    if (target.amount === null) {
      held.push(target);
      continue;
    }
    const total = totals.get(target.affiliate) ?? ZERO;
    const delta = target.amount.minus(total);
    if (!delta.isZero()) add.push({ target, amount: delta, total: target.amount });
  }
  return { add, held };
}

/** The ledger's columns as PostgreSQL types (appendLines). */
const LEDGER_TYPES = {
  line_key: 'text', plan_id: 'text', plan_kind: 'text', partner_id: 'text', affiliate_id: 'text', customer_id: 'text', period: 'text', reason: 'text',
  amount_usd: 'numeric', total_usd: 'numeric', ref_id: 'text', sources: 'jsonb', basis: 'jsonb', run_id: 'text', created_at: 'timestamptz',
};

export async function appendLines(trx: Knex.Transaction, lines: readonly NewLine[], runId: string, now: string): Promise<void> {
  const rows = lines.map((l) => ({
    line_key: l.target.key,
    plan_id: l.target.plan.id,
    plan_kind: l.target.plan.kind,
    partner_id: l.target.plan.partner,
    affiliate_id: l.target.affiliate,
    customer_id: l.target.customer,
    period: l.target.period,
    reason: l.target.reason,
    amount_usd: centsText(l.amount),
    total_usd: centsText(l.total),
    ref_id: l.target.refId,
    sources: JSON.stringify(l.target.sources),
    basis: JSON.stringify(l.target.basis),
    run_id: runId,
    created_at: now,
  }));
  // PostgreSQL: one statement, a parameter per column; the ids follow the lines' order.
  await dialectOf(trx).insertRows(trx, 'commission_ledger', LEDGER_TYPES, rows);
}

/** Replaces the holds of the evaluated keys: what is held now stays or is added, the rest is released. Returns the released count. */
export async function replaceHolds(trx: Knex.Transaction, evaluatedKeys: readonly string[], held: readonly Target[], now: string): Promise<number> {
  const previous = new Map<string, string>();
  const dialect = dialectOf(trx);
  const parts = dialect.chunks(evaluatedKeys, { form: 'inList' });
  for (const part of parts) {
    const rows: { line_key: string; affiliate_id: string; since: unknown }[] = await trx('commission_holds')
      .modify(dialect.inList('line_key', part))
      .select('line_key', 'affiliate_id', 'since');
    for (const r of rows) previous.set(`${r.line_key}\u0000${r.affiliate_id}`, fromStoreTimestamp(r.since) ?? now);
  }
  if (previous.size === 0 && held.length === 0) return 0;
  for (const part of parts) await trx('commission_holds').modify(dialect.inList('line_key', part)).delete();
  const rows = held.map((t) => ({
    line_key: t.key,
    affiliate_id: t.affiliate,
    plan_id: t.plan.id,
    plan_kind: t.plan.kind,
    partner_id: t.plan.partner,
    customer_id: t.customer,
    period: t.period,
    missing: JSON.stringify(t.missing),
    since: previous.get(`${t.key}\u0000${t.affiliate}`) ?? now,
    updated_at: now,
  }));
  for (const part of dialect.insertChunks(rows)) await trx('commission_holds').insert(part);
  const still = new Set(held.map((t) => `${t.key}\u0000${t.affiliate}`));
  return [...previous.keys()].filter((k) => !still.has(k)).length;
}

/** What every held entry says, whatever holds it (an FX rate or a fraud flag). */
export type HeldEntry = Pick<LedgerLine, 'line_key' | 'affiliate_id' | 'plan_id' | 'plan_kind' | 'partner_id' | 'customer_id' | 'period'> & { since: string };

export interface Hold extends HeldEntry {
  missing: string[];
}

export interface HoldFilter {
  partner?: string;
  affiliate?: string;
  month?: string;
}

/** The rows of a table of held entries (FX or review), optionally of one partner, affiliate or month, each with its common fields read. */
export async function readHeldEntries(knex: Knex, table: 'commission_holds' | 'commission_review_holds', filter: HoldFilter): Promise<{ entry: HeldEntry; row: Record<string, unknown> }[]> {
  const q = knex(table).select('*').orderBy(['partner_id', 'plan_id', 'line_key', 'affiliate_id']);
  if (filter.partner) q.where('partner_id', filter.partner);
  if (filter.affiliate) q.where('affiliate_id', filter.affiliate);
  if (filter.month) q.where('period', filter.month);
  const rows: Record<string, unknown>[] = await q;
  return rows.map((r) => ({
    row: r,
    entry: {
      line_key: String(r.line_key),
      affiliate_id: String(r.affiliate_id),
      plan_id: String(r.plan_id),
      plan_kind: String(r.plan_kind) as PlanKind,
      partner_id: String(r.partner_id),
      customer_id: r.customer_id === null ? null : String(r.customer_id),
      period: String(r.period),
      since: fromStoreTimestamp(r.since) ?? '',
    },
  }));
}

/** Held entries (waiting for FX rates), optionally of one partner or affiliate. */
export async function listHolds(knex: Knex, filter: HoldFilter = {}): Promise<Hold[]> {
  return (await readHeldEntries(knex, 'commission_holds', filter)).map(({ entry, row }) => ({ ...entry, missing: parseJson<string[]>(row.missing) }));
}

/**
 * Held entries per partner, for `status`: how many, since when, and which rates they wait for.
 */
export async function commissionHoldSummary(knex: Knex): Promise<{ partner: string; held: number; oldest: string; missing_rates: string[] }[]> {
  const holds = await listHolds(knex);
  const byPartner = new Map<string, { partner: string; held: number; oldest: string; missing_rates: Set<string> }>();
  for (const h of holds) {
    let s = byPartner.get(h.partner_id);
    if (!s) byPartner.set(h.partner_id, (s = { partner: h.partner_id, held: 0, oldest: h.since, missing_rates: new Set() }));
    s.held += 1;
    if (h.since < s.oldest) s.oldest = h.since;
    for (const m of h.missing) s.missing_rates.add(m);
  }
  return [...byPartner.values()].map((s) => ({ ...s, missing_rates: [...s.missing_rates].sort() }));
}
