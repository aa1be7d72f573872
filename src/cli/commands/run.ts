import { runPartner } from '../../../jobs/run-partner.js';
import { withExclusiveStreams } from '../../../jobs/exclusive-streams.js';
import { rejectedLine, type StreamRunResult } from '../../../jobs/sync-stream.js';
import { cliLoader } from '../loader.js';
import type { Entity } from '../../types.js';
import { withStore, type GlobalOptions } from '../context.js';
import { loadConfig, partnerDefinition } from '../definitions.js';
import { EXIT_FAILURE, EXIT_OK, type Io } from '../io.js';
import { progressLine } from '../progress.js';
import { formatTable } from '../table.js';

export function printStreamResults(io: Io, results: readonly StreamRunResult[]): void {
  io.out(formatTable(
    ['STREAM', 'STATUS', 'PULLED', 'LOADED', 'REJECTED', 'WAITING', 'STALE', 'RELEASED', 'RETRIES', '429s', 'WATERMARK', 'WINDOW'],
    results.map((r) => [r.stream, r.status === 'succeeded' && r.counts.rejected > 0 ? 'completed, rejects' : r.status, r.counts.pulled, r.counts.loaded, r.counts.rejected, r.counts.waiting, r.counts.stale, r.counts.released, r.counts.retries, r.counts.throttled, r.watermark ?? '-', r.windows]),
  ));
  for (const r of results) if (r.error) io.out(`${r.stream}: ${r.status}: ${r.error}`);
  // A load with rejects is not a success: it says how many and by which rule (`rejects list` shows them).
  for (const r of results) {
    const line = r.status === 'succeeded' ? rejectedLine(r) : undefined;
    if (line !== undefined) io.out(`${r.stream}: ${line}; see partner-sync rejects ${r.partner}`);
  }
}


export const resultsExitCode = (results: readonly StreamRunResult[]): number =>
  results.every((r) => r.status === 'succeeded') ? EXIT_OK : EXIT_FAILURE;

/** `run <partner> [--stream S]`: one incremental sync now. */
export async function runCommand(globals: GlobalOptions, args: { partner: string; stream?: Entity; allowShrink?: boolean }, io: Io): Promise<number> {
  const config = await loadConfig(globals);
  const def = partnerDefinition(config, args.partner);
  return withStore(globals, async (store) => {
    const loader = await cliLoader(globals, io, store, config.logger, def);
    const progress = (io.errIsTty ?? io.isTty) && !globals.json ? progressLine() : undefined;
    const results = await withExclusiveStreams(store, config.logger, (exclusive) => runPartner(
      { loader, clock: store.clock, logger: config.logger, redact: config.redact, progress: progress?.update, exclusive },
      def, { kind: 'run', scheduledFor: store.clock(), allowShrink: args.allowShrink === true }, args.stream,
    )).finally(() => progress?.done());
    if (globals.json) io.out(JSON.stringify({ partner: def.partner, kind: 'run', streams: results }));
    else printStreamResults(io, results);
    return resultsExitCode(results);
  });
}
