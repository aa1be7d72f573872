/**
 * Each customer's first approved deposit (FTD: earliest transaction_date, then transaction_id),
 * kept in report_ftd, and the approved deposits it is found from.
 */
import type { Knex } from 'knex';
import { RateBook } from '../kernel/fx.js';
import { money } from '../kernel/money.js';
import { fromStoreTimestamp } from '../store/values.js';
import { dialectOf } from '../store/dialect/index.js';
import { CHUNK, toUsd } from './facts-values.js';

const FTD_TYPES: Record<string, string> = {
  partner_id: 'text', customer_id: 'text', transaction_id: 'text', transaction_date: 'timestamptz', day: 'date', amount_currency: 'numeric', currency: 'text', amount_usd: 'numeric',
};

/** An approved deposit as stored (`at`: its UTC time). */
export interface Deposit {
  id: string;
  at: string;
  amount_currency: unknown;
  currency: string;
  amount_usd: unknown;
}

/** The columns of a stored deposit a Deposit is made of (with customer_id). */
export const DEPOSIT_READ = ['customer_id', 'transaction_id', 'transaction_date', 'amount_currency', 'currency', 'amount_usd'] as const;

/** A stored transactions row (DEPOSIT_READ) as a Deposit. */
export const depositOf = (r: Record<string, unknown>): Deposit =>
  ({ id: String(r.transaction_id), at: fromStoreTimestamp(r.transaction_date) as string, amount_currency: r.amount_currency, currency: String(r.currency), amount_usd: r.amount_usd });

/** Every approved deposit of these customers, per customer. */
export async function readDeposits(trx: Knex.Transaction, partner: string, customers: readonly string[]): Promise<Map<string, Deposit[]>> {
  const out = new Map<string, Deposit[]>();
  const dialect = dialectOf(trx);
  for (const part of dialect.chunks([...new Set(customers)], CHUNK)) {
    const rows: Record<string, unknown>[] = await trx('transactions').where('partner_id', partner).modify(dialect.inList('customer_id', part))
      .where('transaction_type', 'deposit').where('status', 'approved')
      .select(...DEPOSIT_READ);
    for (const r of rows) {
      const id = String(r.customer_id);
      let list = out.get(id);
      if (!list) out.set(id, (list = []));
      list.push(depositOf(r));
    }
  }
  return out;
}

/** A stored report_ftd row, as updateFtd compares it. */
export type StoredFtd = Record<string, unknown>;

/** The columns of report_ftd updateFtd reads. */
export const FTD_READ = ['customer_id', 'transaction_id', 'transaction_date', 'day', 'amount_currency', 'currency', 'amount_usd'] as const;

/** The stored FTD rows of these customers. */
export async function readStoredFtd(trx: Knex.Transaction, partner: string, customers: readonly string[]): Promise<Map<string, StoredFtd>> {
  const out = new Map<string, StoredFtd>();
  const dialect = dialectOf(trx);
  for (const part of dialect.chunks([...new Set(customers)], CHUNK)) {
    const rows: StoredFtd[] = await trx('report_ftd').where('partner_id', partner).modify(dialect.inList('customer_id', part)).select(...FTD_READ);
    for (const r of rows) out.set(String(r.customer_id), r);
  }
  return out;
}

/** An FTD as the cells count it: its UTC day and USD amount (null: unconverted). */
export interface FtdFact {
  day: string;
  amount_usd: string | null;
}

export interface FtdChange {
  before?: FtdFact;
  after?: FtdFact;
  /** Whether report_ftd was rewritten. */
  changed: boolean;
}

/**
 * Brings the FTD of these customers in line with their approved deposits (`deposits`: every one of
 * each customer, as readDeposits gives them). Returns each customer's stored FTD before and after.
 */
export async function updateFtd(trx: Knex.Transaction, partner: string, customers: readonly string[], deposits: ReadonlyMap<string, readonly Deposit[]>,
  stored?: ReadonlyMap<string, StoredFtd>): Promise<Map<string, FtdChange>> {
  const out = new Map<string, FtdChange>();
  const dialect = dialectOf(trx);
  // Where one parameter carries a batch (PostgreSQL): one upsert for the FTDs that moved, a delete
  // only for customers left without one; elsewhere the moved ones are deleted and inserted.
  const upsert = dialect.batchParameters;
  for (const part of dialect.chunks([...new Set(customers)], CHUNK)) {
    // The stored FTD rows: as read already by the caller (./customer-reads.ts), or read here.
    const before = stored ?? await readStoredFtd(trx, partner, part);
    const first = new Map<string, Deposit>();
    for (const customer of part) {
      for (const d of deposits.get(customer) ?? []) {
        const best = first.get(customer);
        if (!best || d.at < best.at || (d.at === best.at && d.id < best.id)) first.set(customer, d);
      }
    }
    const fx = await RateBook.load(trx, [...first.values()].filter((f) => f.amount_usd === null || f.amount_usd === undefined).map((f) => [f.currency, f.at.slice(0, 10)] as const));
    const inserts: Record<string, unknown>[] = [];
    const deletes: string[] = [];
    for (const customer of part) {
      const prior = before.get(customer);
      const next = first.get(customer);
      let row: Record<string, unknown> | undefined;
      if (next) {
        const day = next.at.slice(0, 10);
        const usd = toUsd(fx, next.amount_currency, next.currency, next.amount_usd, day);
        row = { partner_id: partner, customer_id: customer, transaction_id: next.id, transaction_date: next.at, day,
          amount_currency: money(next.amount_currency).toFixed(), currency: next.currency, amount_usd: usd === undefined ? null : usd.toFixed() };
      }
      const priorUsd = prior && prior.amount_usd !== null && prior.amount_usd !== undefined ? money(prior.amount_usd).toFixed() : null;
      const change: FtdChange = {
        ...(prior ? { before: { day: String(prior.day).slice(0, 10), amount_usd: priorUsd } } : {}),
        ...(row ? { after: { day: row.day as string, amount_usd: row.amount_usd as string | null } } : {}),
        changed: true,
      };
      out.set(customer, change);
      // The stored FTD row stays when it is the same deposit with the same values (its time, amount and USD amount).
      if (prior && row && String(prior.transaction_id) === row.transaction_id && fromStoreTimestamp(prior.transaction_date) === row.transaction_date
        && money(prior.amount_currency).toFixed() === row.amount_currency && String(prior.currency) === row.currency && priorUsd === row.amount_usd) {
        change.changed = false;
        continue;
      }
      if (!prior && !row) {
        change.changed = false;
        continue;
      }
      if (prior) deletes.push(customer);
      if (row) inserts.push(row);
    }
    const kept = new Set(upsert ? inserts.map((r) => r.customer_id as string) : []);
    const gone = deletes.filter((c) => !kept.has(c));
    for (const ids of dialect.chunks(gone, CHUNK)) await trx('report_ftd').where('partner_id', partner).modify(dialect.inList('customer_id', ids)).delete();
    await dialect.insertRows(trx, 'report_ftd', FTD_TYPES, inserts, { json: true, conflict: upsert ? { on: ['partner_id', 'customer_id'], update: Object.keys(FTD_TYPES).slice(2) } : undefined });
  }
  return out;
}

/**
 * Recomputes the FTD of these customers from their deposits. Returns the UTC days their FTD moved
 * from and to, per customer whose FTD changed.
 */
export async function recomputeFtd(trx: Knex.Transaction, partner: string, customers: readonly string[]): Promise<Map<string, Set<string>>> {
  const touched = new Map<string, Set<string>>();
  for (const part of dialectOf(trx).chunks([...new Set(customers)], CHUNK)) {
    const changes = await updateFtd(trx, partner, part, await readDeposits(trx, partner, part));
    for (const [customer, c] of changes) {
      if (!c.changed) continue;
      touched.set(customer, new Set([c.before?.day, c.after?.day].filter((d): d is string => d !== undefined)));
    }
  }
  return touched;
}
