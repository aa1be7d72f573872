import type { Store } from '../../src/store/store.js';
import { storedToRecord } from '../../src/store/rows.js';
import { entityTable } from '../../src/store/tables.js';
import type { Entity, RawRecord, SpecRecord, Variant } from '../../src/types.js';

export const raw = (values: readonly unknown[]): RawRecord[] => values.map((value, i) => ({ position: i + 1, value }));

/** The stored records of one partner's table, read back as spec records, in key order. */
export async function stored(store: Store, partner: string, variant: Variant, entity: Entity): Promise<SpecRecord[]> {
  const table = entityTable(variant, entity);
  const rows = (await store.knex(table.name).where('partner_id', partner).orderBy(table.key.map((k) => ({ column: k })))) as Record<string, unknown>[];
  return rows.map((r) => storedToRecord(table, r));
}

export const customer = (id: string, extra: SpecRecord = {}): SpecRecord => ({
  customer_id: id,
  signup_date: '2026-11-01T09:30:00Z',
  affiliate_id: 'aff-1',
  ...extra,
});

export const deposit = (id: string, customerId: string, extra: SpecRecord = {}): SpecRecord => ({
  transaction_id: id,
  customer_id: customerId,
  transaction_type: 'deposit',
  amount_currency: 100.5,
  currency: 'EUR',
  transaction_date: '2026-11-02T12:00:00Z',
  status: 'approved',
  ...extra,
});

export const gaming = (date: string, customerId: string, extra: SpecRecord = {}): SpecRecord => ({
  date,
  customer_id: customerId,
  game_type: 'slots',
  currency: 'EUR',
  ...extra,
});
