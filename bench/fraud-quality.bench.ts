/**
 * Fraud detection quality: clean generated traffic (the sandbox's generators) plus labelled
 * instances of every rule (src/sandbox/fraud-patterns.ts), loaded through the real Loader, then
 * judged against the labels. Prints per rule the injected instances, those detected (every
 * labelled customer covered by a flag of that rule) and the recall, and the clean customers
 * flagged (false flags) per rule and in all, as a share of the clean customers.
 *
 *   node dist/bench/fraud-quality.bench.js [--customers 100000] [--prop-customers 10000]
 *     [--per-rule 20] [--mode scan|hooks] [--store URL] [--seed 1]
 *
 * --mode hooks: every batch through the Loader with the after-load hooks (fraud detection in the
 *   load transaction, as in production). --mode scan (default): the Loader without hooks, then
 *   `fraud scan` over the whole history (the same rules; loading 100,000 customers with detection
 *   per batch is slower). Rules from config/fraud.yaml (partners sandbox-casino, sandbox-prop).
 * The store is a fresh SQLite file in the temporary directory unless --store names one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLoadHooks } from '../jobs/load-hooks.js';
import { scanFraud } from '../jobs/fraud.js';
import { loadFraudConfig } from '../src/fraud/config.js';
import { silentLogger } from '../src/log.js';
import { Loader } from '../src/pipeline/load.js';
import { PATTERN_RULES, generateFraudPatterns, type InjectedPattern } from '../src/sandbox/fraud-patterns.js';
import { generationContext, type GeneratedCustomer } from '../src/sandbox/generate-common.js';
import { generateIgamingCustomer } from '../src/sandbox/generate-igaming.js';
import { generatePropTradingCustomer } from '../src/sandbox/generate-prop-trading.js';
import { parseDay } from '../src/sandbox/instant.js';
import { createSpecValidator } from '../src/spec/validator.js';
import { openStore, type Store } from '../src/store/store.js';
import type { Entity, SpecRecord, Variant } from '../src/types.js';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : fallback;
};
const CUSTOMERS = Number(arg('--customers', '100000'));
const PROP_CUSTOMERS = Number(arg('--prop-customers', '10000'));
const PER_RULE = Number(arg('--per-rule', '20'));
const MODE = arg('--mode', 'scan');
const SEED = Number(arg('--seed', '1'));
const FROM = '2026-10-01';
const TO = '2026-10-31';
const CHUNK = 1000;
const PARTNER: Record<Variant, string> = { igaming: 'sandbox-casino', 'prop-trading': 'sandbox-prop' };
if (!['scan', 'hooks'].includes(MODE)) throw new Error(`--mode scan|hooks, got ${MODE}`);

const { config, errors } = await loadFraudConfig(join(process.cwd(), 'config', 'fraud.yaml'));
if (!config) throw new Error(`config/fraud.yaml: ${JSON.stringify(errors)}`);

const dir = mkdtempSync(join(tmpdir(), 'fraud-quality-'));
const url = arg('--store', `sqlite:${join(dir, 'store.sqlite')}`);
const clockAt = new Date('2026-11-01T12:00:00.000Z');
const store: Store = await openStore({ url, clock: () => clockAt });
const hooks = MODE === 'hooks' ? createLoadHooks(store, { plans: [], logger: silentLogger(), fraud: config }) : {};
const loader = new Loader({ store, validator: createSpecValidator(), ...hooks });
const ctx = generationContext(SEED, parseDay(FROM) as number, parseDay(TO) as number);
let run = 0;

async function load(variant: Variant, entity: Entity, records: SpecRecord[]): Promise<void> {
  for (let i = 0; i < records.length; i += CHUNK) {
    const part = records.slice(i, i + CHUNK).map((value, k) => ({ position: k + 1, value }));
    const r = await loader.load({ partner: PARTNER[variant], variant, entity, runId: `bench-${++run}`, records: part });
    if (r.rejected > 0) throw new Error(`${r.rejected} ${entity} rejected: ${JSON.stringify(r.rejects.slice(0, 2))}`);
  }
}

/** Loads customers in chunks: their records, then their transactions, then their activity by date. */
async function loadCustomers(variant: Variant, list: GeneratedCustomer[]): Promise<void> {
  await load(variant, 'customers', list.map((g) => g.customer));
  await load(variant, 'transactions', list.flatMap((g) => g.transactions).map(({ updated_at: _u, ...t }) => t)
    .sort((a, b) => String(a.transaction_date).localeCompare(String(b.transaction_date))));
  await load(variant, 'activity', list.flatMap((g) => g.activity).sort((a, b) => String(a.date).localeCompare(String(b.date))));
}

const started = performance.now();
const counts: Record<Variant, number> = { igaming: CUSTOMERS, 'prop-trading': PROP_CUSTOMERS };
const generators = { igaming: generateIgamingCustomer, 'prop-trading': generatePropTradingCustomer };
const sets = generateFraudPatterns(ctx, PER_RULE);
for (const variant of ['igaming', 'prop-trading'] as const) {
  for (let start = 0; start < counts[variant]; start += CHUNK) {
    const list: GeneratedCustomer[] = [];
    for (let i = start; i < Math.min(counts[variant], start + CHUNK); i++) list.push(generators[variant](ctx, i));
    await loadCustomers(variant, list);
  }
  await loadCustomers(variant, sets.find((s) => s.variant === variant)?.generated ?? []);
}
const loadedMs = performance.now() - started;
let scanMs = 0;
if (MODE === 'scan') {
  const t0 = performance.now();
  await scanFraud(store, config);
  scanMs = performance.now() - t0;
}

// Judge the flags against the labels.
const patterns: InjectedPattern[] = sets.flatMap((s) => s.patterns);
const rows: { partner_id: string; rule: string; instance_key: string; customer_id: string }[] = await store.knex('fraud_flags as f')
  .join('fraud_flag_customers as c', 'c.flag_id', 'f.id').select('f.partner_id', 'f.rule', 'f.instance_key', 'c.customer_id');
const flagCount = Number(((await store.knex('fraud_flags').count({ n: '*' })) as { n: unknown }[])[0]?.n);
const flagged = new Map<string, Set<string>>();
for (const r of rows) {
  const k = `${r.partner_id}\u0000${r.rule}`;
  flagged.set(k, (flagged.get(k) ?? new Set()).add(r.customer_id));
}
const patternCustomers = new Set(patterns.flatMap((p) => p.customers));
const isClean = (id: string): boolean => !id.startsWith('fp-');
const lines: string[] = [];
const pad = (v: unknown, n: number) => String(v).padStart(n);
const share = (n: number, of: number) => (of === 0 ? '-' : `${((n / of) * 100).toFixed(3)}%`);
lines.push(`${'rule'.padEnd(20)} ${'variant'.padEnd(13)} ${pad('injected', 8)} ${pad('detected', 8)} ${pad('recall', 7)} ${pad('false-flagged clean customers', 30)} ${pad('share', 8)}`);
const misses: string[] = [];
const allFalse = new Map<Variant, Set<string>>([['igaming', new Set()], ['prop-trading', new Set()]]);
for (const variant of ['igaming', 'prop-trading'] as const) {
  for (const rule of PATTERN_RULES[variant]) {
    const covered = flagged.get(`${PARTNER[variant]}\u0000${rule}`) ?? new Set<string>();
    const injected = patterns.filter((p) => p.rule === rule);
    const detected = injected.filter((p) => p.customers.every((c) => covered.has(c)));
    for (const p of injected) if (!detected.includes(p)) misses.push(`  ${rule} ${p.instance}: flagged ${p.customers.filter((c) => covered.has(c)).length} of ${p.customers.length} labelled customers (${p.customers.slice(0, 4).join(', ')}${p.customers.length > 4 ? ', …' : ''})`);
    const falses = [...covered].filter(isClean);
    for (const c of falses) allFalse.get(variant)?.add(c);
    lines.push(`${rule.padEnd(20)} ${variant.padEnd(13)} ${pad(injected.length, 8)} ${pad(detected.length, 8)} ${pad(injected.length ? (detected.length / injected.length).toFixed(3) : '-', 7)} ${pad(falses.length, 30)} ${pad(share(falses.length, counts[variant]), 8)}`);
  }
}
for (const variant of ['igaming', 'prop-trading'] as const) {
  const n = allFalse.get(variant)?.size ?? 0;
  lines.push(`${'any rule'.padEnd(20)} ${variant.padEnd(13)} ${pad('', 8)} ${pad('', 8)} ${pad('', 7)} ${pad(n, 30)} ${pad(share(n, counts[variant]), 8)}`);
}
// What the false flags are made of: identity keys by kind, spike days.
const clean = rows.filter((r) => isClean(r.customer_id));
const byKind = new Map<string, Set<string>>();
for (const r of clean.filter((x) => x.rule === 'duplicate_identity')) {
  const kind = (JSON.parse(r.instance_key) as string[])[0] ?? '?';
  byKind.set(kind, (byKind.get(kind) ?? new Set()).add(r.customer_id));
}
const details: string[] = [];
for (const [kind, set] of [...byKind].sort()) details.push(`  duplicate_identity by ${kind}: ${set.size} clean customers (${share(set.size, counts.igaming)})`);
const nameOnly = new Set(clean.filter((r) => r.rule === 'duplicate_identity' && (JSON.parse(r.instance_key) as string[])[0] === 'name').map((r) => r.customer_id));
const otherwise = new Set(clean.filter((r) => r.partner_id === PARTNER.igaming && !(r.rule === 'duplicate_identity' && (JSON.parse(r.instance_key) as string[])[0] === 'name')).map((r) => r.customer_id));
if (nameOnly.size > 0) details.push(`  igaming, any rule but name-key identity flags: ${otherwise.size} clean customers (${share(otherwise.size, counts.igaming)})`);
const spikeDays = new Map<string, number>();
for (const r of clean.filter((x) => x.rule === 'ftd_spike')) {
  const day = (JSON.parse(r.instance_key) as string[])[1] ?? '?';
  spikeDays.set(day, (spikeDays.get(day) ?? 0) + 1);
}
if (spikeDays.size > 0) details.push(`  ftd_spike clean customers by flagged day: ${[...spikeDays].sort().map(([d, n]) => `${d}: ${n}`).join(', ')}`);
console.log(`fraud detection quality: ${CUSTOMERS} clean iGaming customers, ${PROP_CUSTOMERS} clean prop traders (${FROM}..${TO}, seed ${SEED}), ${PER_RULE} injected instances per rule (${patternCustomers.size} pattern customers); mode ${MODE}; store ${store.description}`);
console.log(`load ${(loadedMs / 1000).toFixed(1)} s${MODE === 'scan' ? `, fraud scan ${(scanMs / 1000).toFixed(1)} s` : ' (detection in every load transaction)'}; ${flagCount} flags`);
console.log(lines.join('\n'));
if (details.length > 0) console.log(`false flags in detail:\n${details.join('\n')}`);
if (misses.length > 0) console.log(`missed instances:\n${misses.slice(0, 40).join('\n')}${misses.length > 40 ? `\n  … ${misses.length - 40} more` : ''}`);
await store.close();
rmSync(dir, { recursive: true, force: true });
