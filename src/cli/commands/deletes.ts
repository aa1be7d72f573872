/**
 * `deletes list|apply|discard`: the deletes the mass-delete guard held (docs/loading.md, Deletes).
 * `list` shows the holds (open ones by default); `apply ID` deletes what they hold through the
 * load path, with every after-load job; `discard ID` keeps the records. Who decided is recorded.
 */
import { applyHold, discardHold, HoldError, type HoldDecision } from '../../../jobs/delete-holds.js';
import { createLogger } from '../../log.js';
import { listHolds, type DeleteHold, type HoldState } from '../../store/delete-holds.js';
import { osUser, withStore, type GlobalOptions } from '../context.js';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';
import { cliLoader } from '../loader.js';
import { formatTable } from '../table.js';

export interface DeletesListArgs {
  partner?: string;
  all?: boolean;
}

const holdJson = (h: DeleteHold) => ({
  id: h.id, partner: h.partner, entity: h.entity, learned_via: h.learnedVia, scope: h.scope, run_id: h.runId, held_at: h.heldAt, reason: h.reason,
  count: h.ids.length, ids: h.ids, state: h.state, decided_at: h.decidedAt, decided_by: h.decidedBy, outcome: h.outcome,
});

export async function deletesListCommand(globals: GlobalOptions, args: DeletesListArgs, io: Io): Promise<number> {
  return withStore(globals, async (store) => {
    const holds = await listHolds(store.knex, { ...(args.partner ? { partner: args.partner } : {}), ...(args.all ? {} : { state: 'held' as HoldState }) });
    if (globals.json) {
      io.out(JSON.stringify({ holds: holds.map(holdJson) }));
      return EXIT_OK;
    }
    if (holds.length === 0) {
      io.out(`no ${args.all ? '' : 'held '}deletes${args.partner ? ` of partner ${args.partner}` : ''}`);
      return EXIT_OK;
    }
    io.out(formatTable(['ID', 'PARTNER', 'STREAM', 'RECORDS', 'LEARNED VIA', 'HELD AT', 'STATE', 'WHY'],
      holds.map((h) => [h.id, h.partner, h.entity, h.ids.length, h.learnedVia, h.heldAt.slice(0, 19), h.state === 'held' ? 'held' : `${h.state} by ${h.decidedBy ?? ''}`, h.reason])));
    if (holds.some((h) => h.state === 'held')) io.out('partner-sync deletes apply ID deletes them (the ledger follows); partner-sync deletes discard ID keeps the records');
    return EXIT_OK;
  });
}

export interface DeletesDecideArgs {
  id: string;
  decision: 'apply' | 'discard';
}

export async function deletesDecideCommand(globals: GlobalOptions, args: DeletesDecideArgs, io: Io): Promise<number> {
  const id = Number(args.id);
  if (!Number.isInteger(id) || id <= 0) throw new CliError(`deletes ${args.decision}: ID must be a hold's number (partner-sync deletes list), not ${JSON.stringify(args.id)}`, EXIT_USAGE);
  return withStore(globals, async (store) => {
    const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
    const [hold] = await listHolds(store.knex, { id });
    const loader = await cliLoader(globals, io, store, logger, hold ? { partner: hold.partner, variant: hold.variant } : undefined);
    let d: HoldDecision;
    try {
      d = args.decision === 'apply' ? await applyHold(loader, id, osUser()) : await discardHold(loader, id, osUser());
    } catch (error) {
      if (error instanceof HoldError) throw new CliError(`deletes ${args.decision}: ${error.message}`, EXIT_FAILURE);
      throw error;
    }
    if (globals.json) {
      io.out(JSON.stringify({ hold: holdJson(d.hold), deleted: d.deleted, came_back: d.cameBack, gone: d.gone, ...(d.runId ? { run_id: d.runId } : {}) }));
      return EXIT_OK;
    }
    if (args.decision === 'discard') io.out(`hold ${id} discarded: ${d.hold.ids.length} ${d.hold.entity} of ${d.hold.partner} kept`);
    else {
      io.out(`hold ${id} applied: ${d.deleted} ${d.hold.entity} of ${d.hold.partner} deleted (run ${d.runId ?? ''}); the commissions follow`);
      if (d.cameBack.length > 0) io.out(`  kept, sent again since the hold: ${d.cameBack.slice(0, 10).join(', ')}${d.cameBack.length > 10 ? ` (+${d.cameBack.length - 10} more)` : ''}`);
      if (d.gone.length > 0) io.out(`  deleted before or not stored: ${d.gone.length}`);
    }
    return EXIT_OK;
  });
}
