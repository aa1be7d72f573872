/**
 * The erasures remembered (migration 028): who was erased, when, by whom and through which face,
 * and how many rows of each table the erasure touched, never the values. A load reads them to drop
 * the personal fields of an erased customer sent again (../pipeline/batch.ts).
 */
import type { Knex } from 'knex';
import { minimiseRecord, type PersonalData } from '../spec/personal-data.js';
import type { SpecRecord } from '../types.js';
import type { NewReject } from './rejects.js';
import { dialectOf } from './dialect/index.js';

/** What an erased customer's records keep of the personal fields at ingest: nothing. */
export const ERASED: PersonalData = { policy: { email: 'drop', first_name: 'drop', last_name: 'drop' } };

export interface Erasure {
  id: number;
  partner: string;
  customerId: string;
  requestedBy: string;
  via: string;
  erasedAt: string;
  /** Table → rows touched. */
  tables: Record<string, number>;
}

interface ErasureRow {
  id: number | string;
  partner_id: string;
  customer_id: string;
  requested_by: string;
  via: string;
  erased_at: unknown;
  tables: string;
}

const toErasure = (r: ErasureRow): Erasure => ({
  id: Number(r.id), partner: r.partner_id, customerId: r.customer_id, requestedBy: r.requested_by, via: r.via,
  erasedAt: r.erased_at instanceof Date ? r.erased_at.toISOString() : String(r.erased_at), tables: JSON.parse(r.tables) as Record<string, number>,
});

/** Which of these customers of the partner were erased (one indexed look when the partner has none). */
export async function erasedCustomers(db: Knex, partner: string, ids: readonly string[]): Promise<Set<string>> {
  const erased = new Set<string>();
  if (ids.length === 0 || !(await db('erasures').where('partner_id', partner).first('id'))) return erased;
  const dialect = dialectOf(db);
  for (const part of dialect.chunks([...new Set(ids)], { form: 'inList' })) {
    const rows = (await db('erasures').where('partner_id', partner).modify(dialect.inList('customer_id', part)).distinct('customer_id')) as { customer_id: string }[];
    for (const r of rows) erased.add(r.customer_id);
  }
  return erased;
}

export async function recordErasure(trx: Knex.Transaction, e: Omit<Erasure, 'id'>): Promise<void> {
  await trx('erasures').insert({ partner_id: e.partner, customer_id: e.customerId, requested_by: e.requestedBy, via: e.via, erased_at: e.erasedAt, tables: JSON.stringify(e.tables) });
}

export async function listErasures(db: Knex, filter: { partner?: string; customer?: string } = {}): Promise<Erasure[]> {
  const q = db<ErasureRow>('erasures').select('*').orderBy('id');
  if (filter.partner) q.where('partner_id', filter.partner);
  if (filter.customer) q.where('customer_id', filter.customer);
  return (await q).map(toErasure);
}

/**
 * A customers batch in its load transaction: the records of customers erased earlier lose their
 * personal fields before they are written, and a reject of one keeps its key only (its payload is
 * the partner's record, whose personal values cannot all be told apart); resolves with how many
 * records were written without them. Read in the transaction, under the partner's load lock that
 * an erasure takes too, so a load and an erasure of the same customer never cross.
 */
export async function forgetErased(trx: Knex.Transaction, partner: string, records: Iterable<SpecRecord>, rejects: NewReject[]): Promise<number> {
  const list = [...records];
  const ids = [...list.map((r) => String(r.customer_id)), ...rejects.flatMap((r) => (r.key === undefined ? [] : [r.key]))];
  const gone = await erasedCustomers(trx, partner, ids);
  if (gone.size === 0) return 0;
  let erased = 0;
  for (const record of list) {
    if (!gone.has(String(record.customer_id))) continue;
    minimiseRecord(record, ERASED);
    erased += 1;
  }
  for (const reject of rejects) {
    if (reject.key !== undefined && gone.has(reject.key)) reject.payload = { customer_id: reject.key, personal_data: 'not kept: the customer was erased' };
  }
  return erased;
}
