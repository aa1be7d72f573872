/**
 * How far V8 lets the heap grow past what is live. After a full collection V8 sets the next one's
 * trigger at the live size times a factor it picks (up to 4). A bulk load promotes a steady stream
 * of short-lived batch objects (pages, records, rows in flight across a write's round trip) to the
 * old generation, so with a large factor the heap fills with dead batches between full collections.
 * With the COPY buffers reused (../store/copy-text.ts) and a factor of 2, the replica load's peak
 * memory stays flat as its row count grows, without a loss of speed measurable on a shared machine;
 * a factor of 1.5 was slower (more full collections), a larger young generation was worse
 * (bench/README.md, Replica load).
 *
 * The load path applies it once per process (`Loader`), through V8's `--heap-growing-percent`.
 * PARTNER_SYNC_HEAP_GROWING_PERCENT changes the percent (0: leave V8's own choice); a
 * --heap-growing-percent given to node itself (command line or NODE_OPTIONS) wins.
 */
import { setFlagsFromString } from 'node:v8';

/** The heap may grow to twice the live data between full collections. */
export const HEAP_GROWING_PERCENT = 100;

let applied = false;

/** The percent applied, or undefined when V8's own choice (or node's flag) stands. */
export function limitHeapGrowth(env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv): number | undefined {
  if (applied) return undefined;
  applied = true;
  const given = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)].some((a) => /^--heap[-_]growing[-_]percent\b/.test(a));
  if (given) return undefined;
  const raw = env.PARTNER_SYNC_HEAP_GROWING_PERCENT;
  const percent = raw === undefined || raw.trim() === '' ? HEAP_GROWING_PERCENT : Number(raw);
  if (!Number.isInteger(percent) || percent <= 0) return undefined;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  return percent;
}
