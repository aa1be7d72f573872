import { runPartner } from '../../../jobs/run-partner.js';
import { cliLoader } from '../loader.js';
import type { Entity } from '../../types.js';
import { withStore, type GlobalOptions } from '../context.js';
import { loadConfig, partnerDefinition } from '../definitions.js';
import { CliError, EXIT_USAGE, type Io } from '../io.js';
import { progressLine } from '../progress.js';
import { printStreamResults, resultsExitCode } from './run.js';
import { withExclusiveStreams } from '../../../jobs/exclusive-streams.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const isDate = (s: string) => DATE.test(s) && new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) === s;

/** `backfill <partner> --from DATE --to DATE [--stream S]`: closed days through the same code, state untouched. */
export async function backfillCommand(globals: GlobalOptions, args: { partner: string; from: string; to: string; stream?: Entity; allowShrink?: boolean }, io: Io): Promise<number> {
  for (const [flag, value] of [['--from', args.from], ['--to', args.to]] as const) {
    if (!isDate(value)) throw new CliError(`${flag} must be a calendar date YYYY-MM-DD, got ${JSON.stringify(value)}`, EXIT_USAGE);
  }
  if (args.from > args.to) throw new CliError(`--from ${args.from} is after --to ${args.to}`, EXIT_USAGE);
  const config = await loadConfig(globals);
  const def = partnerDefinition(config, args.partner);
  return withStore(globals, async (store) => {
    const today = store.clock().toISOString().slice(0, 10);
    if (args.to >= today) throw new CliError(`--to ${args.to} is not a closed day yet (today is ${today} UTC); backfill closed days only`, EXIT_USAGE);
    const loader = await cliLoader(globals, io, store, config.logger, def);
    const progress = (io.errIsTty ?? io.isTty) && !globals.json ? progressLine() : undefined;
    const results = await withExclusiveStreams(store, config.logger, (exclusive) => runPartner(
      { loader, clock: store.clock, logger: config.logger, redact: config.redact, progress: progress?.update, exclusive },
      def, { kind: 'backfill', from: args.from, to: args.to, allowShrink: args.allowShrink === true }, args.stream,
    )).finally(() => progress?.done());
    if (globals.json) io.out(JSON.stringify({ partner: def.partner, kind: 'backfill', from: args.from, to: args.to, streams: results }));
    else printStreamResults(io, results);
    return resultsExitCode(results);
  });
}
