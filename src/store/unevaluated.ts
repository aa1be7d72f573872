/**
 * What is loaded but not evaluated yet by the jobs a bulk run defers (docs/loading.md, Bulk runs):
 * customers waiting for the fraud rules (fraud_deferred, and those of the rows fraud_deferred_days
 * names), commission scope entries waiting for
 * their evaluation (commission_pending) and days whose report facts wait to be recomputed
 * (report_pending), per partner, with the age of the oldest. `status`, the
 * console and `report` show it, so nothing is silently stale: a running bulk run settles it at
 * its end (and every so many records); a crash leaves it for the next loading command or worker.
 */
import type { Knex } from 'knex';
import { toUtcTimestamp } from '../kernel/timestamp.js';
import { append } from '../kernel/collections.js';
import { customersOfRunDays, type DeferredDay } from './run-days.js';

export interface Unevaluated {
  partner: string;
  /** Customers whose records loaded but whom the fraud rules have not judged yet. */
  fraud_customers: number;
  /** Commission scope entries (customers, customer-days, replaced days) not evaluated yet. */
  commission_entries: number;
  /** UTC days whose report facts (the affiliate report's figures) do not include what loaded yet. */
  report_days: number;
  /** When the oldest of them was written (its batch's commit), ISO. */
  oldest: string;
  age_seconds: number;
}

const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : toUtcTimestamp(String(v)));

export async function unevaluated(knex: Knex, now: Date, partner?: string): Promise<Unevaluated[]> {
  const out = new Map<string, Unevaluated>();
  const at = (p: string, count: number, oldest: unknown, field: 'fraud_customers' | 'commission_entries' | 'report_days') => {
    const o = iso(oldest);
    const e = out.get(p) ?? { partner: p, fraud_customers: 0, commission_entries: 0, report_days: 0, oldest: o, age_seconds: 0 };
    e[field] = count;
    if (o < e.oldest) e.oldest = o;
    out.set(p, e);
  };
  for (const [table, field] of [['fraud_deferred', 'fraud_customers'], ['commission_pending', 'commission_entries'], ['report_pending', 'report_days']] as const) {
    let q = knex(table).select('partner_id').count({ n: '*' }).min({ oldest: 'created_at' }).groupBy('partner_id');
    if (partner) q = q.where('partner_id', partner);
    // The customers pending for the report facts come with days of theirs: the days tell how much waits.
    if (table === 'report_pending') q = q.where('kind', 'day');
    for (const r of (await q) as { partner_id: string; n: unknown; oldest: unknown }[]) at(r.partner_id, Number(r.n), r.oldest, field);
  }
  // Customers deferred by day (a bulk batch's transactions and activity): those of their runs' rows, with the ones deferred by name.
  let days = knex('fraud_deferred_days').select('partner_id', 'variant', 'run_id', 'entity', 'date', 'created_at');
  if (partner) days = days.where('partner_id', partner);
  const byPartner = new Map<string, DeferredDay[]>();
  for (const r of (await days) as (DeferredDay & { partner_id: string })[]) append(byPartner, r.partner_id, r);
  for (const [p, list] of byPartner) {
    const customers = new Set<string>(((await knex('fraud_deferred').where('partner_id', p).select('customer_id')) as { customer_id: string }[]).map((r) => r.customer_id));
    await customersOfRunDays(knex, p, list, customers);
    at(p, customers.size, list.map((d) => iso(d.created_at)).sort()[0], 'fraud_customers');
  }
  for (const e of out.values()) e.age_seconds = Math.max(0, Math.round((now.getTime() - Date.parse(e.oldest)) / 1000));
  return [...out.values()].sort((a, b) => a.partner.localeCompare(b.partner));
}

/** "sandbox-casino: loaded, not evaluated yet: 4980 customers for the fraud rules, 12030 commission scope entries, the report facts of 31 days, the oldest 3 min old". */
export function describeUnevaluated(u: Unevaluated): string {
  const parts = [
    ...(u.fraud_customers > 0 ? [`${u.fraud_customers} customers for the fraud rules`] : []),
    ...(u.commission_entries > 0 ? [`${u.commission_entries} commission scope entries`] : []),
    ...(u.report_days > 0 ? [`the report facts of ${u.report_days} days`] : []),
  ];
  return `${u.partner}: loaded, not evaluated yet: ${parts.join(', ')}, the oldest ${age(u.age_seconds)} old`;
}

/** What does not count the waiting records yet: "the report's figures, commissions and fraud holds". */
export function notCountedBy(u: Unevaluated): string {
  const parts = [
    ...(u.report_days > 0 ? ["the report's figures"] : []),
    ...(u.commission_entries > 0 || u.fraud_customers > 0 ? ['commissions', 'fraud holds'] : []),
  ];
  return parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1] as string}`;
}

function age(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}
