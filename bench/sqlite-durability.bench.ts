/**
 * What synchronous=FULL costs the SQLite store: the same load (customers, then their
 * transactions, one transaction with a checkpoint per batch, as a pull commits its pages) into a
 * fresh file store opened as partner-sync opens it (FULL), beside a fresh store switched back to
 * synchronous=NORMAL, measured in the same run, in alternating order.
 *
 *   node dist/bench/sqlite-durability.bench.js [records] [batch] [rounds]
 *   (default 20,000 transactions of 2,000 customers, batches of 100 and of 1000, 3 rounds)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Loader } from '../src/pipeline/load.js';
import { createSpecValidator } from '../src/spec/validator.js';
import { openStore } from '../src/store/store.js';
import type { RawRecord } from '../src/types.js';

const RECORDS = Number(process.argv[2] ?? 20_000);
const BATCHES = process.argv[3] === undefined ? [100, 1000] : [Number(process.argv[3])];
const ROUNDS = Number(process.argv[4] ?? 3);

type Mode = 'FULL' | 'NORMAL';

async function loadOnce(mode: Mode, batch: number): Promise<{ ms: number; commits: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'partner-sync-bench-'));
  const store = await openStore({ url: `sqlite:${join(dir, 'store.sqlite')}` });
  try {
    // The pool holds one connection: the pragma applies to every transaction below.
    if (mode === 'NORMAL') await store.knex.raw('PRAGMA synchronous = NORMAL');
    const [{ synchronous }] = (await store.knex.raw('PRAGMA synchronous')) as [{ synchronous: number }];
    if (synchronous !== (mode === 'FULL' ? 2 : 1)) throw new Error(`store is at synchronous=${synchronous}, not ${mode}`);
    const loader = new Loader({ store, validator: createSpecValidator() });
    const customers = Math.ceil(RECORDS / 10);
    let commits = 0;
    const start = performance.now();
    const run = async (count: number, value: (i: number) => Record<string, unknown>, entity: 'customers' | 'transactions'): Promise<void> => {
      for (let offset = 0; offset < count; offset += batch) {
        const records: RawRecord[] = [];
        for (let i = offset; i < Math.min(count, offset + batch); i++) records.push({ position: i + 1, value: value(i) });
        await loader.load({ partner: 'bench', variant: 'igaming', entity, runId: 'bench', records, checkpoint: { stream: entity, state: { offset } } });
        commits++;
      }
    };
    await run(customers, (i) => ({ customer_id: `c${i}`, signup_date: '2026-10-01T00:00:00Z', affiliate_id: 'a1', last_modified_date: '2026-10-01T00:00:00Z' }), 'customers');
    await run(RECORDS, (i) => ({
      transaction_id: `t${i}`, customer_id: `c${i % customers}`, transaction_type: 'deposit', amount_currency: (i % 997) + 0.5,
      currency: 'EUR', transaction_date: '2026-10-02T10:00:00Z', status: 'approved',
    }), 'transactions');
    return { ms: performance.now() - start, commits };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows = RECORDS + Math.ceil(RECORDS / 10);
  for (const batch of BATCHES) {
    const times: Record<Mode, number[]> = { FULL: [], NORMAL: [] };
    let commits = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order: Mode[] = round % 2 === 0 ? ['NORMAL', 'FULL'] : ['FULL', 'NORMAL'];
      for (const mode of order) {
        const result = await loadOnce(mode, batch);
        times[mode].push(result.ms);
        commits = result.commits;
      }
    }
    const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? 0;
    const line = (mode: Mode): string => {
      const ms = median(times[mode]);
      return `${mode.padEnd(6)} ${Math.round(ms)} ms  ${Math.round(rows / (ms / 1000))} rows/s  ${(ms / commits).toFixed(2)} ms/commit`;
    };
    console.log(`${rows} rows in ${commits} commits of ${batch} (median of ${ROUNDS}):`);
    console.log(`  ${line('NORMAL')}`);
    console.log(`  ${line('FULL')}   (${(median(times.FULL) / median(times.NORMAL)).toFixed(2)}x the time of NORMAL)`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
