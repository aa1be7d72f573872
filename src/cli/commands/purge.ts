/**
 * `partner-sync purge [--dry-run] [--batch N] [--max-seconds S]`: removes what the retention of
 * `<config>/retention.yaml` (src/privacy/retention.ts) no longer keeps, in transactions of at most
 * N rows, for at most S seconds (exit 0 either way; `more` says whether rows are still due).
 */
import { join } from 'node:path';
import { loadRetention, purge } from '../../privacy/retention.js';
import { withStore, type GlobalOptions } from '../context.js';
import { CliError, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';
import { formatTable } from '../table.js';

export async function purgeCommand(globals: GlobalOptions, args: { dryRun?: boolean; batch?: number; maxSeconds?: number }, io: Io): Promise<number> {
  const { retention, errors } = await loadRetention(join(globals.config, 'retention.yaml'));
  if (!retention) throw new CliError(errors.join('\n'), EXIT_USAGE);
  return withStore(globals, async (store) => {
    const result = await purge(store, retention, { dryRun: args.dryRun, batch: args.batch, budgetMs: args.maxSeconds === undefined ? undefined : args.maxSeconds * 1000 });
    if (globals.json) {
      io.out(JSON.stringify({ dry_run: args.dryRun === true, retention, results: result.results, more: result.more, duration_ms: Math.round(result.durationMs) }));
      return EXIT_OK;
    }
    io.out(formatTable(['KIND', 'KEPT DAYS', 'OLDER THAN', args.dryRun ? 'WOULD GO' : 'DUE', 'PURGED'],
      result.results.map((r) => [r.kind, retention[r.kind], r.before.slice(0, 10), r.due, args.dryRun ? '-' : r.purged])));
    io.out(args.dryRun ? 'dry run: nothing removed' : result.more ? 'the time budget ran out with rows still due: the next purge goes on' : `purged in ${(result.durationMs / 1000).toFixed(2)} s`);
    return EXIT_OK;
  });
}
