import { freshness } from '../../freshness.js';
import { streamSnapshots, type StreamSnapshot } from '../../store/status.js';
import { fromStoreTimestamp } from '../../store/values.js';
import { ENTITIES, type Entity } from '../../types.js';
import { withStore, type GlobalOptions } from '../context.js';
import { formatDefinitionError, loadConfig } from '../definitions.js';
import { EXIT_OK, type Io } from '../io.js';
import { formatTable } from '../table.js';

/** `status`: per partner and stream, last run, watermark, lag against the freshness target, rejects, waiting. */
export async function statusCommand(globals: GlobalOptions, args: { partner?: string }, io: Io): Promise<number> {
  const config = await loadConfig(globals);
  return withStore(globals, async (store) => {
    const now = store.clock();
    const snapshots = await streamSnapshots(store.knex);
    // Every configured stream shows, loaded or not; streams known only to the store (imports) too.
    for (const def of config.definitions) {
      for (const entity of ENTITIES) {
        if (def.streams[entity] && !snapshots.has(`${def.partner}/${entity}`)) {
          snapshots.set(`${def.partner}/${entity}`, { partner: def.partner, stream: entity, openRejects: 0, waiting: 0 });
        }
      }
    }
    const configured = new Set(config.definitions.flatMap((d) => ENTITIES.filter((e) => d.streams[e]).map((e) => `${d.partner}/${e}`)));
    const rows = [...snapshots.values()]
      .filter((s) => !args.partner || s.partner === args.partner)
      .sort((a, b) => a.partner.localeCompare(b.partner) || ENTITIES.indexOf(a.stream as Entity) - ENTITIES.indexOf(b.stream as Entity))
      .map((s: StreamSnapshot) => ({
        partner: s.partner,
        stream: s.stream,
        last_run: s.lastRun ? { ...s.lastRun, started_at: fromStoreTimestamp(s.lastRun.started_at), finished_at: fromStoreTimestamp(s.lastRun.finished_at) } : null,
        watermark: s.state?.watermark ?? s.state?.last_day ?? null,
        max_cursor: s.state?.max_cursor ?? null,
        // Freshness targets apply to pulled streams; a partner known only from imports has none.
        freshness: configured.has(`${s.partner}/${s.stream}`) ? freshness(s.stream as Entity, s.state, now) : null,
        rejects_open: s.openRejects,
        waiting: s.waiting,
      }));
    if (globals.json) {
      io.out(JSON.stringify({ now: now.toISOString(), streams: rows, definition_errors: config.errors }));
      return EXIT_OK;
    }
    if (rows.length === 0) io.out('no partners yet: add a definition under config/partners/, or import a file');
    else {
      io.out(formatTable(
        ['PARTNER', 'STREAM', 'LAST RUN', 'RESULT', 'WATERMARK', 'FRESHNESS', 'REJECTS', 'WAITING'],
        rows.map((r) => [
          r.partner, r.stream,
          r.last_run ? `${r.last_run.started_at?.slice(0, 19).replace('T', ' ')} ${r.last_run.kind}` : 'never',
          r.last_run?.status ?? '-',
          r.watermark ?? '-',
          r.freshness ? `${r.freshness.state}: ${r.freshness.detail}` : 'not pulled (no definition)',
          r.rejects_open, r.waiting,
        ]),
      ));
    }
    for (const e of config.errors) io.err(`warning: ${formatDefinitionError(e)}`);
    return EXIT_OK;
  });
}
