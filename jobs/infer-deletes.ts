/**
 * Deletes inferred from full key scans (docs/loading.md, Deletes): a reconcile finds customers
 * and transactions the store holds and the source no longer has (`missing_at_source`). One scan
 * proves nothing (a partner outage answering empty pages, a page fault, a replica lagging), so a
 * key becomes a delete only when two consecutive scans of its day both find it missing: the first
 * leaves it a candidate (delete_candidates), the second deletes it through the one load path
 * (Loader.remove, learned via `reconcile`), judged by the partner's mass-delete guard. A scan
 * that could not read the source whole (records it could not map whose keys do not read, a partner total that disagrees
 * with what its pages gave, records its own SQL finds that the reads missed) infers nothing and
 * leaves the candidates as they were. Keys of a discarded hold of inferred deletes are not
 * inferred again.
 */
import type { PartnerDefinition } from '../src/config/definition.js';
import type { Reconciliation } from '../src/onboarding/reconcile.js';
import type { Loader } from '../src/pipeline/load.js';
import { Run } from '../src/pipeline/run.js';
import { candidatesOf, listHolds, replaceCandidates, type DeleteCandidate } from '../src/store/delete-holds.js';

export interface InferredStream {
  entity: 'customers' | 'transactions';
  /** Keys this scan found missing at the source. */
  missing: number;
  /** Of those, seen missing for the first time: candidates until the next scan. */
  firstSeen: number;
  /** Seen missing by the previous scan too, and deleted now. */
  deleted: number;
  /** Seen missing twice but held by the mass-delete guard (partner-sync deletes). */
  held: number;
  holdId?: number;
  reason?: string;
  runId?: string;
}

export interface InferredDeletes {
  partner: string;
  from: string;
  to: string;
  /** Why the scan inferred nothing (it did not read the source whole). */
  skipped?: string;
  streams: InferredStream[];
}

/** Why a scan cannot be trusted to say what the source no longer has, if it cannot. */
export function untrustedScan(scan: Reconciliation): string | undefined {
  // A record the mapping could not read is still at the source: when its key reads, it is kept out of the deletes (inferDeletes); when not, any missing key may be it.
  const keyless = scan.unmappable.filter((u) => u.key === undefined);
  if (keyless.length > 0) return `${keyless.length} source record(s) could not be read or mapped, their keys unknown`;
  const total = scan.totals.find((t) => !t.ok);
  if (total) return `the partner's total for ${total.entity} ${total.window} (${total.partner_total}) is not the ${total.distinct} records its pages gave`;
  const unread = scan.days.find((d) => (d.not_read?.length ?? 0) > 0);
  if (unread) return `the source's SQL finds ${unread.entity} of ${unread.day} that the definition's reads did not return`;
  // A source that gave nothing at all for days the store holds records of is down, not empty.
  for (const entity of new Set(scan.days.map((d) => d.entity))) {
    const days = scan.days.filter((d) => d.entity === entity);
    const stored = days.reduce((n, d) => n + d.store.count, 0);
    if (stored > 0 && days.every((d) => d.source.count === 0)) return `the source gave no ${entity} for ${scan.from}..${scan.to}, where the store holds ${stored} (an outage answering empty pages?)`;
  }
  return undefined;
}

/** Turns what two consecutive scans agree the source no longer has into deletes. */
export async function inferDeletes(loader: Loader, def: PartnerDefinition, scan: Reconciliation): Promise<InferredDeletes> {
  const out: InferredDeletes = { partner: def.partner, from: scan.from, to: scan.to, streams: [] };
  const skipped = untrustedScan(scan);
  if (skipped) return { ...out, skipped };
  // Customers first: their transactions go with them, naming the customer's tombstone.
  for (const entity of ['customers', 'transactions'] as const) {
    const days = scan.days.filter((d) => d.entity === entity);
    if (days.length === 0) continue;
    const missing = new Map<string, string>();
    for (const d of days) for (const key of d.missing_at_source) missing.set(key, d.day);
    // At the source all the same, if not readable there: not deleted.
    for (const u of scan.unmappable) if (u.entity === entity && u.key !== undefined) missing.delete(u.key);
    const discarded = new Set((await listHolds(loader.store.knex, { partner: def.partner, state: 'discarded' })).filter((h) => h.entity === entity && h.learnedVia === 'reconcile').flatMap((h) => h.ids));
    for (const id of discarded) missing.delete(id);
    const stream: InferredStream = { entity, missing: missing.size, firstSeen: 0, deleted: 0, held: 0 };
    out.streams.push(stream);
    const run = missing.size > 0 ? await Run.start(loader, { partner: def.partner, stream: entity, kind: 'deletes', windowFrom: scan.from, windowTo: scan.to }, 'group') : undefined;
    try {
      await loader.transaction(async (tx) => {
        const before = await tx.run((trx) => candidatesOf(trx, def.partner, entity, scan.from, scan.to));
        const agreed = [...missing.keys()].filter((id) => before.has(id));
        const removed = agreed.length > 0 && run
          ? await tx.remove({ partner: def.partner, variant: def.variant, entity, ids: agreed, learnedVia: 'reconcile', runId: run.id, ...(def.delete_guard ? { guard: def.delete_guard } : {}) })
          : undefined;
        const now = loader.store.now();
        const gone = new Set(removed?.held ? [] : agreed);
        // What stays a candidate: first seen now, or agreed and held (the hold decides them).
        const next: DeleteCandidate[] = [...missing].filter(([id]) => !gone.has(id)).map(([id, day]) => ({ id, day, firstSeenAt: before.get(id)?.firstSeenAt ?? now, scans: (before.get(id)?.scans ?? 0) + 1 }));
        await tx.run((trx) => replaceCandidates(trx, def.partner, entity, scan.from, scan.to, next));
        stream.firstSeen = missing.size - agreed.length;
        stream.deleted = removed?.deleted ?? 0;
        if (removed?.held) Object.assign(stream, { held: removed.held.held, holdId: removed.held.holdId, reason: removed.held.reason });
      });
      if (run) {
        run.counts.deleted = stream.deleted;
        if (stream.held > 0) run.counts.deletes_held = stream.held;
        stream.runId = run.id;
        await run.settle();
        await run.finish('succeeded');
      }
    } catch (error) {
      await run?.settle().catch(() => undefined);
      await run?.finish('failed', { error: (error as Error).message });
      throw error;
    }
  }
  return out;
}

/** The inference as lines, after the reconcile's own. */
export function inferredLines(r: InferredDeletes): string[] {
  if (r.skipped) return [`deletes: none inferred, the scan did not read the source whole: ${r.skipped}`];
  return r.streams.map((s) => {
    const parts = [`${s.missing} missing at the source`];
    if (s.firstSeen > 0) parts.push(`${s.firstSeen} seen missing for the first time (deleted if the next scan agrees)`);
    if (s.deleted > 0) parts.push(`${s.deleted} deleted (the previous scan agreed)`);
    if (s.held > 0) parts.push(`${s.held} held by the mass-delete guard, hold ${s.holdId} (${s.reason}): partner-sync deletes apply ${s.holdId}`);
    return `deletes ${s.entity}: ${parts.join('; ')}`;
  });
}
