import { replayRejects } from '../../../jobs/replay-rejects.js';
import { Loader } from '../../pipeline/load.js';
import { commissionHook } from './commissions.js';
import { specValidator } from '../../spec/validator.js';
import { listRejects } from '../../store/rejects.js';
import { fromStoreTimestamp } from '../../store/values.js';
import type { Entity } from '../../types.js';
import { withStore, type GlobalOptions } from '../context.js';
import { loadConfig } from '../definitions.js';
import { EXIT_OK, type Io } from '../io.js';
import { formatTable } from '../table.js';

/** The payload as JSON when it is JSON (a record), else the raw text (a line that never parsed). */
function parsedPayload(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `rejects <partner> [--replay] [--stream S] [--limit N]`: quarantined records with reasons; replay after a fix. */
export async function rejectsCommand(globals: GlobalOptions, args: { partner: string; replay?: boolean; stream?: Entity; limit?: number }, io: Io): Promise<number> {
  const config = await loadConfig(globals);
  // Replay maps pulled records with the partner's current definition, when it has a valid one.
  const def = config.definitions.find((d) => d.partner === args.partner);
  return withStore(globals, async (store) => {
    if (args.replay) {
      const loader = new Loader({ store, validator: specValidator(), ...(await commissionHook(globals, io, store, config.logger)) });
      const results = await replayRejects(loader, args.partner, def, args.stream);
      if (globals.json) io.out(JSON.stringify({ partner: args.partner, replay: results }));
      else if (results.length === 0) io.out(`${args.partner}: no open rejects to replay`);
      else {
        io.out(formatTable(['STREAM', 'REPLAYED', 'LOADED', 'WAITING', 'STILL REJECTED', 'RUN'],
          results.map((r) => [r.entity, r.replayed, r.counts.loaded, r.counts.waiting, r.stillRejected, r.runId])));
      }
      return EXIT_OK;
    }
    const rejects = await listRejects(store.knex, { partner: args.partner, status: 'open', entity: args.stream, limit: args.limit });
    if (globals.json) {
      io.out(JSON.stringify({
        partner: args.partner,
        rejects: rejects.map((r) => ({
          id: r.id, stream: r.entity, position: r.position, run_id: r.run_id, origin: r.origin,
          first_seen_at: fromStoreTimestamp(r.first_seen_at), last_seen_at: fromStoreTimestamp(r.last_seen_at),
          errors: r.errors, payload: parsedPayload(r.payload),
        })),
      }));
      return EXIT_OK;
    }
    if (rejects.length === 0) {
      io.out(`${args.partner}: no open rejects`);
      return EXIT_OK;
    }
    io.out(formatTable(['ID', 'STREAM', 'SEEN', 'FIELD', 'RULE', 'MESSAGE'],
      rejects.flatMap((r) => r.errors.map((e) => [r.id, r.entity, (fromStoreTimestamp(r.last_seen_at) ?? '').slice(0, 19).replace('T', ' '), e.field, e.rule, e.message]))));
    io.out(`${rejects.length} open rejects; fix the cause, then: partner-sync rejects ${args.partner} --replay`);
    return EXIT_OK;
  });
}
