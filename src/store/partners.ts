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
