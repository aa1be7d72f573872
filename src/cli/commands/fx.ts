import { join } from 'node:path';
import { importRatesFile } from '../../../jobs/commission.js';
import { fetchFxFeed } from '../../../jobs/fx-feed.js';
import { FeedError, loadFeedConfig, type FeedFormat } from '../../commission/fx-feed.js';
import { insecureUrlReason } from '../../config/secure-url.js';
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

/**
 * `fx fetch [--url U --format ecb|json]`: one read of the FX feed now, as the worker's daily one
 * (jobs/fx-feed.ts): exit 1 when it cannot be read or parsed (nothing is written), 2 for a bad
 * config/fx-feed.yaml or no feed configured.
 */
export async function fxFetchCommand(globals: GlobalOptions, args: { url?: string; format?: FeedFormat }, io: Io): Promise<number> {
  const loaded = await loadFeedConfig(join(globals.config, 'fx-feed.yaml'), insecureUrlReason);
  if (loaded.errors.length > 0) throw new CliError(loaded.errors.join('\n'), EXIT_USAGE);
  const url = args.url ?? loaded.config?.url;
  const format = args.format ?? loaded.config?.format;
  if (url === undefined || format === undefined) throw new CliError(`fx fetch: no feed: give --url and --format, or write ${join(globals.config, 'fx-feed.yaml')} (docs/commissions.md, The FX feed)`, EXIT_USAGE);
  const insecure = insecureUrlReason(url);
  if (insecure) throw new CliError(`fx fetch: --url: ${insecure}`, EXIT_USAGE);
  const plans = await commissionPlans(globals, io);
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
  return withStore(globals, async (store) => {
    let r;
    try {
      r = await fetchFxFeed(store, plans, { format, url, retries: loaded.config?.retries ?? 0, retryDelayMs: loaded.config?.retryDelayMs ?? 0 }, logger);
    } catch (error) {
      if (error instanceof FeedError || error instanceof TypeError) throw new CliError(`fx fetch: ${(error as Error).message}; no rate was written`, EXIT_FAILURE, { cause: error });
      throw error;
    }
    if (globals.json) {
      io.out(JSON.stringify({ publication: r.publication, days: r.days.map((d) => ({ date: d.date, rates: d.rates, ...(d.carriedFrom ? { carried_from: d.carriedFrom } : {}) })), added: r.added, changed: r.changed, commissions: { released: r.released, lines: r.lines, held: r.stillHeld } }));
      return EXIT_OK;
    }
    io.out(`rates of ${r.publication}: ${r.days.map((d) => `${d.date} ${d.rates}${d.carriedFrom ? ` (carried from ${d.carriedFrom})` : ''}`).join(', ')}; ${r.added} new, ${r.changed} changed; ` +
      `commissions: ${r.released} held entries released, ${r.lines} lines booked, ${r.stillHeld} still held`);
    return EXIT_OK;
  });
}
