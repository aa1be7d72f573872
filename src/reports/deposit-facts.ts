/**
 * The facts a customer's approved deposits make as a whole: its FTD (report_ftd, one per
 * customer) and its depositor days (report_depositors, one row per customer and UTC day with an
 * approved deposit, carrying the customer's cell). For each customer whose deposits (or whose
 * cell) a batch changed, the stored ones are compared with what its deposits say now; the
 * difference moves the day cells' FTD and depositor counts and the month cells' distinct depositors
 * by one at a time. Read per customer: the cost is the customer's deposits, not the day's.
 */
import type { Knex } from 'knex';
import type { FactDeltas } from './deltas.js';
import { dialectOf } from '../store/dialect/index.js';
import { splitPair } from './facts-values.js';
import type { CustomerReads } from './customer-reads.js';
import { updateFtd } from './ftd.js';

/**
 * Brings the FTD and depositor days of these customers up to date. `reads`: what was read of them
 * (./customer-reads.ts: each customer's cell now, absent when not stored, which counts nowhere;
 * their deposits, stored FTD and depositor days); `pairBefore`: the cell its stored FTD counted in
 * (absent: nowhere).
 */
export async function moveDepositFacts(trx: Knex.Transaction, partner: string, customers: readonly string[], reads: CustomerReads,
  pairBefore: (customer: string) => string | undefined, deltas: FactDeltas): Promise<void> {
  if (customers.length === 0) return;
  const { now, deposits } = reads;
  const ftd = await updateFtd(trx, partner, customers, deposits, reads.ftd);
  for (const [customer, change] of ftd) {
    const before = pairBefore(customer);
    const after = now.get(customer)?.pair;
    if (!change.changed && before === after) continue;
    if (change.before && before !== undefined) deltas.addFtd(change.before.day, before, change.before.amount_usd, -1);
    if (change.after && after !== undefined) deltas.addFtd(change.after.day, after, change.after.amount_usd, 1);
  }

  // Depositor days: stored (day → cell) against what the deposits say (day, at the customer's cell now).
  const stored = reads.depositorDays;
  const inserts: Record<string, unknown>[] = [];
  const deletes: [string, string][] = [];
  for (const customer of customers) {
    const pair = now.get(customer)?.pair;
    const have = stored.get(customer) ?? new Map<string, string>();
    // Read for its additions (./customer-reads.ts): the stored days from `since` on, and the new deposits' days.
    const since = reads.additions.get(customer);
    const want = new Map<string, string>(since === undefined ? [] : have);
    if (pair !== undefined) {
      for (const d of deposits.get(customer) ?? []) {
        const day = d.at.slice(0, 10);
        if (since === undefined || day >= since) want.set(day, pair);
      }
    }
    const monthsBefore = new Set<string>();
    const monthsAfter = new Set<string>();
    for (const [day, p] of have) {
      monthsBefore.add(`${day.slice(0, 7)}\u0000${p}`);
      if (want.get(day) === p) continue;
      deletes.push([day, customer]);
      deltas.add(day, p, 'depositors', -1);
    }
    for (const [day, p] of want) {
      monthsAfter.add(`${day.slice(0, 7)}\u0000${p}`);
      if (have.get(day) === p) continue;
      const [affiliate, campaign] = splitPair(p);
      inserts.push({ partner_id: partner, day, customer_id: customer, affiliate_id: affiliate, campaign_id: campaign });
      deltas.add(day, p, 'depositors', 1);
    }
    for (const m of monthsBefore) if (!monthsAfter.has(m)) deltas.addMonthDepositor(m.slice(0, 7), m.slice(8), -1);
    for (const m of monthsAfter) if (!monthsBefore.has(m)) deltas.addMonthDepositor(m.slice(0, 7), m.slice(8), 1);
  }
  const dialect = dialectOf(trx);
  for (const part of dialect.chunks(deletes, 400)) await dialect.deleteKeys(trx, 'report_depositors', partner, { day: 'date', customer_id: 'text' }, part, 400);
  await dialect.insertRows(trx, 'report_depositors', { partner_id: 'text', day: 'date', customer_id: 'text', affiliate_id: 'text', campaign_id: 'text' }, inserts, { json: true });
}
