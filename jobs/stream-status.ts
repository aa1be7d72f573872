/**
 * The rows of `status` and of the console's Partners page: per partner and stream, the last run,
 * watermark, freshness against its target, rejects and waiting records, whether pulls, pushes or
 * both feed it, and why a stream of a definition that cannot load is stopped. One function, so the
 * CLI and the console show the same rows; here, below both faces.
 */
import { invalidStreams } from '../src/config/invalid-streams.js';
import type { PartnerDefinition } from '../src/config/definition.js';
import type { InvalidDefinition } from '../src/config/load-definitions.js';
import { streamFreshness } from '../src/push/freshness.js';
import { pushStreams } from '../src/push/store.js';
import { streamSnapshots, type StreamSnapshot } from '../src/store/status.js';
import type { Store } from '../src/store/store.js';
import { fromStoreTimestamp } from '../src/store/values.js';
import { ENTITIES, type Entity } from '../src/types.js';

export type StatusRow = Awaited<ReturnType<typeof statusRows>>[number];

/**
 * Per partner and stream: last run, watermark, freshness against its target (ok/late/breach),
 * open rejects, waiting; the rows of `status` and of the web console's Partners page.
 */
export async function statusRows(store: Store, definitions: readonly PartnerDefinition[], partner?: string, invalid: readonly InvalidDefinition[] = []) {
  const now = store.clock();
  const snapshots = await streamSnapshots(store.knex);
  // Every configured stream shows, loaded or not; streams known only to the store (imports) too.
  for (const def of definitions) {
    for (const entity of ENTITIES) {
      if (def.streams[entity] && !snapshots.has(`${def.partner}/${entity}`)) {
        snapshots.set(`${def.partner}/${entity}`, { partner: def.partner, stream: entity, openRejects: 0, waiting: 0 });
      }
    }
  }
  // Streams fed by pushes (the HTTP API), including partners that only push (no definition).
  const pushed = await pushStreams(store.knex);
  for (const p of pushed.values()) {
    if (!snapshots.has(`${p.partner}/${p.entity}`)) snapshots.set(`${p.partner}/${p.entity}`, { partner: p.partner, stream: p.entity, openRejects: 0, waiting: 0 });
  }
  // The streams of a definition file that cannot load are not pulled: stopped, saying why (as `check` does).
  const broken = invalidStreams(invalid, [...snapshots.keys(), ...pushed.keys()]);
  for (const key of broken.keys()) {
    const cut = key.lastIndexOf('/');
    if (!snapshots.has(key)) snapshots.set(key, { partner: key.slice(0, cut), stream: key.slice(cut + 1), openRejects: 0, waiting: 0 });
  }
  const errorsOf = new Map(invalid.map((i) => [i.partner, i.errors]));
  const modes = new Map<string, 'cursor' | 'daily'>(definitions.flatMap((d) => ENTITIES.flatMap((e) => {
    const stream = d.streams[e];
    return stream ? [[`${d.partner}/${e}`, stream.incremental.mode] as [string, 'cursor' | 'daily']] : [];
  })));
  const configured = new Set(modes.keys());
  const rows = [...snapshots.values()]
    .filter((s) => !partner || s.partner === partner)
    .sort((a, b) => a.partner.localeCompare(b.partner) || ENTITIES.indexOf(a.stream as Entity) - ENTITIES.indexOf(b.stream as Entity))
    .map((s: StreamSnapshot) => {
      const key = `${s.partner}/${s.stream}`;
      const push = pushed.get(key);
      const halted = broken.get(key);
      const fed = streamFreshness(s.stream as Entity, {
        ...s.state,
        ...(halted !== undefined ? { halted: { detail: halted } } : {}),
        ...(push ? { pushed: { last_received_at: push.lastReceivedAt, ...(push.lastDay ? { last_day: push.lastDay } : {}) } } : {}),
      }, now, configured.has(key) || halted !== undefined, modes.get(key));
      return {
      partner: s.partner,
      stream: s.stream,
      /** pull (a connector definition), push (the HTTP API), both, or null (imports only). */
      fed_by: fed?.fedBy ?? null,
      /** When a push last delivered records of this stream, and how many pushes delivered in all. */
      last_pushed_at: push?.lastReceivedAt ?? null,
      pushed_records: push?.records ?? 0,
      last_run: s.lastRun ? { ...s.lastRun, started_at: fromStoreTimestamp(s.lastRun.started_at), finished_at: fromStoreTimestamp(s.lastRun.finished_at) } : null,
      watermark: s.state?.watermark ?? s.state?.last_day ?? null,
      max_cursor: s.state?.max_cursor ?? null,
      // Freshness targets apply to pulled and pushed streams; a partner known only from imports has none.
      freshness: fed?.freshness ?? null,
      rejects_open: s.openRejects,
      waiting: s.waiting,
      /** The errors of the partner's definition file when it cannot load (file, path, line, reason); [] otherwise. */
      definition_errors: halted !== undefined ? (errorsOf.get(s.partner) ?? []) : [],
    };
    });
  return rows;
}
