/**
 * `tombstones <partner>`: the records deleted at the source (docs/loading.md, Deletes), oldest
 * first, each with how and when the delete was learned and the customer's tombstone it went with:
 * what a clawback line's `tombstones:<id>` source points at. Reads only.
 */
import { listTombstones } from '../../store/tombstones.js';
import { withStore, type GlobalOptions } from '../context.js';
import { EXIT_OK, type Io } from '../io.js';
import { formatTable } from '../table.js';

export interface TombstonesArgs {
  partner: string;
  customer?: string;
}

export async function tombstonesCommand(globals: GlobalOptions, args: TombstonesArgs, io: Io): Promise<number> {
  return withStore(globals, async (store) => {
    const list = await listTombstones(store.knex, args.partner, { customer: args.customer });
    if (globals.json) {
      io.out(JSON.stringify({
        partner: args.partner,
        tombstones: list.map((t) => ({ id: t.id, entity: t.entity, record_key: t.recordKey, customer_id: t.customerId, learned_via: t.learnedVia, learned_at: t.learnedAt, run_id: t.runId, cascade_of: t.cascadeOf, row: t.row })),
      }));
      return EXIT_OK;
    }
    if (list.length === 0) {
      io.out(`${args.partner}: no records deleted at the source${args.customer ? ` for customer ${args.customer}` : ''}`);
      return EXIT_OK;
    }
    io.out(formatTable(['ID', 'STREAM', 'RECORD', 'CUSTOMER', 'LEARNED VIA', 'LEARNED AT', 'WITH'],
      list.map((t) => [t.id, t.entity, t.recordKey, t.customerId, t.learnedVia, t.learnedAt.slice(0, 19), t.cascadeOf === null ? '' : `customer's ${t.cascadeOf}`])));
    io.out(`${list.length} record(s) deleted at the source; a ledger line's source tombstones:<ID> names one`);
    return EXIT_OK;
  });
}
