/**
 * Throughput of spec validation on the hottest path: iGaming activity records (a daily pull of a
 * large operator is millions of them). Compares `specValidator.validate('igaming', 'activity', r)`
 * with a baseline measured in the same run: the same schema compiled by a bare Ajv2020 +
 * ajv-formats without the two custom keywords, i.e. what the keywords and our wrapper cost.
 *
 * Run after a build: node dist/bench/validate.bench.js [records]
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { AnySchemaObject } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { createSpecValidator } from '../src/spec/validator.js';
import { mulberry32 as random } from '../src/kernel/prng.js';

const RECORDS = Number(process.argv[2] ?? 1_000_000);
const ROUNDS = 5;


const cents = (x: number): number => Math.round(x * 100) / 100;

/** Valid gaming activity with every field: a year of days, 50,000 players, realistic amounts. */
function generate(count: number): Record<string, unknown>[] {
  const rnd = random(20240501);
  const days = Array.from({ length: 365 }, (_unused, i) => new Date(Date.UTC(2024, 0, 1 + i)).toISOString().slice(0, 10));
  const customers = Array.from({ length: 50_000 }, (_unused, i) => `cust-${String(i).padStart(6, '0')}`);
  const games = ['slots', 'live_casino', 'table_games', 'sportsbook', 'poker'];
  const currencies = ['EUR', 'USD', 'GBP', 'CAD', 'BRL', 'SEK'];
  const records: Record<string, unknown>[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const bets = 1 + Math.floor(rnd() * 2000);
    const stake = 0.1 + rnd() * (rnd() < 0.05 ? 500 : 5);
    const totalBets = cents(bets * stake);
    const wins = cents(totalBets * (0.4 + rnd() * 0.9));
    const ggr = cents(totalBets - wins);
    const ngr = cents(ggr - (rnd() < 0.3 ? cents(rnd() * 50) : 0));
    records[i] = {
      date: days[Math.floor(rnd() * days.length)],
      customer_id: customers[Math.floor(rnd() * customers.length)],
      game_type: games[Math.floor(rnd() * games.length)],
      currency: currencies[Math.floor(rnd() * currencies.length)],
      bets_count: bets,
      total_bets: totalBets,
      wins,
      ggr,
      ngr,
    };
  }
  return records;
}

/** The schema without maxSignificantDigits / maxDecimalPlaces, for plain ajv. */
function withoutCustomKeywords(schema: AnySchemaObject): AnySchemaObject {
  const properties: Record<string, AnySchemaObject> = {};
  for (const [name, property] of Object.entries(schema.properties as Record<string, AnySchemaObject>)) {
    const rest = { ...property };
    delete rest.maxSignificantDigits;
    delete rest.maxDecimalPlaces;
    properties[name] = rest;
  }
  return { ...schema, properties };
}

/** Records per second of one pass over all records; also checks that every record passed. */
function pass(records: readonly unknown[], isValid: (record: unknown) => boolean): number {
  let valid = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < records.length; i++) if (isValid(records[i])) valid++;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (valid !== records.length) throw new Error(`benchmark records must all be valid: ${records.length - valid} failed`);
  return records.length / seconds;
}

const generatedAt = process.hrtime.bigint();
const records = generate(RECORDS);
const generateSeconds = Number(process.hrtime.bigint() - generatedAt) / 1e9;

const spec = createSpecValidator();
const schema = JSON.parse(readFileSync(spec.schemaFile('igaming', 'activity'), 'utf8')) as AnySchemaObject;
const bare = new Ajv2020({ allErrors: true, strict: true });
ajvFormats.default(bare, { mode: 'full', formats: ['date', 'date-time', 'email'], keywords: false });
const bareCheck = bare.compile(withoutCustomKeywords(schema));

const candidates: { name: string; isValid: (record: unknown) => boolean }[] = [
  { name: 'baseline: bare ajv, no custom keywords', isValid: (r) => bareCheck(r) === true },
  { name: "specValidator.validate('igaming','activity')", isValid: (r) => spec.validate('igaming', 'activity', r).length === 0 },
];

// Best of several alternating rounds: the first rounds also warm up the JIT.
const best = candidates.map(() => 0);
for (let round = 0; round < ROUNDS; round++) {
  candidates.forEach((candidate, i) => {
    best[i] = Math.max(best[i] ?? 0, pass(records, candidate.isValid));
  });
}

const baseline = best[0] ?? 1;
const rssMb = (process.resourceUsage().maxRSS / 1024).toFixed(0);
console.log(`validate.bench: ${RECORDS.toLocaleString('en')} valid iGaming activity records (generated in ${generateSeconds.toFixed(1)} s), best of ${ROUNDS} rounds, node ${process.version}`);
const rows = candidates.map((candidate, i) => [
  candidate.name,
  Math.round(best[i] ?? 0).toLocaleString('en'),
  ((best[i] ?? 0) / baseline).toFixed(2),
  `${rssMb} MB`,
]);
const header = ['name', 'records/s', 'vs baseline', 'peak RSS'];
const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => (row[c] ?? '').length)));
for (const row of [header, ...rows]) {
  console.log(row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join('  '));
}
