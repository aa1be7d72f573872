/**
 * Import: loads a file of spec records (NDJSON or a JSON array) for one partner and entity through
 * the same validate-and-load path as every pull: historical migrations and manual fixes.
 * Each batch of up to IMPORT_BATCH_SIZE records is one transaction; rerunning an import is
 * harmless (upserts, and a reject seen again is the same reject).
 */
import type { Readable } from 'node:stream';
import type { PersonalData } from '../src/spec/personal-data.js';
import { assertReadable, openRecordFile } from '../connectors/file/read-records.js';
import { LoadsInTurn, type Loader, type SettleGroup } from '../src/pipeline/load.js';
import type { BatchResult } from '../src/pipeline/batch.js';
import type { RunCounts } from '../src/store/runs.js';
import { Run } from '../src/pipeline/run.js';
import type { Store } from '../src/store/store.js';
import { batchKey } from '../src/store/rows.js';
import { entityTable } from '../src/store/tables.js';
import { ENTITIES, type Entity, type RawRecord, type SpecRecord, type Variant } from '../src/types.js';

/**
 * Records a batch (one transaction) of an import. A batch has fixed costs (its lock, the partner's
 * rejects and waiting records, the jobs' scope markers of its customers), so larger batches load
 * a month faster up to about this size (bench/README.md, the whole pipeline). PARTNER_SYNC_IMPORT_BATCH changes it.
 */
export const IMPORT_BATCH_SIZE = 5000;

/** The batch size in force: PARTNER_SYNC_IMPORT_BATCH when a positive whole number, else IMPORT_BATCH_SIZE. */
export function importBatchSize(env: NodeJS.ProcessEnv = process.env): number {
  const given = Number(env.PARTNER_SYNC_IMPORT_BATCH);
  return Number.isInteger(given) && given > 0 ? given : IMPORT_BATCH_SIZE;
}


export interface ImportRequest {
  partner: string;
  variant: Variant;
  entity: Entity;
  file: string;
  stdin: Readable;
  /** The partner's policy for personal fields (its definition's `personal_data`); none keeps them. */
  personalData?: PersonalData;
}

export interface ImportSummary {
  runId: string;
  entity: Entity;
  file: string;
  counts: RunCounts;
  rejects: BatchResult['rejects'];
  durationMs: number;
  /** Valid records with distinct keys: a key repeated in the file is loaded once (its last version). */
  distinct: number;
}

/** `together`: the group of the Loader.settleTogether the import runs in; its settle waits for the end of that work. */
export async function importFile(deps: { store: Store; loader: Loader; together?: SettleGroup }, request: ImportRequest): Promise<ImportSummary> {
  const { loader } = deps;
  const file = await openRecordFile(request.file, request.stdin);
  // An import is a bulk run: fraud rules, commissions and the report facts evaluate over groups, not per batch.
  const run = await Run.start(loader, { partner: request.partner, stream: request.entity, kind: 'import' }, 'group', deps.together);
  const runId = run.id;
  const rejects: BatchResult['rejects'] = [];
  const distinct = distinctKeys(request.variant, request.entity);

  // The next batch is read, parsed and validated while the one before it loads (LoadsInTurn); each
  // is still its own transaction, in file order.
  const batches = new LoadsInTurn(loader, (result, input) => {
    run.tally(result);
    rejects.push(...result.rejects);
    distinct.add(input.records, result.rejects);
  });
  const add = (records: RawRecord[]): Promise<void> => batches.add({ partner: request.partner, variant: request.variant, entity: request.entity, runId, records, personalData: request.personalData });

  const size = importBatchSize();
  try {
    // The batches in the run's span.
    await run.within(async () => {
      let batch: RawRecord[] = [];
      for await (const record of file.records) {
        batch.push(record);
        if (batch.length >= size) {
          await add(batch);
          batch = [];
        }
      }
      if (batch.length > 0) await add(batch);
      await batches.done();
    });
    await run.settle();
  } catch (error) {
    // A batch still loading ends before the run is settled and closed (a read error while it loads).
    await batches.stop();
    // What loaded stays loaded: it is evaluated now, or, if that fails too, by the next loading command.
    await run.settle().catch(() => undefined);
    // The error to report is the run's own: a store that failed under it (a full disk) may fail this
    // close too, and the next run of the stream then closes the run as abandoned (src/store/runs.ts).
    await run.finish('failed', { error: (error as Error).message, cause: error }).catch(() => undefined);
    throw error;
  }
  const durationMs = run.durationMs;
  await run.finish('succeeded');
  return { runId, entity: request.entity, file: file.name, counts: run.counts, rejects, durationMs, distinct: distinct.size() };
}

export interface ImportFilesRequest {
  partner: string;
  variant: Variant;
  /** At most one file an entity; `-` (stdin) at most once. */
  files: readonly { entity: Entity; file: string }[];
  stdin: Readable;
  personalData?: PersonalData;
  /** Told of each file's summary as its import ends, before the jobs are evaluated at the end. */
  imported?: (summary: ImportSummary) => void;
}

/**
 * Imports a partner's files of several entities as one bulk load: customers first, then
 * transactions, then activity (whatever order they are given in, so that transactions find their
 * customers), each its own import run, and the after-load jobs settled once, at the end, over all
 * of them (Loader.settleTogether), as `run` and `backfill` settle a partner's streams. Every file
 * is checked readable before any loads. A file that fails stops the import there: what loaded
 * stays loaded and is evaluated, and the error names the file.
 */
export async function importFiles(deps: { store: Store; loader: Loader }, request: ImportFilesRequest): Promise<ImportSummary[]> {
  const ordered = ENTITIES.flatMap((entity) => request.files.filter((f) => f.entity === entity));
  for (const f of ordered) await assertReadable(f.file);
  return deps.loader.settleTogether(async (together) => {
    const summaries: ImportSummary[] = [];
    for (const f of ordered) {
      const summary = await importFile({ ...deps, together }, { partner: request.partner, variant: request.variant, entity: f.entity, file: f.file, stdin: request.stdin, personalData: request.personalData });
      summaries.push(summary);
      request.imported?.(summary);
    }
    return summaries;
  });
}

/**
 * Counts the distinct record keys among a file's valid records, so the summary can say how many
 * records a file really held when it repeats some (the loader keeps the last version of a key).
 */
function distinctKeys(variant: Variant, entity: Entity): { add(batch: readonly RawRecord[], rejects: BatchResult['rejects']): void; size(): number } {
  const table = entityTable(variant, entity);
  const keys = new Set<string>();
  return {
    add(batch, rejected) {
      const bad = new Set(rejected.map((r) => r.position));
      for (const r of batch) if (!bad.has(r.position)) keys.add(batchKey(table, r.value as SpecRecord));
    },
    size: () => keys.size,
  };
}
