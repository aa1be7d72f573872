/** The result of a run or backfill whose batches rejected records: partial, by rule, never "succeeded". */
import assert from 'node:assert/strict';
import type { StreamRunResult } from '../../jobs/sync-stream.js';
import { printStreamResults } from '../../src/cli/commands/run.js';

const counts = { pulled: 10, valid: 7, rejected: 3, loaded: 7, waiting: 0, stale: 0, released: 0, retries: 0, throttled: 0 };

describe('the result lines of run and backfill', () => {
  it('a stream that loaded with rejects says "completed with N rejected" by field and rule, not "succeeded"', () => {
    const out: string[] = [];
    const result = { partner: 'p1', stream: 'transactions', runId: 'r1', kind: 'backfill', status: 'succeeded', windows: '2026-10-01..2026-10-02', counts, durationMs: 5, rejectedBy: { 'transaction_type enum': 2, 'currency pattern': 1 } } as unknown as StreamRunResult;
    printStreamResults({ out: (line: string) => out.push(line), err: () => undefined } as never, [result]);
    const text = out.join('\n');
    assert.match(text, /^transactions\s+completed, rejects\s+10\s+7\s+3\s/m);
    assert.match(text, /^transactions: completed with 3 rejected \(transaction_type enum: 2, currency pattern: 1\); see partner-sync rejects p1$/m);
    assert.doesNotMatch(text, /succeeded/);
  });

  it('a stream without rejects stays "succeeded" with no rejects line', () => {
    const out: string[] = [];
    const result = { partner: 'p1', stream: 'customers', runId: 'r1', kind: 'run', status: 'succeeded', windows: '-', counts: { ...counts, rejected: 0, valid: 10, loaded: 10 }, durationMs: 5 } as unknown as StreamRunResult;
    printStreamResults({ out: (line: string) => out.push(line), err: () => undefined } as never, [result]);
    assert.match(out.join('\n'), /^customers\s+succeeded\s/m);
    assert.doesNotMatch(out.join('\n'), /rejected/);
  });
});
