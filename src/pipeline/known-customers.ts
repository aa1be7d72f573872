/**
 * The partners and customers a Loader knows to be stored, remembered from committed loads and
 * from reads: a batch whose customers are all known loads without a query for them.
 */
import type { Knex } from 'knex';
import type { SpecRecord, Variant } from '../types.js';
import { knownCustomers } from '../store/waiting.js';

/** Customer ids remembered per partner; a customer deleted at the source is forgotten at its commit (Loader.remove). */
const CACHE_LIMIT = 500_000;

export class KnownCustomers {
  private readonly partners = new Map<string, Variant>();
  private readonly customers = new Map<string, Set<string>>();

  knowsPartner(partner: string, variant: Variant): boolean {
    return this.partners.get(partner) === variant;
  }

  /** What a committed transaction wrote: only committed data may be remembered. */
  committed(partner: string, variant: Variant, customers: Iterable<string>): void {
    this.partners.set(partner, variant);
    this.remember(partner, customers);
  }

  /** Per partner: how many times customers were forgotten (a batch made ready before a forget is checked again). */
  private readonly forgets = new Map<string, number>();

  /** Customers deleted by a committed transaction: a record for one of them waits for it again. */
  forget(partner: string, customers: Iterable<string>): void {
    const cache = this.customers.get(partner);
    if (cache) for (const id of customers) cache.delete(id);
    this.forgets.set(partner, (this.forgets.get(partner) ?? 0) + 1);
  }

  /** Changes whenever the partner's customers are forgotten: what was remembered before may be gone. */
  generation(partner: string): number {
    return this.forgets.get(partner) ?? 0;
  }

  /** Whether every record's customer is remembered as a customer of the partner (then no query is needed). */
  remembersCustomers(partner: string, records: Iterable<SpecRecord>): boolean {
    const cache = this.customers.get(partner);
    if (!cache) return false;
    for (const r of records) if (!cache.has(r.customer_id as string)) return false;
    return true;
  }

  /** A membership test for customer ids: remembered ones, then one query for the rest. */
  async customerTest(trx: Knex.Transaction, partner: string, records: Iterable<SpecRecord>): Promise<(id: string) => boolean> {
    const cache = this.customers.get(partner) ?? new Set<string>();
    const unknown = new Set<string>();
    for (const r of records) {
      const id = r.customer_id as string;
      if (!cache.has(id)) unknown.add(id);
    }
    // Ids read from the store exist in committed data (a transactions/activity batch writes no customers).
    const found = unknown.size > 0 ? await knownCustomers(trx, partner, [...unknown]) : new Set<string>();
    this.remember(partner, found);
    return (id) => cache.has(id) || found.has(id);
  }

  private remember(partner: string, ids: Iterable<string>): void {
    let cache = this.customers.get(partner);
    if (!cache) this.customers.set(partner, (cache = new Set()));
    for (const id of ids) {
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.add(id);
    }
  }
}
