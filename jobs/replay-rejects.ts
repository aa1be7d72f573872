/**
 * Replay: quarantined records go through the pipeline again after a fix (a corrected mapping in
 * the definition, a schema agreement with the partner). Pulled records are re-mapped from the
 * partner's record kept in the reject; imported ones are re-validated as they are. Those that
 * pass are closed in the same transaction as their load: `replayed`, or `superseded` when the
 * store already holds a newer version of their record (the old version is not applied); the
 * others stay open with their current reasons.
 */
import type { PartnerDefinition } from '../src/config/definition.js';
import type { Loader } from '../src/pipeline/load.js';
import { createMapper } from '../src/pipeline/map-record.js';
import { listRejects, type StoredReject } from '../src/store/rejects.js';
import { markResolved } from '../src/store/reject-lifecycle.js';
import type { RunCounts } from '../src/store/runs.js';
import { Run } from '../src/pipeline/run.js';
import { cut } from '../src/store/dialects.js';
import type { Entity, RawRecord, Variant } from '../src/types.js';

const REPLAY_BATCH = 500;
const NOT_REPLAYABLE = "; found in the record's text, which its stored payload cannot show: not replayable, ask the partner to send the record again";

export interface ReplayResult {
  entity: Entity;
  runId: string;
  counts: RunCounts;
  replayed: number;
  /** Valid, but older than the version of their record already stored: closed, not applied. */
  superseded: number;
  stillRejected: number;
}

function toRaw(reject: StoredReject, position: number, def: PartnerDefinition | undefined): RawRecord {
  let payload: unknown;
  try {
    payload = JSON.parse(reject.payload);
  } catch (error) {
    return { position, value: reject.payload, parseError: (error as Error).message };
  }
  // The version the reject was seen with (a pulled record's cursor value) goes with it again.
  const version = reject.version === null ? {} : { version: reject.version };
  // What the record's text held and its stored value cannot (a field given twice keeps its last
  // value, a number its double, a byte that is not UTF-8 its stand-in): replaying the payload would
  // load what the partner did not send, so such a reject stays open with its reasons.
  const inText = reject.errors.filter((e) => e.inText === true);
  if (inText.length > 0) {
    const errors = inText.map((e) => ({ ...e, message: e.message.endsWith(NOT_REPLAYABLE) ? e.message : `${e.message}${NOT_REPLAYABLE}` }));
    return { position, value: payload, ...(reject.origin === 'source' ? { source: payload } : {}), mappingErrors: errors, ...version };
  }
  if (reject.origin !== 'source') return { position, value: payload, ...version };
  const stream = def?.streams[reject.entity];
  if (!def || !stream) {
    return { position, value: payload, source: payload, mappingErrors: [{ field: '(record)', rule: 'mapping', message: `no ${reject.entity} stream in the definition of ${reject.partner_id} to map this record with` }] };
  }
  const mapped = createMapper(def.variant, reject.entity, stream.mapping, def.affiliates)(payload);
  return 'error' in mapped ? { position, value: payload, source: payload, mappingErrors: [mapped.error], ...version } : { position, value: mapped.record, source: payload, ...version };
}

export async function replayRejects(loader: Loader, partner: string, def: PartnerDefinition | undefined, only?: Entity): Promise<ReplayResult[]> {
  const store = loader.store;
  const open = await listRejects(store.knex, { partner, status: 'open', entity: only });
  const results: ReplayResult[] = [];
  const entities = [...new Set(open.map((r) => r.entity))].sort((a, b) => ['customers', 'transactions', 'activity'].indexOf(a) - ['customers', 'transactions', 'activity'].indexOf(b));
  for (const entity of entities) {
    const rejects = open.filter((r) => r.entity === entity);
    const run = await Run.start(loader, { partner, stream: entity, kind: 'replay' }, 'at-commit');
    const runId = run.id;
    let replayed = 0;
    let superseded = 0;
    try {
      // Each chunk's batch in the run's span.
      for (const chunk of cut(rejects, REPLAY_BATCH)) {
        const records = chunk.map((r, k) => toRaw(r, k + 1, def));
        await run.within(() => loader.transaction(async (tx) => {
          const result = await tx.load({ partner, variant: chunk[0]?.variant as Variant, entity, runId, records, personalData: def?.personal_data });
          const failed = new Set(result.rejects.map((r) => r.position));
          const older = new Set(result.stalePositions);
          const passed = chunk.filter((_, k) => !failed.has(k + 1) && !older.has(k + 1)).map((r) => r.id);
          const stale = chunk.filter((_, k) => older.has(k + 1)).map((r) => r.id);
          await markResolved(tx.trx, passed, 'replayed', runId, store.now());
          await markResolved(tx.trx, stale, 'superseded', runId, store.now());
          replayed += passed.length;
          superseded += stale.length;
          run.tally(result);
        }));
      }
    } catch (error) {
      // The chunks committed stay replayed; the run is closed as failed (not left running for the next run to find abandoned).
      await run.finish('failed', { error: (error as Error).message, cause: error }).catch(() => undefined);
      throw error;
    }
    await run.finish('succeeded');
    results.push({ entity, runId, counts: run.counts, replayed, superseded, stillRejected: rejects.length - replayed - superseded });
  }
  return results;
}
