/**
 * What the PostgreSQL benchmarks share: COPY of generated lines into a table, the schemas they
 * create (dropped at the end unless BENCH_KEEP is set), the median, and the per-batch cost table
 * of an after-load job on a small store beside a big one (the commission and fraud benchmarks).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { openStore, type Store } from '../../src/store/store.js';

/** COPY `sql` (… FROM STDIN) from generated lines, sent in chunks of about 1 MB. */
export async function copyLines(client: pg.Client, sql: string, lines: () => Generator<string>): Promise<void> {
  function* chunks(): Generator<string> {
    let buffer = '';
    for (const line of lines()) {
      buffer += line;
      if (buffer.length > 1 << 20) {
        yield buffer;
        buffer = '';
      }
    }
    if (buffer) yield buffer;
  }
  await pipeline(Readable.from(chunks()), client.query(copyFrom(sql)));
}

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** Milliseconds of the job alone and of the load with the job, per round of one batch kind. */
export interface Timing {
  job: number[];
  load: number[];
}

/** One line per batch kind: the job's median on the small and the big store, their ratio, and the load with the job. */
export function printCostTable(small: number, big: number, a: Map<string, Timing> | undefined, b: Map<string, Timing> | undefined): void {
  const size = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1000}k`);
  console.log(`${'batch of 1000'.padEnd(32)} ${`job @${size(small)}`.padStart(10)} ${`job @${size(big)}`.padStart(10)} ${'ratio'.padStart(6)}   ${'load+job @small'.padStart(15)} ${'load+job @big'.padStart(14)}`);
  for (const [name, t] of a ?? new Map<string, Timing>()) {
    const u = b?.get(name) as Timing;
    const js = median(t.job);
    const jb = median(u.job);
    console.log(`${name.padEnd(32)} ${`${js.toFixed(1)} ms`.padStart(10)} ${`${jb.toFixed(1)} ms`.padStart(10)} ${(jb / js).toFixed(2).padStart(6)}   ${`${median(t.load).toFixed(1)} ms`.padStart(15)} ${`${median(u.load).toFixed(1)} ms`.padStart(14)}`);
  }
}

/** Closes the stores and drops the schemas a benchmark created; BENCH_KEEP=1 keeps them for a look at query plans (drop them by hand afterwards). */
export async function dropBenchSchemas(pgUrl: string, created: readonly { schema: string; store?: Store }[]): Promise<void> {
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  for (const c of created) {
    await c.store?.close();
    if (process.env.BENCH_KEEP) console.log(`kept schema ${c.schema}`);
    else await admin.query(`DROP SCHEMA IF EXISTS ${c.schema} CASCADE`);
  }
  await admin.end();
}

/**
 * A fresh schema (dropped first if a killed run left it) and a store opened in it, registered in
 * `created` for dropBenchSchemas. Returns the store and the URL that reaches the schema.
 */
export async function openBenchStore(pgUrl: string, schema: string, created: { schema: string; store?: Store }[]): Promise<{ store: Store; url: string }> {
  const entry: { schema: string; store?: Store } = { schema };
  created.push(entry);
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  const url = `${pgUrl}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  entry.store = await openStore({ url });
  return { store: entry.store, url };
}
