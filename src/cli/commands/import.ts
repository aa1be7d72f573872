import { importFile } from '../../../jobs/import-file.js';
import { cliLoader } from '../loader.js';
import { createLogger } from '../../log.js';
import type { Entity, Variant } from '../../types.js';
import { withStore, type GlobalOptions } from '../context.js';
import { EXIT_OK, type Io } from '../io.js';
import { formatTable } from '../table.js';

const SHOWN_REJECTS = 20;

export async function importCommand(
  globals: GlobalOptions,
  args: { partner: string; variant: Variant; entity: Entity; file: string },
  io: Io,
): Promise<number> {
  return withStore(globals, async (store) => {
    const loader = await cliLoader(globals, io, store, createLogger({ level: process.env.LOG_LEVEL ?? 'warn' }), args);
    const summary = await importFile({ store, loader }, { ...args, stdin: io.stdin });
    const c = summary.counts;
    if (globals.json) {
      io.out(JSON.stringify({
        partner: args.partner, variant: args.variant, entity: args.entity, file: summary.file, run_id: summary.runId,
        total: c.pulled, loaded: c.loaded, rejected: c.rejected, waiting: c.waiting, stale: c.stale, released: c.released, distinct: summary.distinct,
        rejects: summary.rejects.flatMap((r) => r.errors.map((e) => ({ line: r.position, ...e }))),
      }));
      return EXIT_OK;
    }
    io.out(`${args.partner} ${args.variant}/${args.entity} from ${summary.file}: ${c.pulled} records, ` +
      `${c.loaded} loaded${repeatedNote(c.valid, summary.distinct)}, ${c.rejected} rejected, ${c.waiting} waiting for their customer` +
      (c.stale > 0 ? `, ${c.stale} stale (older than the version stored, not applied)` : '') +
      (c.released > 0 ? `, ${c.released} earlier waiting records released` : '') + ` (run ${summary.runId})`);
    if (summary.rejects.length > 0) {
      const rows = summary.rejects.slice(0, SHOWN_REJECTS).flatMap((r) => r.errors.map((e) => [r.position, e.field, e.rule, e.message]));
      io.out(formatTable(['LINE', 'FIELD', 'RULE', 'MESSAGE'], rows).replace(/^/gm, '  '));
      if (summary.rejects.length > SHOWN_REJECTS) io.out(`  ... and ${summary.rejects.length - SHOWN_REJECTS} more rejected records (kept in the store's rejects)`);
    }
    return EXIT_OK;
  });
}

/** ` (8 distinct records; 2 repeated in the file: last version kept)` when the file repeats records; else nothing. */
function repeatedNote(valid: number, distinct: number): string {
  const repeated = valid - distinct;
  return repeated > 0 ? ` (${distinct} distinct records; ${repeated} repeated in the file: last version kept)` : '';
}
