import type { Knex } from 'knex';
import type { Variant } from '../types.js';

/**
 * Registers a partner with its variant on first load, and refuses records of the other variant:
 * one partner is either an iGaming operator or a prop-trading firm.
 */
export async function ensurePartner(trx: Knex.Transaction, partner: string, variant: Variant, now: string): Promise<void> {
  await trx('partners').insert({ partner_id: partner, variant, created_at: now }).onConflict('partner_id').ignore();
  const row: { variant: string } | undefined = await trx('partners').where({ partner_id: partner }).first('variant');
  if (row && row.variant !== variant) {
    throw new Error(`partner ${partner} is registered as ${row.variant} in this store; refusing ${variant} records`);
  }
}

/** The partners of the store with their variants, by id; `only`: that partner alone (if stored). */
export async function listPartners(knex: Knex, only?: string): Promise<{ partner: string; variant: Variant }[]> {
  let q = knex('partners').select('partner_id', 'variant').orderBy('partner_id');
  if (only) q = q.where('partner_id', only);
  return ((await q) as { partner_id: string; variant: Variant }[]).map((r) => ({ partner: r.partner_id, variant: r.variant }));
}
