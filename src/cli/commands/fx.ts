import { importRatesFile } from '../../../jobs/commission.js';
import { createLogger } from '../../log.js';
import { withStore, type GlobalOptions } from '../context.js';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';
import { formatTable } from '../table.js';
import { commissionPlans } from './commissions.js';

/**
 * `fx import FILE.csv`: daily FX rates (header date,currency,rate; rate = USD per one unit). The
 * file loads whole or not at all: any bad line fails it (exit 1) with every problem listed.
 * Then held commissions waiting for these rates are released, and a changed rate re-evaluates
 * what used it.
 */
export async function fxImportCommand(globals: GlobalOptions, args: { file: string }, io: Io): Promise<number> {
  const plans = await commissionPlans(globals, io);
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
  return withStore(globals, async (store) => {
    let result;
    try {
      result = await importRatesFile(store, plans, args.file, logger);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') throw new CliError(`cannot read ${args.file}: ${code}`, EXIT_USAGE, { cause: error });
      throw error;
    }
    const released = result.evaluations.reduce((n, e) => n + e.released, 0);
    const held = result.evaluations.reduce((n, e) => n + e.held, 0);
    const lines = result.evaluations.reduce((n, e) => n + e.lines, 0);
    if (globals.json) {
      io.out(JSON.stringify({
        file: args.file, rates: result.rates, problems: result.problems,
        added: result.saved?.added ?? 0, changed: result.saved?.changed ?? 0, unchanged: result.saved?.unchanged ?? 0,
        commissions: { lines, released, held, partners: result.evaluations.map((e) => ({ partner: e.partner, lines: e.lines, net_usd: e.net.toFixed(2), released: e.released, held: e.held })) },
      }));
    } else if (result.problems.length > 0) {
      io.out(`${args.file}: not imported, ${result.problems.length} problems (nothing was loaded):`);
      io.out(formatTable(['LINE', 'PROBLEM'], result.problems.map((p) => [p.line, p.message])).replace(/^/gm, '  '));
    } else {
      const s = result.saved;
      io.out(`${args.file}: ${result.rates} rates, ${s?.added ?? 0} new, ${s?.changed ?? 0} changed, ${s?.unchanged ?? 0} unchanged; ` +
        `commissions: ${released} held entries released, ${lines} lines booked, ${held} still held`);
    }
    return result.problems.length > 0 ? EXIT_FAILURE : EXIT_OK;
  });
}
