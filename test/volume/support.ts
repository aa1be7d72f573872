/**
 * A generated month of one iGaming partner (the sandbox's generators), loaded with every
 * after-load job as shipped (config/commissions.yaml, config/fraud.yaml), and what a user checks
 * afterwards: the affiliate report against the truth computed here from the generated records
 * alone (plain decimal arithmetic, none of the service's code), the ledger against
 * `commissions recompute`, and the fraud job's flags against the clean-traffic rate of
 * docs/fraud.md.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Decimal } from 'decimal.js';
import type { SandboxData } from '../../src/sandbox/data.js';
import { USD_RATE } from '../../src/sandbox/generate-common.js';
import type { Store } from '../../src/store/store.js';
import type { SpecRecord } from '../../src/types.js';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../support/cli.js';
import { SANDBOX_SECRET } from '../support/sandbox.js';

export const PARTNER = 'sandbox-casino';
/** At least 5,000 customers signing up over one month (docs/fraud.md measures its rate on the same generator). */
export const MONTH = { seed: 1, customers: 5000, from: '2026-10-01', to: '2026-10-31' } as const;
/** The sandbox's clock: the morning after the month, so every mutation of the month has happened. */
export const DATA_CLOCK = (): Date => new Date('2026-11-01T12:00:00.000Z');
/** docs/fraud.md: false flags of at most 0.3% of clean customers (issue target on the worst seed; this month flags none). */
export const CLEAN_FLAG_RATE = 0.003;

const D = Decimal.clone({ precision: 60 });
type Dec = InstanceType<typeof D>;

/** The report's figures, summed over every row of the partner. */
export interface Figures {
  ftd_count: number;
  ftd_usd: string;
  deposit_count: number;
  deposits_usd: string;
  bets_usd: string;
  ggr_usd: string;
  unconverted: number;
}

const rate = (currency: string): Dec => new D(USD_RATE[currency] ?? Number.NaN);

/** A transaction's USD amount as docs/reports.md defines it: amount_usd when sent, else the day's rate (the file `rates` writes). */
function txUsd(t: Readonly<SpecRecord>): Dec {
  if (typeof t.amount_usd === 'number') return new D(t.amount_usd);
  return new D(t.amount_currency as number).times(t.currency === 'USD' ? 1 : rate(String(t.currency)));
}

/** A date-time as a sortable UTC text with six fraction digits. */
function instant(text: string): string {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z$/.exec(text);
  if (m) return `${m[1]}.${(m[2] ?? '').padEnd(6, '0')}`;
  const ms = Date.parse(text);
  assert.ok(!Number.isNaN(ms), `generated date-time ${text}`);
  return `${new Date(ms).toISOString().slice(0, 19)}.${String(ms % 1000).padStart(3, '0')}000`;
}

/** The truth of the month, from the generated records only. */
export function truth(data: SandboxData): Figures {
  const first = new Map<string, { at: string; id: string; usd: Dec }>();
  let deposits = new D(0);
  let depositCount = 0;
  for (const t of data.transactions('igaming')) {
    if (t.transaction_type !== 'deposit' || t.status !== 'approved') continue;
    const usd = txUsd(t);
    deposits = deposits.plus(usd);
    depositCount += 1;
    const at = instant(String(t.transaction_date));
    const id = String(t.transaction_id);
    const prior = first.get(String(t.customer_id));
    if (!prior || at < prior.at || (at === prior.at && id < prior.id)) first.set(String(t.customer_id), { at, id, usd });
  }
  let bets = new D(0);
  let ggr = new D(0);
  for (const a of data.activity('igaming')) {
    const r = a.currency === 'USD' ? new D(1) : rate(String(a.currency));
    const bet = typeof a.total_bets === 'number' ? new D(a.total_bets) : null;
    const own = typeof a.ggr === 'number' ? new D(a.ggr) : bet !== null && typeof a.wins === 'number' ? bet.minus(a.wins) : new D(0);
    if (bet) bets = bets.plus(bet.times(r));
    ggr = ggr.plus(own.times(r));
  }
  const ftd = [...first.values()].reduce((s, f) => s.plus(f.usd), new D(0));
  return { ftd_count: first.size, ftd_usd: ftd.toFixed(), deposit_count: depositCount, deposits_usd: deposits.toFixed(), bets_usd: bets.toFixed(), ggr_usd: ggr.toFixed(), unconverted: 0 };
}

/** A CSV of the generator's rates for every currency and day of the month, for `fx import`. */
export function ratesCsv(from: string, to: string): string {
  const lines = ['date,currency,rate'];
  for (let day = Date.parse(`${from}T00:00:00Z`); day <= Date.parse(`${to}T00:00:00Z`); day += 86_400_000) {
    for (const [currency, r] of Object.entries(USD_RATE)) if (currency !== 'USD') lines.push(`${new Date(day).toISOString().slice(0, 10)},${currency},${r}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A --config folder holding the shipped commission plans and fraud rules (and `partners/` when given a definition folder's). */
export function shippedConfig(dir = mkdtempSync(join(tmpdir(), 'partner-sync-volume-'))): { dir: string; file(name: string, text: string): string; cleanup(): void } {
  for (const name of ['commissions.yaml', 'fraud.yaml']) copyFileSync(join(packageRoot(), 'config', name), join(dir, name));
  return {
    dir,
    file(name, text) {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export const ndjson = (records: readonly Readonly<SpecRecord>[]): string => `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;

/** Runs the CLI on this store and config; fails the test on a non-zero exit. Resolves with stdout. */
export async function cli(config: string, storeUrl: string, args: readonly string[]): Promise<string> {
  const r = await runCli(['--config', config, '--store', storeUrl, ...args], { env: { SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, LOG_LEVEL: 'error' } });
  assert.equal(r.code, 0, `partner-sync ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr.slice(0, 2000)}`);
  return r.stdout;
}

interface ReportRow { partner: string; ftd_count: number; ftd_usd: string; deposit_count: number; deposits_usd: string; bets_usd: string; ggr_usd: string; unconverted: number; commissions_net_usd: string; commissions_held: number }

/** The checks a user makes after loading the month. */
export async function assertMonth(config: string, storeUrl: string, store: Store, data: SandboxData): Promise<void> {
  // The affiliate report equals the truth.
  const report = JSON.parse(await cli(config, storeUrl, ['report', 'affiliates', '--partner', PARTNER, '--json'])) as { rows: ReportRow[] };
  const sum = (key: keyof ReportRow) => report.rows.reduce((s, r) => s.plus(String(r[key])), new D(0)).toFixed();
  const count = (key: keyof ReportRow) => report.rows.reduce((s, r) => s + Number(r[key]), 0);
  const got: Figures = {
    ftd_count: count('ftd_count'), ftd_usd: sum('ftd_usd'), deposit_count: count('deposit_count'), deposits_usd: sum('deposits_usd'),
    bets_usd: sum('bets_usd'), ggr_usd: sum('ggr_usd'), unconverted: count('unconverted'),
  };
  const want = truth(data);
  assert.ok(want.ftd_count > 2500, `the month has thousands of FTDs (${want.ftd_count})`);
  assert.deepEqual(got, want);

  // The ledger agrees with a recompute from history to the cent, and it is not empty.
  const recompute = JSON.parse(await cli(config, storeUrl, ['commissions', 'recompute', '--partner', PARTNER, '--json'])) as { agree: boolean; differences: number; derived_state_differences: number };
  assert.deepEqual([recompute.agree, recompute.differences, recompute.derived_state_differences], [true, 0, 0], JSON.stringify(recompute).slice(0, 2000));
  assert.ok(new D(sum('commissions_net_usd')).greaterThan(100_000), `commissions booked: ${sum('commissions_net_usd')}`);
  assert.equal(count('commissions_held'), 0, 'every rate is there: nothing held');

  // The fraud job flags no more of the clean customers than docs/fraud.md allows.
  const flags = (await store.knex('fraud_flag_customers as c').join('fraud_flags as f', 'f.id', 'c.flag_id')
    .where('f.partner_id', PARTNER).select('f.rule', 'c.customer_id')) as { rule: string; customer_id: string }[];
  const flagged = new Set(flags.map((f) => f.customer_id)).size;
  const perRule = new Map<string, number>();
  for (const f of flags) perRule.set(f.rule, (perRule.get(f.rule) ?? 0) + 1);
  const byRule = [...perRule].map(([rule, n]) => `${rule} ${n}`).join(', ');
  const customers = data.customers('igaming').length;
  assert.ok(flagged <= CLEAN_FLAG_RATE * customers, `${flagged} of ${customers} clean customers flagged (at most ${CLEAN_FLAG_RATE * 100}%): ${byRule}`);
}
