import assert from 'node:assert/strict';
import { CopyTextWriter, recycleCopyBuffer, writeCopyRows } from '../../src/store/copy-text.js';
import { entityTable } from '../../src/store/tables.js';

const text = (...values: string[]): string => {
  const writer = new CopyTextWriter(4);
  for (const value of values) writer.text(value);
  return writer.bytes().toString('utf8');
};

describe('COPY text', () => {
  it('escapes backslash, tab, newline and carriage return, and keeps everything else as written', () => {
    assert.equal(text('a\\b\tc\nd\re'), 'a\\\\b\\tc\\nd\\re');
    assert.equal(text('plain-ascii 123.45'), 'plain-ascii 123.45');
  });

  it('writes non-ASCII text as UTF-8, escaped after the first non-ASCII character too', () => {
    assert.equal(text('Zoë\tMüller\\€😀'), 'Zoë\\tMüller\\\\€😀');
    assert.deepEqual([...Buffer.from(text('é'))], [0xc3, 0xa9]);
  });

  it('grows its buffer past the first capacity without losing what was written', () => {
    const long = 'x'.repeat(10_000);
    assert.equal(text('ab', long, 'cd'), `ab${long}cd`);
  });

  it('renders store rows: partner, columns in order, \\N for absent values, exact decimals, UTC timestamps, lineage', () => {
    const writer = new CopyTextWriter(16);
    writeCopyRows(writer, entityTable('igaming', 'activity'), 'p\t1', [
      { date: '2026-11-02', customer_id: 'c1', game_type: 'slots', currency: 'EUR', bets_count: 3, total_bets: 1e-7, wins: 12.5, ggr: -0.25 },
      { date: '2026-11-03', customer_id: 'c\n2', game_type: 'poker', currency: 'USD', ngr: 100 },
    ], 'run-1', '2026-11-22T10:00:00.000000Z');
    const lines = writer.bytes().toString('utf8').split('\n');
    assert.deepEqual(lines, [
      'p\\t1\t2026-11-02\tc1\tslots\tEUR\t3\t0.0000001\t12.5\t-0.25\t\\N\trun-1\t2026-11-22T10:00:00.000000Z',
      'p\\t1\t2026-11-03\tc\\n2\tpoker\tUSD\t\\N\t\\N\t\\N\t\\N\t100\trun-1\t2026-11-22T10:00:00.000000Z',
      '',
    ]);
    const customers = new CopyTextWriter();
    writeCopyRows(customers, entityTable('igaming', 'customers'), 'p', [{ customer_id: 'c1', signup_date: '2026-11-01T23:59:59.9999999-01:30', affiliate_id: 'a' }], 'r', 't');
    assert.match(customers.bytes().toString('utf8'), /^p\tc1\t2026-11-02T01:29:59\.999999Z\ta\t/);
  });

  it('reuses a recycled buffer big enough for the next writer, and never keeps a slice of a shared pool', () => {
    const first = new CopyTextWriter(300_000, true);
    assert.ok(first.storage.length >= 300_000);
    first.text('abc');
    recycleCopyBuffer(first.storage);
    const second = new CopyTextWriter(200_000, true);
    assert.equal(second.storage, first.storage);
    assert.equal(second.length, 0);
    second.text('xy');
    assert.equal(second.bytes().toString('utf8'), 'xy');
    recycleCopyBuffer(second.storage);
    // The pool is the process's: a test loading into PostgreSQL before this one may have left a spare
    // buffer larger than asked for, and `first` may be it. Ask for more than `first` holds.
    const bigger = new CopyTextWriter(first.storage.length + 1, true);
    assert.notEqual(bigger.storage, first.storage, 'a spare buffer too small is not handed out');
    assert.notEqual(new CopyTextWriter(300_000).storage, first.storage, 'only writers asking for reuse get spare buffers');
    assert.equal(new CopyTextWriter(300_000, true).storage, first.storage);
    const small = Buffer.allocUnsafe(16); // from Node's shared pool: a view into a larger ArrayBuffer
    recycleCopyBuffer(small);
    assert.notEqual(new CopyTextWriter(8, true).storage, small);
  });
});
