/**
 * What the partner JSON parser (src/kernel/strict-json.ts) costs on the load path: a 5 MB JSON
 * array of iGaming transactions (a bulk file, a push body past its limit, a big page), parsed by
 * `parsePartnerJson` (JSON.parse and one scan; the strict parse only when the scan finds a reason)
 * and by `parseStrictJson` alone, against JSON.parse in the same run; and the bytes decoded by
 * `decodeUtf8` against Buffer#toString.
 *
 * Run after a build: node dist/bench/json-parse.bench.js [megabytes]
 */
import { parsePartnerJson, parseStrictJson } from '../src/kernel/strict-json.js';
import { decodeUtf8 } from '../src/kernel/utf8.js';

const MEGABYTES = Number(process.argv[2] ?? 5);
const ROUNDS = 10;

const records: unknown[] = [];
let size = 2;
for (let i = 0; size < MEGABYTES * 1024 * 1024; i++) {
  const record = {
    transaction_id: `tx-2026-11-23-${String(i).padStart(8, '0')}`,
    customer_id: `cust-${String(i % 5000).padStart(10, '0')}`,
    transaction_type: 'deposit',
    amount_currency: Math.round(i * 137.31) / 100,
    currency: 'EUR',
    amount_usd: Math.round(i * 151.07) / 100,
    transaction_date: '2026-11-23T10:00:00.123Z',
    status: 'approved',
    last_modified_date: '2026-11-23T10:00:00Z',
  };
  records.push(record);
  size += JSON.stringify(record).length + 1;
}
const text = JSON.stringify(records);
const bytes = Buffer.from(text);

function time(name: string, run: () => unknown): number {
  run();
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const started = performance.now();
    run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  const median = samples[Math.floor(ROUNDS / 2)] as number;
  console.log(`${name.padEnd(34)} ${median.toFixed(1).padStart(8)} ms`);
  return median;
}

console.log(`${records.length} records, ${(bytes.length / 1024 / 1024).toFixed(1)} MB, median of ${ROUNDS}`);
const base = time('JSON.parse (baseline)', () => JSON.parse(text));
const partner = time('parsePartnerJson', () => parsePartnerJson(text));
const strict = time('parseStrictJson', () => parseStrictJson(text));
const toString = time('Buffer#toString (baseline)', () => bytes.toString('utf8'));
const decode = time('decodeUtf8', () => decodeUtf8(bytes));
console.log(`parsePartnerJson ${(partner / base).toFixed(2)}x JSON.parse; parseStrictJson ${(strict / base).toFixed(2)}x; decodeUtf8 ${(decode / toString).toFixed(2)}x toString`);
