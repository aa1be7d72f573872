import type { Knex } from 'knex';

/**
 * Per (partner, stream) sync state: the watermark a stream has loaded up to. It is written only
 * inside the transaction that loads the rows it covers, so it can never run ahead of the data.
 */
export interface Checkpoint {
  stream: string;
  state: unknown;
}

export async function saveCheckpoint(trx: Knex.Transaction, partner: string, checkpoint: Checkpoint, runId: string, now: string): Promise<void> {
  await trx('sync_state')
    .insert({ partner_id: partner, stream: checkpoint.stream, state: JSON.stringify(checkpoint.state), run_id: runId, updated_at: now })
    .onConflict(['partner_id', 'stream'])
    .merge(['state', 'run_id', 'updated_at']);
}

export async function readState(knex: Knex, partner: string, stream: string): Promise<unknown> {
  const row: { state: unknown } | undefined = await knex('sync_state').where({ partner_id: partner, stream }).first('state');
  if (!row) return undefined;
  return typeof row.state === 'string' ? JSON.parse(row.state) : row.state;
}
