/**
 * Fraud detection quality on labelled populations (src/sandbox/fraud-shapes.ts): per seed, clean
 * customers in the shapes of real platforms (with the look-alikes that are not fraud) and every
 * rule's pattern planted at three sizes, loaded through the real Loader with the commission job on
 * and the FX rates of the range loaded (non-USD players are judged), then `fraud scan` with
 * config/fraud.yaml and the commission evaluation with config/commissions.yaml, so the flags hold
 * what they would hold in production. Judged against the labels, over many seeds:
 *
 * - recall per rule and size: planted instances whose every customer a flag of the rule covers;
 * - precision per rule: the customers it flagged that are not clean (a planted customer of
 *   another pattern is fraud all the same) ÷ all it flagged;
 * - clean customers flagged, per rule and by any rule, as a share of the clean customers of the
 *   variant: the mean over the seeds and the worst seed;
 * - the commission held for review from clean customers (USD, withheld + waiting of their review
 *   holds): the mean and the worst seed.
 *
 *   node dist/bench/fraud-quality.bench.js [--seeds 20] [--first-seed 1] [--customers 10000]
 *     [--prop-customers 500] [--repeats 2] [--config DIR] [--json FILE] [--sweep 'RULE.KEY=V1,V2,...;RULE.KEY=...']
 *
 * --sweep: the points of a curve. Each seed is loaded once, then scanned and evaluated with
 * config/fraud.yaml as it is and again with each key at each value in turn (one change at a time),
 * and the figures are printed per point: how the defaults were chosen (docs/fraud.md, Measured
 * quality).
 *
 * Each seed has its own SQLite store in the temporary directory, removed at the end.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLoadHooks } from '../jobs/load-hooks.js';
import { evaluatePartner } from '../jobs/commission.js';
import { scanFraud } from '../jobs/fraud.js';
import { loadPlans } from '../src/commission/load-plans.js';
import { loadFraudConfig, type FraudConfig } from '../src/fraud/config.js';
import { money } from '../src/kernel/money.js';
import { silentLogger } from '../src/log.js';
import { Loader } from '../src/pipeline/load.js';
import { PLANTED_RULES, SIZES, fxRates, shapedPopulation, type CleanShape, type ShapedPopulation, type Size } from '../src/sandbox/fraud-shapes.js';
import { generationContext, type GeneratedCustomer } from '../src/sandbox/generate-common.js';
import { parseDay } from '../src/sandbox/instant.js';
import { createSpecValidator } from '../src/spec/validator.js';
import { saveRates } from '../src/store/fx-rates.js';
import { openStore, type Store } from '../src/store/store.js';
import type { Entity, SpecRecord, Variant } from '../src/types.js';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : fallback;
};
const SEEDS = Number(arg('--seeds', '20'));
const FIRST_SEED = Number(arg('--first-seed', '1'));
const CUSTOMERS = Number(arg('--customers', '10000'));
const PROP_CUSTOMERS = Number(arg('--prop-customers', '500'));
const REPEATS = Number(arg('--repeats', '2'));
const CONFIG = arg('--config', join(process.cwd(), 'config'));
const JSON_OUT = arg('--json', '');
const SWEEP = arg('--sweep', '');
const FROM = '2026-10-01';
const TO = '2026-10-31';
const CHUNK = 1000;
const PARTNER: Record<Variant, string> = { igaming: 'sandbox-casino', 'prop-trading': 'sandbox-prop' };
const VARIANTS = ['igaming', 'prop-trading'] as const;

const { config, errors } = await loadFraudConfig(join(CONFIG, 'fraud.yaml'));
if (!config) throw new Error(`${CONFIG}/fraud.yaml: ${JSON.stringify(errors)}`);
const loaded = await loadPlans(join(CONFIG, 'commissions.yaml'));
if (loaded.errors.length > 0) throw new Error(`${CONFIG}/commissions.yaml: ${JSON.stringify(loaded.errors)}`);
const plans = loaded.plans;

/** The configurations measured: the file as it is, or one per value of the swept key. */
const points: { label: string; config: FraudConfig }[] = [{ label: 'config/fraud.yaml', config }];
for (const sweep of SWEEP === '' ? [] : SWEEP.split(';')) {
  const m = /^([a-z_]+)\.([a-z_]+)=(.+)$/.exec(sweep.trim());
  if (!m) throw new Error(`--sweep RULE.KEY=V1,V2,...[;RULE.KEY=...], got ${sweep}`);
  const [, rule, key, values] = m as unknown as [string, string, string, string];
  const base = config.rules as unknown as Record<string, Record<string, unknown>>;
  if (!(key in (base[rule] ?? {}))) throw new Error(`--sweep: no key ${key} of rule ${rule}`);
  for (const v of values.split(',')) {
    const rules = structuredClone(base);
    rules[rule]![key] = v === 'true' ? true : v === 'false' ? false : Number(v);
    points.push({ label: `${rule}.${key}=${v}`, config: { ...config, rules: rules as unknown as FraudConfig['rules'] } });
  }
}

/** What one seed measured. */
interface SeedResult {
  seed: number;
  /** rule → size → [planted, detected] */
  recall: Record<string, Record<Size, [number, number]>>;
  /** rule → customers flagged, and of them the clean ones */
  flagged: Record<string, { all: number; clean: number }>;
  /** variant → clean customers flagged by any rule, clean customers */
  anyClean: Record<Variant, [number, number]>;
  /** clean customers flagged, by shape */
  byShape: Record<string, number>;
  /** USD held for review from clean customers, in all and per rule of the holding flags */
  heldClean: number;
  /** USD held for review from planted customers: the commission the flags stop */
  heldPlanted: number;
  heldCleanByRule: Record<string, number>;
  misses: string[];
  seconds: number;
}

async function load(loader: Loader, variant: Variant, entity: Entity, records: SpecRecord[], runs: { n: number }): Promise<void> {
  for (let i = 0; i < records.length; i += CHUNK) {
    const part = records.slice(i, i + CHUNK).map((value, k) => ({ position: k + 1, value }));
    const r = await loader.load({ partner: PARTNER[variant], variant, entity, runId: `quality-${++runs.n}`, records: part });
    if (r.rejected > 0) throw new Error(`${r.rejected} ${entity} rejected: ${JSON.stringify(r.rejects.slice(0, 2))}`);
  }
}

async function loadPopulation(loader: Loader, variant: Variant, list: GeneratedCustomer[], runs: { n: number }): Promise<void> {
  const byDate = (field: string) => (a: SpecRecord, b: SpecRecord) => String(a[field]).localeCompare(String(b[field]));
  await load(loader, variant, 'customers', list.map((g) => g.customer), runs);
  await load(loader, variant, 'transactions', list.flatMap((g) => g.transactions).map(({ updated_at: _u, ...t }) => t).sort(byDate('transaction_date')), runs);
  await load(loader, variant, 'activity', list.flatMap((g) => g.activity).sort(byDate('date')), runs);
}

/** One seed's population loaded once, then each point scanned, evaluated and judged. */
async function runSeed(seed: number): Promise<SeedResult[]> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'fraud-quality-'));
  const clockAt = new Date('2026-11-01T12:00:00.000Z');
  const store: Store = await openStore({ url: `sqlite:${join(dir, 'store.sqlite')}`, clock: () => clockAt });
  try {
    const ctx = generationContext(seed, parseDay(FROM) as number, parseDay(TO) as number);
    await store.transaction((trx) => saveRates(trx, fxRates(ctx).map((r) => ({ currency: r.currency, date: r.date, rate: money(r.rate) })), 'fraud-quality', store.now()));
    const populations: ShapedPopulation[] = shapedPopulation(ctx, { customers: CUSTOMERS, propCustomers: PROP_CUSTOMERS, repeats: REPEATS });
    const logger = silentLogger();
    // The commission job on (no fraud rules while loading): the scan's flags then hold what was booked and what waits.
    const loader = new Loader({ store, validator: createSpecValidator(), ...createLoadHooks(store, { plans, logger }) });
    const runs = { n: 0 };
    for (const p of populations) await loadPopulation(loader, p.variant, p.generated, runs);
    const loadedAt = performance.now();
    const out: SeedResult[] = [];
    for (const point of points) {
      const t0 = performance.now();
      await scanFraud(store, point.config);
      for (const variant of VARIANTS) await evaluatePartner(store, plans, PARTNER[variant], variant, `quality-${seed}-${out.length}`, logger);
      const r = await judge(store, seed, populations);
      r.seconds = (performance.now() - t0 + (out.length === 0 ? loadedAt - started : 0)) / 1000;
      out.push(r);
    }
    return out;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The flags and review holds in the store judged against the labels. */
async function judge(store: Store, seed: number, populations: ShapedPopulation[]): Promise<SeedResult> {
  const rows: { partner_id: string; rule: string; customer_id: string }[] = await store.knex('fraud_flags as f')
    .join('fraud_flag_customers as c', 'c.flag_id', 'f.id').select('f.partner_id', 'f.rule', 'c.customer_id');
  const covered = new Map<string, Set<string>>();
  for (const r of rows) {
    const k = `${r.partner_id}\u0000${r.rule}`;
    covered.set(k, (covered.get(k) ?? new Set()).add(r.customer_id));
  }
  const result: SeedResult = { seed, recall: {}, flagged: {}, anyClean: { igaming: [0, 0], 'prop-trading': [0, 0] }, byShape: {}, heldClean: 0, heldPlanted: 0, heldCleanByRule: {}, misses: [], seconds: 0 };
  const cleanOf = new Map<string, CleanShape>();
  for (const p of populations) {
    for (const [c, shape] of p.clean) cleanOf.set(`${PARTNER[p.variant]}\u0000${c}`, shape);
    const anyClean = new Set<string>();
    for (const rule of PLANTED_RULES[p.variant]) {
      const set = covered.get(`${PARTNER[p.variant]}\u0000${rule}`) ?? new Set<string>();
      const bySize = Object.fromEntries(SIZES.map((s) => [s, [0, 0]])) as Record<Size, [number, number]>;
      for (const planted of p.planted.filter((x) => x.rule === rule)) {
        bySize[planted.size][0] += 1;
        if (planted.customers.every((c) => set.has(c))) bySize[planted.size][1] += 1;
        else result.misses.push(`seed ${seed} ${planted.instance}: ${planted.customers.filter((c) => set.has(c)).length} of ${planted.customers.length} covered (${planted.customers.slice(0, 3).join(', ')}${planted.customers.length > 3 ? ', …' : ''})`);
      }
      result.recall[rule] = bySize;
      const clean = [...set].filter((c) => p.clean.has(c));
      for (const c of clean) {
        anyClean.add(c);
        const shape = p.clean.get(c) as string;
        result.byShape[`${rule} ${shape}`] = (result.byShape[`${rule} ${shape}`] ?? 0) + 1;
      }
      result.flagged[rule] = { all: set.size, clean: clean.length };
    }
    result.anyClean[p.variant] = [anyClean.size, p.clean.size];
  }
  const holds: { partner_id: string; customer_id: string | null; flags: unknown; withheld_usd: unknown; waiting_usd: unknown }[] = await store.knex('commission_review_holds')
    .select('partner_id', 'customer_id', 'flags', 'withheld_usd', 'waiting_usd');
  for (const h of holds) {
    if (h.customer_id === null) continue;
    const usd = Number(h.withheld_usd) + (h.waiting_usd === null ? 0 : Number(h.waiting_usd));
    if (!cleanOf.has(`${h.partner_id}\u0000${h.customer_id}`)) {
      result.heldPlanted += usd;
      continue;
    }
    result.heldClean += usd;
    const flags = (typeof h.flags === 'string' ? JSON.parse(h.flags) : h.flags) as { rule: string }[];
    for (const rule of new Set(flags.map((f) => f.rule))) result.heldCleanByRule[rule] = (result.heldCleanByRule[rule] ?? 0) + usd;
  }
  return result;
}

const perPoint: SeedResult[][] = points.map(() => []);
const began = performance.now();
for (let s = FIRST_SEED; s < FIRST_SEED + SEEDS; s++) {
  const rs = await runSeed(s);
  rs.forEach((r, k) => perPoint[k]!.push(r));
  const r = rs[0]!;
  const share = (v: Variant) => (r.anyClean[v][1] === 0 ? 0 : (100 * r.anyClean[v][0]) / r.anyClean[v][1]);
  const planted = Object.values(r.recall).flatMap((x) => Object.values(x)).reduce((n, [p]) => n + p, 0);
  const found = Object.values(r.recall).flatMap((x) => Object.values(x)).reduce((n, [, d]) => n + d, 0);
  console.log(`seed ${s}: ${found}/${planted} planted found; clean flagged iGaming ${r.anyClean.igaming[0]}/${r.anyClean.igaming[1]} (${share('igaming').toFixed(3)}%), prop ${r.anyClean['prop-trading'][0]}/${r.anyClean['prop-trading'][1]} (${share('prop-trading').toFixed(3)}%); held from clean ${r.heldClean.toFixed(2)} USD (from planted ${r.heldPlanted.toFixed(2)}); ${r.seconds.toFixed(1)} s`);
}

const pct = (x: number) => `${(100 * x).toFixed(3)}%`;
const pad = (v: unknown, n: number) => String(v).padStart(n);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const worst = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), 0);

/** Prints one point's figures over the seeds; its summary for --json. */
function report(label: string, results: SeedResult[]): Record<string, unknown> {
  console.log(`\n${label}: fraud detection quality, ${SEEDS} seeds (${FIRST_SEED}..${FIRST_SEED + SEEDS - 1}), ${CUSTOMERS} clean iGaming customers and ${PROP_CUSTOMERS} clean traders a seed (${FROM}..${TO}), FX rates loaded, ${REPEATS} planted instances of every rule at each size a seed; ${((performance.now() - began) / 1000).toFixed(0)} s`);
  const lines: string[] = [];
  lines.push(`${'rule'.padEnd(19)} ${pad('recall smallest', 16)} ${pad('medium', 10)} ${pad('large', 10)} ${pad('precision', 10)} ${pad('clean flagged mean', 19)} ${pad('worst seed', 11)} ${pad('held from clean (USD) mean', 27)} ${pad('worst', 9)}`);
  const summary: Record<string, unknown> = {};
  for (const variant of VARIANTS) {
    for (const rule of PLANTED_RULES[variant]) {
      const rec = (size: Size) => { const p = results.reduce((n, r) => n + (r.recall[rule]?.[size]?.[0] ?? 0), 0); const d = results.reduce((n, r) => n + (r.recall[rule]?.[size]?.[1] ?? 0), 0); return { p, d, text: `${p === 0 ? '-' : (d / p).toFixed(3)} (${d}/${p})` }; };
      const all = results.reduce((n, r) => n + (r.flagged[rule]?.all ?? 0), 0);
      const cleanAll = results.reduce((n, r) => n + (r.flagged[rule]?.clean ?? 0), 0);
      const shares = results.map((r) => (r.flagged[rule]?.clean ?? 0) / Math.max(1, r.anyClean[variant][1]));
      const held = results.map((r) => r.heldCleanByRule[rule] ?? 0);
      const [s, m, l] = SIZES.map(rec) as [ReturnType<typeof rec>, ReturnType<typeof rec>, ReturnType<typeof rec>];
      lines.push(`${rule.padEnd(19)} ${pad(s.text, 16)} ${pad(m.text, 10)} ${pad(l.text, 10)} ${pad(all === 0 ? '-' : ((all - cleanAll) / all).toFixed(3), 10)} ${pad(pct(mean(shares)), 19)} ${pad(pct(worst(shares)), 11)} ${pad(mean(held).toFixed(2), 27)} ${pad(worst(held).toFixed(2), 9)}`);
      summary[rule] = { variant, recall: { smallest: s, medium: m, large: l }, precision: all === 0 ? null : (all - cleanAll) / all, flagged: all, clean_flagged: cleanAll, clean_share_mean: mean(shares), clean_share_worst: worst(shares), held_clean_usd_mean: mean(held), held_clean_usd_worst: worst(held) };
    }
  }
  for (const variant of VARIANTS) {
    const shares = results.map((r) => r.anyClean[variant][0] / Math.max(1, r.anyClean[variant][1]));
    const worstSeed = results[shares.indexOf(worst(shares))]?.seed;
    lines.push(`${`any rule, ${variant}`.padEnd(19)} ${pad('', 16)} ${pad('', 10)} ${pad('', 10)} ${pad('', 10)} ${pad(pct(mean(shares)), 19)} ${pad(`${pct(worst(shares))}`, 11)} (worst: seed ${worstSeed})`);
    summary[`any_${variant}`] = { clean_share_mean: mean(shares), clean_share_worst: worst(shares), worst_seed: worstSeed };
  }
  summary.held_clean_usd = { mean: mean(results.map((r) => r.heldClean)), worst: worst(results.map((r) => r.heldClean)) };
  const heldAll = results.map((r) => r.heldClean);
  lines.push(`commission held for review from clean customers (both partners): mean ${mean(heldAll).toFixed(2)} USD a seed, worst ${worst(heldAll).toFixed(2)} (seed ${results[heldAll.indexOf(worst(heldAll))]?.seed}), ${heldAll.reduce((a, b) => a + b, 0).toFixed(2)} over the ${results.length} seeds`);
  console.log(lines.join('\n'));
  const shapes = new Map<string, number>();
  for (const r of results) for (const [k, n] of Object.entries(r.byShape)) shapes.set(k, (shapes.get(k) ?? 0) + n);
  if (shapes.size > 0) console.log(`clean customers flagged, by rule and shape (all seeds): ${[...shapes].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(', ')}`);
  const misses = results.flatMap((r) => r.misses);
  if (misses.length > 0) console.log(`missed planted instances:\n  ${misses.slice(0, 30).join('\n  ')}${misses.length > 30 ? `\n  … ${misses.length - 30} more` : ''}`);
  return { point: label, summary, per_seed: results };
}
const reports = points.map((p, k) => report(p.label, perPoint[k]!));
if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify({ seeds: SEEDS, first_seed: FIRST_SEED, customers: CUSTOMERS, prop_customers: PROP_CUSTOMERS, repeats: REPEATS, points: reports }, null, 2));
